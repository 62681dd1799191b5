package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
)

// A real odin run is killed with SIGKILL while a tool call runs; the next
// `odin run --continue` sees a valid history (the interrupted call has a
// cancelled result) and the answer arrives.
func TestKillMidTurnThenContinue(t *testing.T) {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	marker := "31.4159"
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("ExecuteCommand", map[string]any{"command": "sleep " + marker})),
		llmtest.Step{When: "what happened?", Text: "The sleep was interrupted; nothing else changed."},
	)
	srv := llmtest.NewServer(t, script)
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1",
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	odin := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "odin"), args...)
		cmd.Dir, cmd.Env = work, env
		return cmd
	}
	t.Cleanup(func() { _ = exec.Command("pkill", "-f", "sleep "+marker).Run() })

	first := odin(t.Context(), "run", "--allow", "sleep *", "-o", "odin-stream", "sleep for a while")
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the tool call is running, then kill the process outright.
	buf := make([]byte, 64<<10)
	var seen strings.Builder
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(seen.String(), `"type":"tool_started"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the tool call never started; output so far:\n%s", seen.String())
		}
		n, err := stdout.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("reading odin's output: %v\n%s", err, seen.String())
		}
	}
	// The tool runs once the model's reply is in; wait until the journal
	// has committed that reply, as it would have by any later moment.
	st, err := store.Open(t.Context(), filepath.Join(work, ".state", "odin", "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	for committed := false; !committed; {
		if time.Now().After(deadline) {
			t.Fatal("the assistant's tool call was never committed to the store")
		}
		sessions, _ := st.Sessions(t.Context(), store.SessionQuery{})
		for _, s := range sessions {
			msgs, _ := st.AllMessages(t.Context(), s.ID)
			for _, m := range msgs {
				committed = committed || len(m.ToolCalls()) > 0
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	st.Close()
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	out, err := odin(t.Context(), "run", "--continue", "what happened?").CombinedOutput()
	if err != nil {
		t.Fatalf("odin run --continue: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "The sleep was interrupted") {
		t.Fatalf("continued answer:\n%s", out)
	}
	reqs := srv.RequestsFor("orchestrator")
	msgs := reqs[len(reqs)-1].Body.LLMMessages()
	var call, result, question bool
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			call = call || strings.Contains(c.Arguments, marker)
		}
		if m.Role == llm.RoleTool && strings.Contains(m.Content, "cancelled") {
			result = true
		}
		question = question || (m.Role == llm.RoleUser && userWords(m.Content) == "sleep for a while")
	}
	if !call || !result || !question {
		t.Errorf("continued history: interrupted call %v, its cancelled result %v, first question %v; messages:\n%+v", call, result, question, msgs)
	}
}
