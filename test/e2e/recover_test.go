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

// A real odin run is killed with SIGKILL while the model's reply streams;
// `odin run --continue` with a new task first says it resumes the
// interrupted turn and finishes it (the partial reply kept, marked
// interrupted, and not sent to the model), then runs the new task.
func TestRunKillMidReplyThenContinue(t *testing.T) {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const (
		question = "explain the parser"
		partial  = "The parser"
		whole    = "The parser, explained in full."
	)
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: question, Text: partial + " reads tokens one by one, and this part never arrives.", ChunkSize: 12, StallAfter: 4},
		llmtest.Step{When: question, Text: whole},
		llmtest.Step{When: "and the lexer?", Text: "The lexer splits the input."},
	)
	srv := llmtest.NewServer(t, script)
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1", "ODIN_STORE_URL=",
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	odin := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "odin"), args...)
		cmd.Dir, cmd.Env = work, env
		return cmd
	}
	first := odin(t.Context(), "run", question)
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
				stored = stored || (m.Role == llm.RoleAssistant && strings.HasPrefix(m.Text(), partial))
			}
		}
		st.Close()
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	var stdout, stderr strings.Builder
	cont := odin(t.Context(), "run", "--continue", "and the lexer?")
	cont.Stdout, cont.Stderr = &stdout, &stderr
	if err := cont.Run(); err != nil {
		t.Fatalf("odin run --continue: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	// stdout is the task's answer (and its usage); the resumed turn's
	// shows on stderr.
	if got := stdout.String(); !strings.HasPrefix(got, "The lexer splits the input.\n") || strings.Contains(got, whole) {
		t.Errorf("odin run --continue's stdout:\n%s\nwant the new task's answer, not the resumed turn's", got)
	}
	if e := stderr.String(); !strings.Contains(e, "resuming an interrupted turn") || !strings.Contains(e, "the resumed turn answered:") || !strings.Contains(e, whole) {
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
		"user:" + question,
		"assistant:" + partial + "… (interrupted)",
		"assistant:" + whole,
		"user:and the lexer?",
		"assistant:The lexer splits the input.",
	}
	if len(got) != len(want) || got[0] != want[0] || !strings.HasPrefix(got[1], "assistant:"+partial) || !strings.HasSuffix(got[1], "(interrupted)") || got[2] != want[2] || got[3] != want[3] || got[4] != want[4] {
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
