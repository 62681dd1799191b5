package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

func TestFirstLineCutsOnCharacterBoundaries(t *testing.T) {
	for _, s := range []string{strings.Repeat("é", 200), strings.Repeat("日本語", 100), strings.Repeat("a", 159) + "€€€"} {
		got := firstLine(s)
		if !utf8.ValidString(got) || strings.ContainsRune(got, utf8.RuneError) {
			t.Errorf("firstLine cut a character in half: %q", got)
		}
		if !strings.HasSuffix(got, "…") {
			t.Errorf("firstLine(%q…) = %q, want a cut with an ellipsis", s[:10], got)
		}
	}
	if got := firstLine("short\nsecond"); got != "short" {
		t.Errorf("firstLine = %q", got)
	}
}

func TestDenialPrintedWholeAndWrapped(t *testing.T) {
	var out, errw bytes.Buffer
	r := newRenderer("text", false, "/p", &out, &errw)
	advice := "Permission denied: `rm -rf build` needs approval and was not approved (rule not-approved). " +
		strings.Repeat("Why it needed approval: a long reason. ", 5) +
		"To allow it without asking, the user can run with --allow 'PATTERN' or run with --yolo. Do not retry the same call; find another way or ask the user."
	r.event(messages.Envelope{Event: messages.ToolFinished{Origin: messages.Origin{Agent: "orchestrator"}, Name: "ExecuteCommand", Denied: true, Output: advice}})
	lines := strings.Split(strings.TrimRight(errw.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("a %d-character denial was not wrapped:\n%s", len(advice), errw.String())
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > 100 {
			t.Errorf("line wider than 100 columns: %q", l)
		}
	}
	if got := strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(errw.String()), "⎿ denied:")), " "); got != strings.Join(strings.Fields(advice), " ") {
		t.Errorf("the denial lost words:\n got %q\nwant %q", got, advice)
	}
}

func TestRendererShowsFailedReviewAndRoundsFromOne(t *testing.T) {
	var out, errw bytes.Buffer
	r := newRenderer("text", false, "/p", &out, &errw)
	r.event(messages.Envelope{Event: messages.AgentFinished{Report: messages.Report{Agent: "review", Status: messages.ReportOK, Summary: "1 major issue",
		Result: []byte(`{"approved":false,"issues":[{"severity":"major"}]}`), Turns: 1}}})
	r.event(messages.Envelope{Event: messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "review", Round: 0, Summary: "1 blocking"}, Done: true}})
	want := "  ✗ review changes requested: 1 major issue (1 call, 0 tokens, 0s)\n  ⚖ review round 1: failed — 1 blocking\n"
	if diff := cmp.Diff(want, errw.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestErrorTextListsNoProviderRemedies(t *testing.T) {
	err := fmt.Errorf("config: model %q: provider %q (%s) has no API key (%s): %w", "gpt-4o", "openai", "https://api.openai.com/v1", "$OPENAI_API_KEY is not set", config.ErrNoProvider)
	got := errorText(err)
	lines := strings.Split(got, "\n")
	if len(lines) < 4 {
		t.Fatalf("not split into readable lines:\n%s", got)
	}
	for _, l := range lines {
		if len(l) > 120 {
			t.Errorf("line too long (%d): %q", len(l), l)
		}
	}
	for _, w := range []string{"OPENAI_API_KEY is not set", "export OPENAI_API_KEY", "OPENAI_BASE_URL", "providers.<name>.base_url"} {
		if !strings.Contains(got, w) {
			t.Errorf("lost %q:\n%s", w, got)
		}
	}
	if got := errorText(errors.New("plain \x1b]52;c;x\x07failure")); got != "odin: plain failure" {
		t.Errorf("errorText = %q", got)
	}
}
