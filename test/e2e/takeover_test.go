package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/pgtest"
)

// storedTurns is the session's history as "role: text" lines.
func storedTurns(t *testing.T, st store.Store, id string) []string {
	t.Helper()
	msgs, err := st.AllMessages(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+": "+m.Text())
	}
	return out
}

// Two odin processes on one PostgreSQL store: A streams a long reply;
// B (odin run --resume) opens the same session meanwhile, claims it at
// epoch 2 and answers. A's next write is fenced: A stops at once, says
// the session was taken over and exits 4; its reply is never completed in
// the history, which holds B's turn after A's partial reply.
func TestTakeoverPostgres(t *testing.T) {
	pg := pgtest.New(t)
	url := pg.Database(t)
	long := strings.Repeat("streaming slowly from process A ", 12) + "END-OF-A"
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "first question", Text: long, ChunkSize: 4, ChunkDelay: llmtest.Duration(60 * time.Millisecond)},
		llmtest.Step{When: "second question", Text: "Second answer, from process B."},
	)
	work, env := storeURLEnv(t, script)
	env = append(env, "ODIN_STORE_URL="+url)

	ctx := context.Background()
	st, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	a := exec.CommandContext(t.Context(), filepath.Join(binDir, "odin"), "run", "first question")
	var aOut bytes.Buffer
	a.Dir, a.Env, a.Stdout, a.Stderr = work, env, &aOut, &aOut
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	aDone := make(chan error, 1)
	go func() { aDone <- a.Wait() }()

	// Wait for A's reply to be stored while it streams.
	var id string
	for deadline := time.Now().Add(60 * time.Second); ; {
		ss, err := st.Sessions(ctx, store.SessionQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) == 1 {
			id = ss[0].ID
			msgs, err := st.AllMessages(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) == 2 && msgs[1].Role == llm.RoleAssistant && msgs[1].Text() != "" {
				break
			}
		}
		select {
		case err := <-aDone:
			t.Fatalf("A ended before its reply streamed: %v\n%s", err, aOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no partial reply of A stored after 60 s\n%s", aOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	bOut, err := runOdin(t, work, env, "run", "--resume", id, "second question")
	if err != nil || !strings.Contains(bOut, "Second answer, from process B.") {
		t.Fatalf("B: %v\n%s", err, bOut)
	}
	var aErr error
	select {
	case aErr = <-aDone:
	case <-time.After(60 * time.Second):
		t.Fatalf("A still runs a minute after B took its session over\n%s", aOut.String())
	}
	t.Logf("A's output:\n%s", aOut.String())
	var exit *exec.ExitError
	if !errors.As(aErr, &exit) || exit.ExitCode() != 4 {
		t.Errorf("A exited with %v, want exit code 4\n%s", aErr, aOut.String())
	}
	if !strings.Contains(aOut.String(), "session taken over by another process (epoch 2)") {
		t.Errorf("A did not say it was taken over:\n%s", aOut.String())
	}
	got := storedTurns(t, st, id)
	partial, _ := strings.CutPrefix(got[min(1, len(got)-1)], "assistant: ")
	if len(got) != 4 || got[0] != "user: first question" || partial == "" || !strings.HasPrefix(long, partial) ||
		!strings.Contains(got[2], "second question") || got[3] != "assistant: Second answer, from process B." {
		t.Fatalf("stored history:\n%s\nwant A's question, A's partial reply, then B's turn", strings.Join(got, "\n"))
	}
	if partial == long {
		t.Errorf("A completed its reply in the history after B took the session over: %q", got[1])
	}
}

// odin serve on PostgreSQL holds a session; odin run --resume in another
// process takes it over. The served session stops at its next write and
// says so on its event stream (session_fenced), and the next input gets
// 409 with a body that says what happened; nothing of it is stored.
func TestServeTakeoverPostgres(t *testing.T) {
	pg := pgtest.New(t)
	url := pg.Database(t)
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "served question", Text: "Served answer."},
		llmtest.Step{When: "second question", Text: "Second answer, from the CLI."},
		llmtest.Step{When: "third question", Text: "Third answer, never stored.", Latency: llmtest.Duration(500 * time.Millisecond)},
	)
	work, env := storeURLEnv(t, script)
	_, c := startServe(t, env, work, "--store", url)

	sess := c.do("POST", "/v1/sessions", map[string]string{"project": work}, http.StatusCreated)
	id := sess["id"].(string)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evs := c.stream(ctx, id, "")
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "served question", "mode": "ask"}, http.StatusAccepted)
	until(t, evs, "turn_finished")

	st, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// turn_finished is published once the turn is committed, so the
	// CLI's session sees it.
	out, err := runOdin(t, work, append(env, "ODIN_STORE_URL="+url), "run", "--resume", id, "second question")
	if err != nil || !strings.Contains(out, "Second answer, from the CLI.") {
		t.Fatalf("odin run --resume while serve holds the session: %v\n%s", err, out)
	}
	before := storedTurns(t, st, id)

	// Serve does not know yet: its next write finds out. That is the
	// input's own entry in the store's ledger, so the input is refused at
	// once (409), nothing of it runs, and the session says it was taken.
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "third question", "mode": "ask"}, http.StatusConflict)
	seen := until(t, evs, "session_fenced")
	fenced := seen[len(seen)-1]
	if fenced.Data["epoch"] != float64(2) || !strings.Contains(fenced.Data["reason"].(string), "session taken over by another process (epoch 2)") {
		t.Errorf("session_fenced = %v", fenced.Data)
	}
	body := c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "fourth question", "mode": "ask"}, http.StatusConflict)
	if msg, _ := body["error"].(string); !strings.Contains(msg, "session taken over by another process (epoch 2)") {
		t.Errorf("409 body = %v, want it to say the session was taken over", body)
	}
	info := c.do("GET", "/v1/sessions/"+id, nil, http.StatusOK)
	if s, _ := info["taken_over"].(string); !strings.Contains(s, "epoch 2") {
		t.Errorf("session info = %v, want taken_over", info)
	}
	if after := storedTurns(t, st, id); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("the served session wrote after it was taken over:\nbefore:\n%s\nafter:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
}
