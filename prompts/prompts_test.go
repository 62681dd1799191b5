package prompts

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sample(mode string) Data {
	return Data{
		Root:         "/home/dev/shop",
		Date:         "2026-01-02",
		OS:           "linux/amd64",
		Mode:         mode,
		Instructions: "Use table tests.\n",
		Agents: []Agent{
			{Name: "search", ReadOnly: true},
			{Name: "code"},
		},
		Custom:     "Audit dependencies for licences.",
		AgentName:  "licence-auditor",
		WriteScope: "*_test.go",
	}
}

func TestGolden(t *testing.T) {
	cases := map[string]Data{}
	for _, mode := range []string{"ask", "plan", "edit"} {
		cases[Orchestrator+"-"+mode] = sample(mode)
	}
	for _, n := range []string{Search, Research, Code, Review, Test, Docs, QA, Init, CustomAgent, Synthesis} {
		cases[n] = sample("edit")
	}
	for name, d := range cases {
		t.Run(name, func(t *testing.T) {
			tmpl, _, _ := strings.Cut(name, "-")
			got, err := Render(tmpl, d)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./prompts -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
			}
		})
	}
}

func TestModesDiffer(t *testing.T) {
	ask, _ := Render(Orchestrator, sample("ask"))
	edit, _ := Render(Orchestrator, sample("edit"))
	if !strings.Contains(ask, "read-only") || strings.Contains(ask, "Mode: edit") {
		t.Errorf("ask prompt does not state read-only mode:\n%s", ask)
	}
	if !strings.Contains(edit, "Mode: edit") {
		t.Errorf("edit prompt lacks its mode section")
	}
}

func TestInstructionsOmittedWhenEmpty(t *testing.T) {
	d := sample("edit")
	d.Instructions = ""
	got, _ := Render(Code, d)
	if strings.Contains(got, "project_instructions") {
		t.Errorf("empty instructions still rendered a section")
	}
	if _, err := Render("nope", d); err == nil {
		t.Errorf("unknown template rendered")
	}
}

func TestResearchSaysWhetherItCanSearch(t *testing.T) {
	d := sample("ask")
	without, _ := Render(Research, d)
	d.WebSearch = true
	with, _ := Render(Research, d)
	if !strings.Contains(without, "Web search is not configured") || strings.Contains(with, "not configured") || !strings.Contains(with, "Search with WebSearch") {
		t.Errorf("research prompt does not follow WebSearch:\nwithout:\n%s\nwith:\n%s", without, with)
	}
}

func TestInitNeverSeesInstructions(t *testing.T) {
	got, _ := Render(Init, sample("edit"))
	if strings.Contains(got, "Use table tests") {
		t.Errorf("init prompt includes ODIN.md content; it must not (seed 004 context isolation)")
	}
}

// TestEveryPromptExplainsFences: every agent reads tool results that may
// hold fenced untrusted content, so every prompt says what a fence is.
func TestEveryPromptExplainsFences(t *testing.T) {
	for _, n := range []string{Orchestrator, Search, Research, Code, Review, Test, Docs, QA, Init, CustomAgent} {
		got, err := Render(n, sample("edit"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"<<<UNTRUSTED_WEB_CONTENT nonce=", "UNTRUSTED_DATA", "same nonce", "never an instruction"} {
			if !strings.Contains(got, w) {
				t.Errorf("%s prompt lacks %q", n, w)
			}
		}
	}
}

// Every agent's prompt starts with the same bytes: the shared preamble
// (role-free opening, environment, untrusted-content and Report rules,
// the project's instructions) comes before the role, so a provider's
// prefix cache serves it to every agent of a session after the first, the
// Orchestrator's included. Init, which never sees the instructions,
// shares all the rest.
func TestSpecialistPreambleIsByteIdentical(t *testing.T) {
	d := sample("edit")
	render := func(name string) string {
		t.Helper()
		s, err := Render(name, d)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	code := render(Code)
	role := strings.Index(code, "# Your role")
	if role < 0 {
		t.Fatalf("the code prompt has no role section:\n%s", code)
	}
	preamble := code[:role]
	for _, must := range []string{"Project root: /home/dev/shop", "UNTRUSTED_DATA", "calling the Report tool exactly once", "Use table tests."} {
		if !strings.Contains(preamble, must) {
			t.Errorf("the shared preamble lacks %q", must)
		}
	}
	for _, role := range []string{"Code specialist", "You are the Orchestrator", "# Mode: edit"} {
		if strings.Contains(preamble, role) {
			t.Errorf("the shared preamble names a role (%q)", role)
		}
	}
	for _, n := range []string{Orchestrator, Search, Research, Review, Test, Docs, QA, CustomAgent} {
		if got := render(n); !strings.HasPrefix(got, preamble) {
			t.Errorf("%s does not start with the shared preamble; they part at byte %d", n, commonPrefix(got, preamble))
		}
	}
	// The Orchestrator's role holds what only it is told.
	_, orch := SplitRole(render(Orchestrator))
	for _, must := range []string{"You are the Orchestrator", "# Mode: edit", "Delegate with the agent tool. search is read-only. Use", "mandatory review and QA"} {
		if !strings.Contains(orch, must) {
			t.Errorf("the Orchestrator's role lacks %q:\n%s", must, orch)
		}
	}
	head := preamble[:strings.Index(preamble, "# Project instructions")]
	if got := render(Init); !strings.HasPrefix(got, head) || strings.Contains(got, "Use table tests.") {
		t.Errorf("init: want the preamble without the instructions, got:\n%s", got)
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func TestSplitRole(t *testing.T) {
	code, err := Render(Code, sample("edit"))
	if err != nil {
		t.Fatal(err)
	}
	pre, role := SplitRole(code)
	if pre+"\n"+role != code && pre+role != code {
		t.Errorf("the parts do not make the prompt again:\n%q\n%q", pre, role)
	}
	if !strings.HasPrefix(role, "# Your role\nDate: 2026-01-02. Mode: edit.\nYou are the Code specialist.") || strings.Contains(pre, "Code specialist") {
		t.Errorf("split at the wrong place: role starts %.60q", role)
	}
	if p, r := SplitRole("no role here\n"); p != "no role here\n" || r != "" {
		t.Errorf("a prompt without a role: got %q, %q", p, r)
	}
}

// What changes during a session (the date, the mode of a message) is in
// the role, after the tool definitions: every agent's system message is
// the same bytes on another day and in another mode, so a provider's
// prefix cache keeps serving it and the tools after it.
func TestPreambleHoldsNothingThatChangesInASession(t *testing.T) {
	for _, n := range []string{Orchestrator, Search, Research, Code, Review, Test, Docs, QA, Init, CustomAgent} {
		var pres []string
		for _, mode := range []string{"ask", "plan", "edit"} {
			for _, date := range []string{"2026-01-02", "2026-01-03"} {
				d := sample(mode)
				d.Date = date
				got, err := Render(n, d)
				if err != nil {
					t.Fatal(err)
				}
				pre, role := SplitRole(got)
				if !strings.Contains(role, "Date: "+date+".") || (n != Orchestrator && !strings.Contains(role, "Mode: "+mode+".")) {
					t.Errorf("%s (%s, %s): the role does not give the date and mode:\n%s", n, mode, date, role)
				}
				pres = append(pres, pre)
			}
		}
		for _, pre := range pres[1:] {
			if pre != pres[0] {
				t.Errorf("%s: the preamble changes with the date or mode; they part at byte %d:\n%q", n, commonPrefix(pre, pres[0]), pre[commonPrefix(pre, pres[0]):])
			}
		}
	}
}
