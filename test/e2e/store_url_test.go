package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/pgtest"
)

// storeURLEnv is a work directory and the environment of an odin run in
// it against the scripted model.
func storeURLEnv(t *testing.T, script *llmtest.Script) (work string, env []string) {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t, script)
	env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1", "ODIN_STORE_URL=",
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	return work, env
}

func runOdin(t *testing.T, work string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(binDir, "odin"), args...)
	cmd.Dir, cmd.Env = work, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// With ODIN_STORE_URL naming a PostgreSQL database, a real odin run keeps
// its session there (and not in the SQLite file of the state directory),
// and `--continue` resumes it from there.
func TestStoreURLPostgres(t *testing.T) {
	pg := pgtest.New(t)
	url := pg.Database(t)
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "first question", Text: "First answer from the model."},
		llmtest.Step{When: "second question", Text: "Second answer from the model."},
	)
	work, env := storeURLEnv(t, script)
	env = append(env, "ODIN_STORE_URL="+url)
	if out, err := runOdin(t, work, env, "run", "first question"); err != nil || !strings.Contains(out, "First answer") {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	if out, err := runOdin(t, work, env, "run", "--continue", "second question"); err != nil || !strings.Contains(out, "Second answer") {
		t.Fatalf("continued run: %v\n%s", err, out)
	}

	ctx := context.Background()
	st, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sessions, err := st.Sessions(ctx, store.SessionQuery{})
	if err != nil || len(sessions) != 1 {
		t.Fatalf("PostgreSQL holds %d sessions (%v), want the one both runs used", len(sessions), err)
	}
	msgs, err := st.AllMessages(ctx, sessions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text())
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"first question", "First answer", "second question", "Second answer"} {
		if !strings.Contains(all, want) {
			t.Errorf("stored history lacks %q:\n%s", want, all)
		}
	}
	if _, err := os.Stat(filepath.Join(work, ".state", "odin", "odin.db")); err == nil {
		t.Errorf("a SQLite database was created in the state directory although store.url names PostgreSQL")
	}
}

// A bad store.url stops odin with an error naming the key and where it
// was set; a project's odin.yaml cannot choose the store at all, and the
// database it names is never created.
func TestStoreURLErrors(t *testing.T) {
	script := llmtest.NewScript().Add("orchestrator", llmtest.Step{Text: "should not be asked"})
	work, env := storeURLEnv(t, script)

	out, err := runOdin(t, work, append(env, "ODIN_STORE_URL=mysql://db/odin"), "run", "hello")
	if err == nil || !strings.Contains(out, "store.url") || !strings.Contains(out, "env ODIN_STORE_URL") || !strings.Contains(out, `"mysql"`) {
		t.Fatalf("ODIN_STORE_URL=mysql://…: %v\n%s", err, out)
	}

	out, err = runOdin(t, work, env, "serve", "--listen", "127.0.0.1:0", "--store", "mysql://db/odin")
	if err == nil || !strings.Contains(out, "store.url (set by flags)") || !strings.Contains(out, `"mysql"`) {
		t.Fatalf("odin serve --store mysql://…: %v\n%s", err, out)
	}

	canary := filepath.Join(work, "chosen-by-project.db")
	if err := os.WriteFile(filepath.Join(work, "odin.yaml"), []byte("store:\n  url: sqlite://"+canary+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runOdin(t, work, env, "run", "hello")
	if err == nil || !strings.Contains(out, "store.url") || !strings.Contains(out, "may not choose the session store") {
		t.Fatalf("project store.url: %v\n%s", err, out)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatalf("the project's store.url was opened: %s exists", canary)
	}
	out, err = runOdin(t, work, env, "trust")
	if _, serr := os.Stat(canary); serr == nil {
		t.Fatalf("after odin trust (%v: %s) the project's database exists", err, out)
	}
}

// `odin serve --store postgres://…` keeps the sessions it serves in that
// database: a session created and run over HTTP is found there.
func TestServeStorePostgres(t *testing.T) {
	pg := pgtest.New(t)
	url := pg.Database(t)
	script := llmtest.NewScript().Add("orchestrator", llmtest.Step{When: "served question", Text: "Served answer."})
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
	// The session journal commits the reply just after the event that
	// announces it: wait for it, as a reader on another host would.
	deadline := time.Now().Add(20 * time.Second)
	for {
		msgs, err := st.AllMessages(ctx, id)
		if err != nil {
			t.Fatalf("session %s in PostgreSQL: %v", id, err)
		}
		var all []string
		for _, m := range msgs {
			all = append(all, m.Text())
		}
		got := strings.Join(all, "\n")
		if strings.Contains(got, "served question") && strings.Contains(got, "Served answer.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stored history after 20 s:\n%s", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
