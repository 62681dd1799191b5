package actors

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/changeset"
	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// cliSets hands out the change sets the CLI does (cmd/odin's changeSets):
// a real store, and a workspace watching the project, so that what a
// command changes is recorded.
type cliSets struct{ sets *changeset.Sets }

func (c cliSets) Begin(_ context.Context, _, label string) ChangeTracker { return c.sets.Begin(label) }
func (c cliSets) Commit(ctx context.Context, ct ChangeTracker) error {
	t, _ := ct.(*changeset.Tracker)
	return c.sets.Commit(ctx, t)
}

// withCommandCheckpoints gives the session the real ExecuteCommand,
// bracketed by the command checkpoint as the CLI wires it, and the CLI's
// change sets.
func withCommandCheckpoints(t *testing.T) harnessOpt {
	return func(d *Deps) {
		st := openStore(t)
		withStore(st)(d)
		blobs, err := checkpoint.NewBlobs(filepath.Join(t.TempDir(), "blobs"), 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { blobs.Close() })
		ws, err := checkpoint.NewWorkspace(checkpoint.WorkspaceOptions{Root: d.Root, Blobs: blobs})
		if err != nil {
			t.Fatal(err)
		}
		d.Changes = cliSets{&changeset.Sets{Root: d.Root, Store: st, Session: "s1", Workspace: ws}}
		exec := tools.NewSet(tools.NewExecuteCommand(tools.ExecuteCommandOptions{})).Map(tools.WithCommandCheckpoint, tools.WithRecover)
		d.Tools = d.Tools.Filter(func(i tool.Info) bool { return i.Name != tools.NameExecuteCommand }).With(exec.All()...)
		// Code changes files only through commands here.
		d.Config.Agents = map[string]config.Agent{"code": {Tools: []string{"ReadFile", tools.NameExecuteCommand}}}
	}
}

// bumpByCommand scripts a turn in which the Orchestrator has Code set the
// markers of a.go and b.go to 2 and Code does it with sed, no write tool,
// then reports; fixes are Code's steps after that.
func bumpByCommand(fixes ...llmtest.Step) *llmtest.Script {
	code := append([]llmtest.Step{
		llmtest.Calls(llmtest.Call(tools.NameExecuteCommand, map[string]any{"command": "sed -i 's/marker = 1/marker = 2/' a.go b.go"})),
		{When: "Exit code: 0", ToolCalls: report(map[string]any{"task": "bump", "summary": "bumped the markers"}).ToolCalls},
	}, fixes...)
	return llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(agentCall(map[string]any{"agent": "code", "description": "bump", "prompt": "set the markers to 2"})),
			llmtest.Step{When: "bumped the markers", Text: "the markers are 2"},
		).
		Add("code", code...)
}

