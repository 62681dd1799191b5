package repl

import (
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// bannerSession is the short session ID the banner shows.
func (tm *term) bannerSession() string {
	tm.t.Helper()
	tm.Expect("· session ")
	scr := tm.screen()
	i := strings.LastIndex(scr, "· session ")
	if i < 0 || len(scr) < i+len("· session ")+8 {
		tm.t.Fatalf("no session ID in the banner:\n%s", scr)
	}
	return scr[i+len("· session ") : i+len("· session ")+8]
}

// requestModels are the models the Orchestrator's requests named, in order.
func requestModels(srv *llmtest.Server) []string {
	var out []string
	for _, r := range srv.RequestsFor("orchestrator") {
		out = append(out, r.Body.Model)
	}
	return out
}

// TestModelKeptWithSession: /model NAME is kept with the session it was
// typed in. The REPL's /resume, odin -c, odin --resume ID and odin run
// --resume start in it again, with a note saying so; --model on the
// command line wins over it for that run only (the note says which runs
// and why); a model the configuration no longer offers is not forced on
// the session, which runs on the configured one and says why.
func TestModelKeptWithSession(t *testing.T) {
	tm := start(t, steps(
		llmtest.Step{When: "alpha question", Text: "alpha answer"},
		llmtest.Step{When: "beta question", Text: "beta answer"},
		llmtest.Step{When: "gamma question", Text: "gamma answer"},
		llmtest.Step{When: "delta question", Text: "delta answer"},
	), options{})
	first := tm.bannerSession()
	tm.Expect("edit ❯")
	tm.Type("alpha question" + enter)
	tm.Expect("alpha answer")
	tm.Idle()
	tm.Type("/model model-a" + enter)
	tm.Expect("main model: model-a")
	tm.Type("beta question" + enter)
	tm.Expect("beta answer")
	tm.Idle()
	// A new conversation starts in the REPL's model and keeps its own.
	tm.Type("/clear" + enter)
	tm.Expect("Started a new conversation.")
	tm.Type("/model model-b" + enter)
	tm.Expect("main model: model-b")
	tm.Type("gamma question" + enter)
	tm.Expect("gamma answer")
	tm.Idle()
	tm.Type("/resume " + first + enter)
	tm.Expect("Resumed session " + first)
	tm.Expect("Note: model model-a, kept with this session")
	tm.Type("delta question" + enter)
	tm.Expect("delta answer")
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if got, want := strings.Join(requestModels(tm.Srv), " "), "scripted-model model-a model-b model-a"; got != want {
		t.Errorf("the requests named %s, want %s", got, want)
	}

	// A new process: odin -c continues the latest session (the first
	// one, resumed last) in its model; so does odin run --resume ID.
	tm2 := start(t, steps(
		llmtest.Step{When: "epsilon question", Text: "epsilon answer"},
		llmtest.Step{When: "headless question", Text: "headless answer"},
	), options{args: []string{"-c"}, root: tm.Root, state: tm.State})
	tm2.Expect("model model-a · session " + first)
	tm2.Expect("note: model model-a, kept with this session")
	tm2.Expect("edit ❯")
	tm2.Type("epsilon question" + enter)
	tm2.Expect("epsilon answer")
	tm2.Type("/quit" + enter)
	if err := tm2.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	out := tm2.odinCmd("run", "--resume", first, "headless question")
	if !strings.Contains(out, "headless answer") || !strings.Contains(out, "note: model model-a, kept with this session") {
		t.Errorf("odin run --resume printed:\n%s\nwant the answer and the note on the kept model", out)
	}
	if got, want := strings.Join(requestModels(tm2.Srv), " "), "model-a model-a"; got != want {
		t.Errorf("after odin -c and odin run --resume the requests named %s, want %s", got, want)
	}

	// --model wins for this run, and says over what; it is not kept.
	tm3 := start(t, steps(
		llmtest.Step{When: "zeta question", Text: "zeta answer"},
	), options{args: []string{"--resume", first, "--model", "flag-model"}, root: tm.Root, state: tm.State})
	tm3.Expect("model flag-model · session " + first)
	tm3.Expect("note: model flag-model from --model; this session last used model-a")
	tm3.Expect("edit ❯")
	tm3.Type("zeta question" + enter)
	tm3.Expect("zeta answer")
	tm3.Type("/quit" + enter)
	if err := tm3.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if got := strings.Join(requestModels(tm3.Srv), " "); got != "flag-model" {
		t.Errorf("with --model the request named %s, want flag-model", got)
	}

	// The configuration no longer offers model-a (its provider now has
	// no key): the session runs on the configured model and says why.
	writeFile(t, tm.State, "config/odin/odin.yaml", "providers:\n  keyless:\n    base_url: https://api.openai.com/v1\n    api_key_env: ODIN_TEST_NO_SUCH_KEY\nmodel_info:\n  model-a:\n    provider: keyless\n")
	tm4 := start(t, steps(
		llmtest.Step{When: "eta question", Text: "eta answer"},
	), options{args: []string{"-c"}, root: tm.Root, state: tm.State})
	tm4.Expect("model scripted-model · session " + first)
	tm4.Expect("note: model scripted-model: this session last used model-a, which the configuration no longer offers")
	tm4.Expect("edit ❯")
	tm4.Type("eta question" + enter)
	tm4.Expect("eta answer")
	tm4.Type("/quit" + enter)
	if err := tm4.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if got := strings.Join(requestModels(tm4.Srv), " "); got != "scripted-model" {
		t.Errorf("with model-a no longer offered the request named %s, want scripted-model", got)
	}
}
