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

// killedMidReply is a project whose odin run of midQuestion was killed with
// SIGKILL while the model's reply streamed: the partial reply is stored,
// the turn interrupted. odin runs the built binary in the project against
// the scripted server, whose later steps answer midQuestion again (midWhole)
// and then follows.
type killedMidReply struct {
	srv    *llmtest.Server
	dbPath string
	odin   func(ctx context.Context, args ...string) *exec.Cmd
}

const (
	midQuestion = "explain the parser"
	midPartial  = "The parser"
	midWhole    = "The parser, explained in full."
)

func killRunMidReply(t *testing.T, follows ...llmtest.Step) killedMidReply {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := llmtest.NewScript().Add("orchestrator", append([]llmtest.Step{
		{When: midQuestion, Text: midPartial + " reads tokens one by one, and this part never arrives.", ChunkSize: 12, StallAfter: 4},
		{When: midQuestion, Text: midWhole},
	}, follows...)...)
	srv := llmtest.NewServer(t, script)
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1", "ODIN_STORE_URL=",
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	odin := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "odin"), args...)
		cmd.Dir, cmd.Env = work, env
		return cmd
	}
	first := odin(t.Context(), "run", midQuestion)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if first.ProcessState == nil {
			_ = first.Process.Kill()
			_ = first.Wait()
		}
	})
	dbPath := filepath.Join(work, ".state", "odin", "odin.db")
	deadline := time.Now().Add(30 * time.Second)
	for stored := false; !stored; {
		if time.Now().After(deadline) {
			t.Fatal("the partial reply was never stored")
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := os.Stat(dbPath); err != nil {
			continue
		}
		st, err := store.Open(t.Context(), dbPath)
		if err != nil {
			continue
		}
		sessions, _ := st.Sessions(t.Context(), store.SessionQuery{})
		for _, s := range sessions {
			msgs, _ := st.AllMessages(t.Context(), s.ID)
			for _, m := range msgs {
				stored = stored || (m.Role == llm.RoleAssistant && strings.HasPrefix(m.Text(), midPartial))
			}
		}
		st.Close()
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	return killedMidReply{srv: srv, dbPath: dbPath, odin: odin}
}

// A real odin run is killed with SIGKILL while the model's reply streams;
// `odin run --continue` with a new task first says it resumes the
// interrupted turn and finishes it (the partial reply kept, marked
// interrupted, and not sent to the model), then runs the new task.
func TestRunKillMidReplyThenContinue(t *testing.T) {
	k := killRunMidReply(t, llmtest.Step{When: "and the lexer?", Text: "The lexer splits the input."})
	srv, dbPath, odin := k.srv, k.dbPath, k.odin

	var stdout, stderr strings.Builder
	cont := odin(t.Context(), "run", "--continue", "and the lexer?")
	cont.Stdout, cont.Stderr = &stdout, &stderr
	if err := cont.Run(); err != nil {
		t.Fatalf("odin run --continue: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	// stdout is the task's answer (and its usage); the resumed turn's
	// shows on stderr.
	if got := stdout.String(); !strings.HasPrefix(got, "The lexer splits the input.\n") || strings.Contains(got, midWhole) {
		t.Errorf("odin run --continue's stdout:\n%s\nwant the new task's answer, not the resumed turn's", got)
	}
	if e := stderr.String(); !strings.Contains(e, "resuming an interrupted turn") || !strings.Contains(e, "the resumed turn answered:") || !strings.Contains(e, midWhole) {
		t.Errorf("odin run --continue's stderr:\n%s\nwant the resumed turn and its answer", e)
	}

	st, err := store.Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sessions, err := st.Sessions(t.Context(), store.SessionQuery{})
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v; want the one both runs used", sessions, err)
	}
	msgs, err := st.AllMessages(t.Context(), sessions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		line := string(m.Role) + ":" + m.Text()
		if m.Interrupted {
			line += " (interrupted)"
		}
		got = append(got, line)
	}
	want := []string{
		"user:" + midQuestion,
		"assistant:" + midPartial + "… (interrupted)",
		"assistant:" + midWhole,
		"user:and the lexer?",
		"assistant:The lexer splits the input.",
	}
	if len(got) != len(want) || got[0] != want[0] || !strings.HasPrefix(got[1], "assistant:"+midPartial) || !strings.HasSuffix(got[1], "(interrupted)") || got[2] != want[2] || got[3] != want[3] || got[4] != want[4] {
		t.Errorf("stored history:\n%s\nwant (the partial reply as far as it streamed):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	reqs := srv.RequestsFor("orchestrator")
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3 (killed, resumed, new task)", len(reqs))
	}
	for i, r := range reqs[1:] {
		for _, m := range r.Body.Messages {
			if strings.Contains(m.Text(), "reads tokens") {
				t.Errorf("request %d after the kill carries the interrupted reply", i+2)
			}
		}
	}
}

// The REPL in line mode (stdin not a terminal) resumes the interrupted
// turn, and the end of its input waits for that turn instead of ending
// the session before the model was asked.
func TestLineModeFinishesTheResumedTurn(t *testing.T) {
	k := killRunMidReply(t)
	cmd := k.odin(t.Context(), "--continue")
	cmd.Stdin = strings.NewReader("\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("odin --continue in line mode: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "resuming an interrupted turn") || !strings.Contains(string(out), midWhole) {
		t.Errorf("odin --continue in line mode said:\n%s\nwant the resumed turn answered", out)
	}
	if n := len(k.srv.RequestsFor("orchestrator")); n != 2 {
		t.Errorf("%d model requests, want 2 (killed, resumed)", n)
	}
}