// A Code specialist that changes files only through a command (sed -i,
// no write tool) goes through the quality gates like one that edits: the
// files are the turn's changed files, the review's brief carries their
// diff, and the Code report's files_modified has them with their diffs.
func TestCommandOnlyChangeIsGated(t *testing.T) {
	approve := map[string]any{"files_reviewed": []string{"a.go", "b.go"}, "issues": []any{}, "overall_score": 8, "summary": "fine", "approved": true}
	s := bumpByCommand().
		Add("review", report(approve))
	h := newHarness(t, s, withCommandCheckpoints(t))
	for _, name := range []string{"a.go", "b.go"} {
		if err := os.WriteFile(filepath.Join(h.root, name), []byte("package a\n\nvar marker = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.sess.Submit("set the markers to 2", messages.ModeEdit)
	r := h.turn()
	for _, name := range []string{"a.go", "b.go"} {
		if got, _ := os.ReadFile(filepath.Join(h.root, name)); !strings.Contains(string(got), "marker = 2") {
			t.Fatalf("%s = %q: the command did not run", name, got)
		}
	}
	if r.Gates == nil || !r.Gates.Decision.ReviewRequired {
		t.Fatalf("gates = %+v: a command-only change of two files skipped the review", r.Gates)
	}
	if strings.Join(r.Files, ",") != "a.go,b.go" {
		t.Errorf("the turn's files = %v, want [a.go b.go]", r.Files)
	}
	for _, want := range []string{"--- a/a.go", "+++ b/b.go", "+var marker = 2"} {
		if !strings.Contains(r.Diff, want) {
			t.Errorf("the turn's diff lacks %q:\n%s", want, r.Diff)
		}
	}
	reviews := h.client.RequestsFor("review")
	if len(reviews) != 1 {
		t.Fatalf("%d review requests, want 1", len(reviews))
	}
	brief := taskBrief(t, reviews[0])
	for _, want := range []string{"```diff", "--- a/a.go\n+++ b/a.go\n", "--- a/b.go\n+++ b/b.go\n", "-var marker = 1\n+var marker = 2\n"} {
		if !strings.Contains(brief, want) {
			t.Errorf("the review brief lacks %q:\n%s", want, brief)
		}
	}
	// The Code report the Orchestrator got names the files and their
	// changed lines (it leaves their diffs to GitDiff).
	orch := h.client.RequestsFor("orchestrator")
	if len(orch) < 2 {
		t.Fatalf("%d orchestrator requests, want the one after the report", len(orch))
	}
	var reported string
	for _, m := range orch[1].Messages {
		reported += m.Content
	}
	for _, want := range []string{`"files_modified":[{"lines_changed":2,"path":"a.go"},{"lines_changed":2,"path":"b.go"}]`} {
		if !strings.Contains(reported, want) {
			t.Errorf("the Code report lacks %s:\n%s", want, reported)
		}
	}
}

// A fix round made through a command is what the next round's brief
// shows as the diff since the round before.
func TestCommandFixRoundIsTheDiffSince(t *testing.T) {
	reject := map[string]any{"files_reviewed": []string{"a.go"}, "overall_score": 2, "summary": "marker must be 3", "approved": false,
		"issues": []any{map[string]any{"severity": "critical", "file": "a.go", "message": "marker must be 3", "category": "correctness"}}}
	approve := map[string]any{"files_reviewed": []string{"a.go"}, "issues": []any{}, "overall_score": 8, "summary": "fine", "approved": true}
	s := bumpByCommand(
		llmtest.Step{When: "fix round 1", ToolCalls: []llmtest.ToolCall{llmtest.Call(tools.NameExecuteCommand, map[string]any{"command": "sed -i 's/marker = 2/marker = 3/' a.go"})}},
		llmtest.Step{When: "Exit code: 0", ToolCalls: report(map[string]any{"task": "fix", "summary": "marker is 3"}).ToolCalls},
	).
		Add("review", report(reject), report(approve))
	h := newHarness(t, s, withCommandCheckpoints(t))
	for _, name := range []string{"a.go", "b.go"} {
		if err := os.WriteFile(filepath.Join(h.root, name), []byte("package a\n\nvar marker = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.sess.Submit("set the markers to 2", messages.ModeEdit)
	if r := h.turn(); r.Gates == nil || r.Gates.FixRounds != 1 {
		t.Fatalf("gates = %+v, want one fix round", r.Gates)
	}
	if got, _ := os.ReadFile(filepath.Join(h.root, "a.go")); !strings.Contains(string(got), "marker = 3") {
		t.Fatalf("a.go = %q: the fix did not run", got)
	}
	reviews := h.client.RequestsFor("review")
	if len(reviews) != 2 {
		t.Fatalf("%d review requests, want 2", len(reviews))
	}
	second := taskBrief(t, reviews[1])
	if !strings.Contains(second, "--- a/a.go\n+++ b/a.go\n") || !strings.Contains(second, "-var marker = 2\n+var marker = 3\n") {
		t.Errorf("the second review's brief lacks the fix's diff since the first round:\n%s", second)
	}
	if strings.Contains(second, "b/b.go") || strings.Contains(second, "-var marker = 1") {
		t.Errorf("the second review's brief repeats the first round's change:\n%s", second)
	}
}
