package cluster

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/pgtest"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, for reading claims
)

// binDir holds the odin binary under test: ODIN_TEST_BIN_DIR (built
// with -tags cluster), or one built for this run.
var binDir string

func TestMain(m *testing.M) {
	// Started by odin as an MCP server (elicit_test.go): be it.
	if filepath.Base(os.Args[0]) == mcpAskerName {
		os.Exit(mcpAsker())
	}
	if dir := os.Getenv("ODIN_TEST_BIN_DIR"); dir != "" {
		binDir = dir
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "odin-cluster-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	args := []string{"build", "-tags", "cluster", "-o", dir + "/"}
	env := append(os.Environ(), "CGO_ENABLED=0")
	if raceTest && os.Getenv("ODIN_CLUSTER_TESTS") == "1" {
		// Under make test-cluster (-race) the nodes are race-built too,
		// their reports read by checkRaces (the race detector needs cgo).
		// make test's placement run keeps the plain build: a race build
		// of odin takes minutes of its budget.
		args = append(args, "-race")
		env = append(os.Environ(), "CGO_ENABLED=1")
	}
	build := exec.Command("go", append(args, "github.com/odin-code/odin/cmd/odin")...)
	build.Env = env
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building odin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fleet is a cluster of odin processes on one machine sharing a SQLite
// file (or a PostgreSQL database).
type fleet struct {
	t       testing.TB
	dir     string
	project string
	store   string // --store
	env     []string
	model   *llmtest.Server
	// ownState gives each process its own state directory (as on
	// separate hosts): no shared session leases, only the store.
	ownState bool
	// nodeArgs go to every node (worker and serve).
	nodeArgs []string
	// ttl is every node's --cluster-ttl: short (1s) for the failover
	// runs, which measure the time to notice a lost node.
	ttl string

	mu    sync.Mutex
	procs []*proc
}

// proc is one odin child process.
type proc struct {
	name    string
	cmd     *exec.Cmd
	member  string // cluster member ID
	addr    string // cluster address
	metrics string // a worker's /metrics URL
	exited  chan struct{}
	out     *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newFleet(t testing.TB, script *llmtest.Script, storeURL string) *fleet {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(dir, "proj")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	if storeURL == "" {
		storeURL = filepath.Join(dir, "cluster.db")
	}
	f := &fleet{t: t, dir: dir, project: project, store: storeURL, model: model, ttl: "1s"}
	// One state directory for all: on one machine the nodes share it
	// (the serve token, the session leases beside the database).
	f.env = append(os.Environ(),
		"HOME="+filepath.Join(dir, "home"), "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "NO_COLOR=1",
		"OPENAI_BASE_URL="+model.URL(), "OPENAI_API_KEY=")
	// Cleanups run last first: the race logs are read once every node
	// has exited.
	t.Cleanup(f.checkRaces)
	t.Cleanup(f.stopAll)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(dir, "state*", "odin", "odin.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("--- %s:\n%s", l, b)
			}
		}
	})
	return f
}

var (
	memberLine  = regexp.MustCompile(`member (\S+) of cluster \S+ at (\S+)`)
	listenLine  = regexp.MustCompile(`listening on (https?://\S+) \(token in (\S+);`)
	metricsLine = regexp.MustCompile(`metrics on (http://\S+)`)
)

// start runs odin with args and waits for the lines it prints once up
// (want of them); it returns the process and those lines.
func (f *fleet) start(name string, want int, args ...string) (*proc, []string) {
	f.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "odin"), args...)
	// A race-built node writes its reports to race/NAME.PID and goes on.
	cmd.Env, cmd.Dir = append(append([]string(nil), f.env...), "GORACE=log_path="+filepath.Join(f.dir, "race", name)+" halt_on_error=0"), f.project
	if f.ownState {
		cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+filepath.Join(f.dir, "state-"+name))
	}
	if err := os.MkdirAll(filepath.Join(f.dir, "race"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{}), out: &lockedBuffer{}}
	cmd.Stderr = p.out
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.procs = append(f.procs, p)
	f.mu.Unlock()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(p.out, sc.Text())
			lines <- sc.Text()
		}
		close(lines)
		_ = cmd.Wait()
		close(p.exited)
	}()
	var got []string
	timeout := time.After(60 * time.Second)
	for len(got) < want {
		select {
		case l, ok := <-lines:
			if !ok {
				f.t.Fatalf("%s exited before it was up:\n%s", name, p.out)
			}
			got = append(got, l)
			if m := memberLine.FindStringSubmatch(l); m != nil {
				p.member, p.addr = m[1], m[2]
			}
			if m := metricsLine.FindStringSubmatch(l); m != nil {
				p.metrics = m[1]
			}
		case <-timeout:
			f.t.Fatalf("%s is not up after 60 s:\n%s", name, p.out)
		}
	}
	go func() {
		for range lines {
		}
	}()
	return p, got
}

// stopAll ends every process still running (SIGTERM, then SIGKILL) and
// reaps it; the output of each goes to the log.
func (f *fleet) stopAll() {
	f.mu.Lock()
	procs := append([]*proc(nil), f.procs...)
	f.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if f.t.Failed() {
			f.t.Logf("--- %s (pid %d):\n%s", p.name, p.cmd.Process.Pid, p.out)
		}
	}
}

func (f *fleet) worker(name string, extra ...string) *proc {
	args := append([]string{"worker", "--cluster", "t", "--store", f.store, "--cluster-ttl", f.ttl, "--log-level", "info", "--metrics", "127.0.0.1:0"}, f.nodeArgs...)
	args = append(args, extra...)
	p, _ := f.start(name, 2, args...)
	if p.member == "" || p.metrics == "" {
		f.t.Fatalf("%s printed no member or metrics line:\n%s", name, p.out)
	}
	return p
}

// metric scrapes p's /metrics and returns the sample of name with the
// given labels (`reason="new"`, or "" for none); 0 when absent.
func (p *proc) metric(t testing.TB, name, labels string) float64 {
	t.Helper()
	resp, err := http.Get(p.metrics)
	if err != nil {
		t.Fatalf("%s metrics: %v", p.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	want := name
	if labels != "" {
		want += "{" + labels + "}"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, want+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("%s metrics: %q: %v", p.name, line, err)
			}
			return f
		}
	}
	return 0
}

// front is odin serve --cluster --host-sessions=false as an API client.
type front struct {
	*proc
	base, token string
}

func (f *fleet) front() *front {
	args := append([]string{"serve", "--cluster", "t", "--store", f.store, "--host-sessions=false",
		"--cluster-ttl", f.ttl, "--listen", "127.0.0.1:0", "--root", f.project, "--log-level", "info"}, f.nodeArgs...)
	p, lines := f.start("serve", 2, args...)
	fr := &front{proc: p}
	for _, l := range lines {
		if m := listenLine.FindStringSubmatch(l); m != nil {
			tok, err := os.ReadFile(m[2])
			if err != nil {
				f.t.Fatal(err)
			}
			fr.base, fr.token = m[1], strings.TrimSpace(string(tok))
		}
	}
	if fr.base == "" || p.member == "" {
		f.t.Fatalf("serve printed %q", lines)
	}
	return fr
}

func (fr *front) call(method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, fr.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+fr.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, nil
}

// userMessages counts the session's stored user messages by text (its
// JSONL export).
func (fr *front) userMessages(t testing.TB, id string) map[string]int {
	t.Helper()
	req, _ := http.NewRequest("GET", fr.base+"/v1/sessions/"+id+"/export?format=jsonl", nil)
	req.Header.Set("Authorization", "Bearer "+fr.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Message struct {
				Role  string `json:"role"`
				Parts []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "message" || line.Message.Role != "user" {
			continue
		}
		for _, p := range line.Message.Parts {
			if p.Type == "text" {
				out[p.Text]++
			}
		}
	}
	return out
}

// messageLines is the session's stored messages as its JSONL export
// renders them, byte for byte.
func (fr *front) messageLines(t testing.TB, id string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", fr.base+"/v1/sessions/"+id+"/export?format=jsonl", nil)
	req.Header.Set("Authorization", "Bearer "+fr.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, `{"type":"message"`) {
			out.WriteString(l + "\n")
		}
	}
	return out.String()
}

type sse struct {
	typ  string
	data map[string]any
}

// events streams a session's events from the start.
func (fr *front) events(ctx context.Context, id string) (<-chan sse, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", fr.base+"/v1/sessions/"+id+"/events?last_event_id=0", nil)
	req.Header.Set("Authorization", "Bearer "+fr.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	ch := make(chan sse, 256)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && ev.typ != "":
				ch <- ev
				ev = sse{}
			case strings.HasPrefix(line, "event: "):
				ev.typ = line[7:]
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(line[6:]), &ev.data)
			}
		}
	}()
	return ch, nil
}

// turn sends body to session id and waits for its turn_finished,
// returning the turn's status and answer.
// mustCreate creates a session in project through the front, or fails t.
func (fr *front) mustCreate(t *testing.T, project string) string {
	t.Helper()
	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": project})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session: %d %v %v", code, s, err)
	}
	return s["id"].(string)
}

// mustTurn runs a turn of session id through the front and fails t unless
// it is done with the answer want.
func (fr *front) mustTurn(ctx context.Context, t *testing.T, id, body, want string) {
	t.Helper()
	st, ans, err := fr.turn(ctx, id, body)
	if err != nil || st != "done" || ans != want {
		t.Fatalf("session %s: turn %q: %s %q %v, want done %q", id, body, st, ans, err, want)
	}
}

func (fr *front) turn(ctx context.Context, id, body string) (status, answer string, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	evs, err := fr.events(ctx, id)
	if err != nil {
		return "", "", err
	}
	if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": body}); err != nil || code != http.StatusAccepted {
		return "", "", fmt.Errorf("message: %d %v %v", code, out, err)
	}
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				return "", "", fmt.Errorf("session %s: the event stream ended", id)
			}
			if ev.typ != "turn_finished" {
				continue
			}
			res, _ := ev.data["result"].(map[string]any)
			in, _ := res["input"].(map[string]any)
			if in["body"] != body {
				continue // an earlier turn's end, replayed
			}
			st, _ := res["status"].(string)
			ans, _ := res["answer"].(string)
			return st, ans, nil
		case <-ctx.Done():
			return "", "", fmt.Errorf("session %s: no turn_finished for %q: %w", id, body, ctx.Err())
		}
	}
}

// claim is a session's owner and epoch as the store holds them.
type claim struct {
	Owner string
	Epoch int64
}

// owners reads each session's claim from the shared store (the columns
// store.Claim writes; the store's API does not expose them).
func (f *fleet) owners(ctx context.Context, ids []string) map[string]claim {
	f.t.Helper()
	// Opening it through the store migrates nothing (the nodes did) and
	// registers the drivers.
	st, err := store.OpenURL(ctx, f.store)
	if err != nil {
		f.t.Fatal(err)
	}
	st.Close()
	driver, dsn := "sqlite", "file:"+f.store+"?mode=ro"
	if strings.HasPrefix(f.store, "postgres") {
		driver, dsn = "pgx", f.store
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	q := `SELECT owner, epoch FROM sessions WHERE id = ?`
	if driver == "pgx" {
		q = `SELECT owner, epoch FROM sessions WHERE id = $1`
	}
	out := map[string]claim{}
	for _, id := range ids {
		var c claim
		if err := db.QueryRowContext(ctx, q, id).Scan(&c.Owner, &c.Epoch); err != nil {
			f.t.Fatalf("session %s: %v", id, err)
		}
		out[id] = c
	}
	return out
}

func helloScript(n int) *llmtest.Script {
	s := llmtest.NewScript()
	for range n {
		s.Add("orchestrator", llmtest.Step{When: "hello", Text: "hi from the cluster"})
	}
	return s
}

// TestPlacement: 12 sessions created through odin serve
// --host-sessions=false land on the two workers only, spread over both,
// each activated exactly once (claimed at epoch 1 by a worker), and each
// answers a turn through its worker.
func TestPlacement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three odin processes")
	}
	placement(t, "")
}

// TestPlacementPostgres is TestPlacement on a PostgreSQL store (its own
// server, started by the test).
func TestPlacementPostgres(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes and PostgreSQL")
	}
	placement(t, pgtest.New(t).Database(t))
}

func placement(t *testing.T, storeURL string) {
	f := newFleet(t, helloScript(40), storeURL)
	// No node is lost here: a TTL that a race-built node on a loaded
	// machine cannot miss by a late heartbeat, which would move sessions.
	f.ttl = "3s"
	w1 := f.worker("worker-1")
	w2 := f.worker("worker-2")
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	const n = 12
	var ids []string
	for i := range n {
		code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
		if err != nil || code != http.StatusCreated {
			t.Fatalf("create session %d: %d %v %v", i, code, s, err)
		}
		ids = append(ids, s["id"].(string))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, ans, err := fr.turn(ctx, id, fmt.Sprintf("hello %d", i))
			if err == nil && (st != "done" || ans != "hi from the cluster") {
				err = fmt.Errorf("session %s: turn %s %q", id, st, ans)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	perNode := map[string]int{}
	for id, s := range f.owners(ctx, ids) {
		if s.Epoch != 1 {
			t.Errorf("session %s: epoch %d, want 1 (activated once)", id, s.Epoch)
		}
		perNode[s.Owner]++
	}
	t.Logf("placement: %s %d, %s %d, front %d", w1.name, perNode[w1.member], w2.name, perNode[w2.member], perNode[fr.member])
	if perNode[fr.member] != 0 {
		t.Errorf("%d sessions on the front, which hosts none", perNode[fr.member])
	}
	if got := w1.metric(t, "odin_activations_total", `reason="new"`) + w2.metric(t, "odin_activations_total", `reason="new"`); got != n {
		t.Errorf("the workers count %v new activations, want %d", got, n)
	}
	if got := w1.metric(t, "odin_members", "") + w2.metric(t, "odin_members", ""); got != 6 {
		t.Errorf("the workers see %v members between them, want 3 each", got)
	}
	if perNode[w1.member] == 0 || perNode[w2.member] == 0 || perNode[w1.member]+perNode[w2.member] != n {
		keys := make([]string, 0, len(perNode))
		for k := range perNode {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Errorf("sessions per owner %v (workers %s, %s), want all %d on the workers, some on each", perNode, w1.member, w2.member, n)
	}
}

// TestKillMidTurn: the worker running a session is SIGKILLed while a
// turn streams; an input sent right after the kill is taken by the
// survivor, which claims the session at epoch 2, and the front's event
// stream continues with a resync and that input's turn_finished. The
// seconds from the kill to the survivor's claim and to the input's
// acceptance are logged (issue 29 asks for ≤ 2 s each; tests assert no
// wall-clock time). ODIN_CLUSTER_RUNS repeats it.
func TestKillMidTurn(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes")
	}
	for run := range clusterRuns(t) {
		t.Run(fmt.Sprint(run+1), func(t *testing.T) { killMidTurn(t, "") })
	}
}

// clusterRuns is how many times to repeat a failover run:
// ODIN_CLUSTER_RUNS, default 1.
func clusterRuns(t *testing.T) int {
	runs := 1
	if v := os.Getenv("ODIN_CLUSTER_RUNS"); v != "" {
		if _, err := fmt.Sscan(v, &runs); err != nil || runs < 1 {
			t.Fatalf("ODIN_CLUSTER_RUNS=%q", v)
		}
	}
	return runs
}

// TestKillMidTurnPostgres is TestKillMidTurn on a PostgreSQL store.
func TestKillMidTurnPostgres(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes and PostgreSQL")
	}
	srv := pgtest.New(t)
	for run := range clusterRuns(t) {
		t.Run(fmt.Sprint(run+1), func(t *testing.T) { killMidTurn(t, srv.Database(t)) })
	}
}

func killMidTurn(t *testing.T, storeURL string) {
	script := llmtest.NewScript()
	script.Add("orchestrator",
		llmtest.Step{When: "first", Text: "first answer"},
		llmtest.Step{When: "stream", ChunkDelay: llmtest.Duration(100 * time.Millisecond), ChunkSize: 4, Text: strings.Repeat("streaming text ", 20)},
		// B again, resumed by the survivor.
		llmtest.Step{When: "stream", Text: "B finished by the survivor"},
	)
	for range 5 {
		script.Add("orchestrator", llmtest.Step{When: "after", Text: "answered by the survivor"})
	}
	f := newFleet(t, script, storeURL)
	workers := []*proc{f.worker("worker-1"), f.worker("worker-2")}
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session: %d %v %v", code, s, err)
	}
	id := s["id"].(string)
	if st, _, err := fr.turn(ctx, id, "first"); err != nil || st != "done" {
		t.Fatalf("first turn: %s %v", st, err)
	}
	before := f.owners(ctx, []string{id})[id]
	var victim, survivor *proc
	for _, w := range workers {
		if w.member == before.Owner {
			victim = w
		} else {
			survivor = w
		}
	}
	if victim == nil || before.Epoch != 1 {
		t.Fatalf("session %s owned by %q at epoch %d, want a worker at epoch 1", id, before.Owner, before.Epoch)
	}

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	evs, err := fr.events(sctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "stream B"}); err != nil || code != http.StatusAccepted {
		t.Fatalf("message B: %d %v %v", code, out, err)
	}
	// Kill the owner once B is streaming.
	waitStreaming(ctx, t, evs, "stream B")
	killed := time.Now()
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "after the kill C"})
	accepted := time.Since(killed)
	if err != nil || code != http.StatusAccepted {
		t.Fatalf("message C after the kill: %d %v %v", code, out, err)
	}
	var claimed time.Duration
	for claimed == 0 {
		if c := f.owners(ctx, []string{id})[id]; c.Epoch > before.Epoch {
			claimed = time.Since(killed)
			if c.Owner != survivor.member || c.Epoch != 2 {
				t.Errorf("after the kill: owner %s epoch %d, want the survivor %s at epoch 2", c.Owner, c.Epoch, survivor.member)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the session was never claimed again")
		case <-time.After(10 * time.Millisecond):
		}
	}
	resynced, finishedC := false, false
	finished := map[string]int{}
	for !finishedC {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatal("the event stream ended after the kill")
			}
			switch ev.typ {
			case "resync":
				resynced = true
			case "turn_finished":
				res, _ := ev.data["result"].(map[string]any)
				in, _ := res["input"].(map[string]any)
				body, _ := in["body"].(string)
				finished[body]++
				if body == "stream B" && (res["status"] != "done" || res["answer"] != "B finished by the survivor") {
					t.Errorf("B finished %v %q, want done by the survivor", res["status"], res["answer"])
				}
				if body == "after the kill C" {
					finishedC = true
					if res["status"] != "done" || res["answer"] != "answered by the survivor" {
						t.Errorf("C finished %v %q", res["status"], res["answer"])
					}
				}
			}
		case <-ctx.Done():
			t.Fatal("C never finished")
		}
	}
	if !resynced {
		t.Error("no resync event on the stream between the lost activation and the new one")
	}
	// B (resumed by the survivor, before C) and C each finished once.
	if finished["stream B"] != 1 || finished["after the kill C"] != 1 {
		t.Errorf("turn_finished after the kill: %v, want B and C once each", finished)
	}
	// One stored user message per input.
	stored := fr.userMessages(t, id)
	for _, body := range []string{"first", "stream B", "after the kill C"} {
		n := 0
		for text, c := range stored {
			if strings.Contains(text, body) {
				n += c
			}
		}
		if n != 1 {
			t.Errorf("%d stored user messages with %q, want 1 (stored: %v)", n, body, stored)
		}
	}
	select {
	case <-victim.exited:
	case <-time.After(10 * time.Second):
		t.Error("the killed worker was not reaped")
	}
	t.Logf("failover: claimed on the survivor %.3f s after the SIGKILL; C accepted %.3f s after it", claimed.Seconds(), accepted.Seconds())
}

// TestPassivation: a worker passivates idle session grains (each session
// closed, its grain stopped) and the next message activates each again
// from the store: a new claim (epoch 2), the history intact. 20 sessions;
// the time from sending the message to its acceptance, which includes
// the re-activation (claim, open the session from the store, resume), is
// logged for each (issue 29 asks for < 500 ms; tests assert no
// wall-clock time).
func TestPassivation(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes")
	}
	const n = 20
	script := helloScript(n + 1)
	for range n {
		script.Add("orchestrator", llmtest.Step{When: "remember", Text: "I remember"})
	}
	f := newFleet(t, script, "")
	f.worker("worker-1", "--idle", "300ms")
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	ids := make([]string, n)
	for i := range ids {
		code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
		if err != nil || code != http.StatusCreated {
			t.Fatalf("create session: %d %v %v", code, s, err)
		}
		ids[i] = s["id"].(string)
		if st, _, err := fr.turn(ctx, ids[i], fmt.Sprintf("hello there %d", i)); err != nil || st != "done" {
			t.Fatalf("first turn: %s %v", st, err)
		}
	}
	// Each grain passivates 300 ms after its last event; logged by the
	// worker, in the shared log.
	logFile := filepath.Join(f.dir, "state", "odin", "odin.log")
	passivated := regexp.MustCompile(`"session":"([^"]+)"[^\n]*session idle; passivating`)
	for {
		b, _ := os.ReadFile(logFile)
		seen := map[string]bool{}
		for _, m := range passivated.FindAllSubmatch(b, -1) {
			seen[string(m[1])] = true
		}
		all := true
		for _, id := range ids {
			all = all && seen[id]
		}
		if all {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("idle sessions never passivated: %d of %d", len(seen), n)
		case <-time.After(50 * time.Millisecond):
		}
	}
	for id, c := range f.owners(ctx, ids) {
		if c.Epoch != 1 {
			t.Fatalf("session %s: epoch %d before the next message, want 1", id, c.Epoch)
		}
	}
	took := make([]time.Duration, 0, n)
	for _, id := range ids {
		evs, err := fr.events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "remember"}); err != nil || code != http.StatusAccepted {
			t.Fatalf("message after passivation: %d %v %v", code, out, err)
		}
		took = append(took, time.Since(t0))
		for done := false; !done; {
			select {
			case ev := <-evs:
				if ev.typ == "turn_finished" {
					res, _ := ev.data["result"].(map[string]any)
					in, _ := res["input"].(map[string]any)
					if in["body"] == "remember" {
						done = true
						if res["status"] != "done" || res["answer"] != "I remember" {
							t.Errorf("turn after passivation: %v %q", res["status"], res["answer"])
						}
					}
				}
			case <-ctx.Done():
				t.Fatal("the turn after passivation never finished")
			}
		}
	}
	for id, c := range f.owners(ctx, ids) {
		if c.Epoch != 2 {
			t.Errorf("session %s: epoch %d after the re-activation, want 2", id, c.Epoch)
		}
	}
	reqs := f.model.RequestsFor("orchestrator")
	var history strings.Builder
	for _, m := range reqs[len(reqs)-1].Body.LLMMessages() {
		history.WriteString(m.Content + "\n")
	}
	if !strings.Contains(history.String(), fmt.Sprintf("hello there %d", n-1)) {
		t.Errorf("the re-activated session forgot its history:\n%s", history.String())
	}
	// A client's Idempotency-Key is the input's ID in the store's ledger:
	// the input the first activation took is a duplicate for the second.
	keyed := func() (int, map[string]any) {
		b, _ := json.Marshal(map[string]string{"body": "hello once"})
		req, _ := http.NewRequest("POST", fr.base+"/v1/sessions/"+ids[0]+"/messages", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+fr.token)
		req.Header.Set("Idempotency-Key", "key-"+ids[0])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	before := len(f.model.RequestsFor("orchestrator"))
	if code, out := keyed(); code != http.StatusAccepted || out["duplicate"] == true {
		t.Fatalf("a keyed input: %d %v", code, out)
	}
	// Once its turn is over the session passivates again; the repeat then
	// goes to a third activation.
	for {
		b, _ := os.ReadFile(logFile)
		times := 0
		for _, m := range passivated.FindAllSubmatch(b, -1) {
			if string(m[1]) == ids[0] {
				times++
			}
		}
		if times >= 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the session did not passivate again")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if code, out := keyed(); code != http.StatusOK || out["duplicate"] != true {
		t.Fatalf("the keyed input repeated to the next activation: %d %v, want 200 and a duplicate", code, out)
	}
	if c := f.owners(ctx, ids[:1])[ids[0]]; c.Epoch != 3 {
		t.Errorf("epoch %d after the repeat, want 3 (a new activation answered it)", c.Epoch)
	}
	if got := len(f.model.RequestsFor("orchestrator")); got != before+1 {
		t.Errorf("%d model requests for the keyed input and its repeat, want 1", got-before)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	t.Logf("re-activation (message accepted by a passivated session) over %d sessions: p50 %.1f ms, max %.1f ms",
		n, float64(took[n/2].Microseconds())/1e3, float64(took[n-1].Microseconds())/1e3)
}

// TestZombie: the owner of a session is stopped (SIGSTOP) mid-stream;
// the cluster drops it after the TTL and a survivor claims the session
// (epoch 2) and takes the next input. When the stopped worker resumes
// (SIGCONT), its writes to the session are refused by the fence and its
// activation stops itself; the stored history holds no reply of its.
// PostgreSQL, and a state directory per process, as on separate hosts
// (on one host the session lease would rightly keep the survivor out
// while the stopped process lives).
func TestZombie(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes and PostgreSQL")
	}
	script := llmtest.NewScript()
	script.Add("orchestrator",
		llmtest.Step{When: "first", Text: "first answer"},
		llmtest.Step{When: "stream", ChunkDelay: llmtest.Duration(100 * time.Millisecond), ChunkSize: 4, Text: "ZOMBIE " + strings.Repeat("streaming text ", 20)},
		// B again, resumed by the survivor.
		llmtest.Step{When: "stream", Text: "B finished by the survivor"},
	)
	for range 5 {
		script.Add("orchestrator", llmtest.Step{When: "after", Text: "answered by the survivor"})
	}
	pgURL := pgtest.New(t).Database(t)
	f := newFleet(t, script, pgURL)
	f.ownState = true
	workers := []*proc{f.worker("worker-1"), f.worker("worker-2")}
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session: %d %v %v", code, s, err)
	}
	id := s["id"].(string)
	if st, _, err := fr.turn(ctx, id, "first"); err != nil || st != "done" {
		t.Fatalf("first turn: %s %v", st, err)
	}
	before := f.owners(ctx, []string{id})[id]
	var zombie, survivor *proc
	for _, w := range workers {
		if w.member == before.Owner {
			zombie = w
		} else {
			survivor = w
		}
	}
	if zombie == nil {
		t.Fatalf("session owned by %q, not a worker", before.Owner)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	evs, err := fr.events(sctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "stream B"}); err != nil || code != http.StatusAccepted {
		t.Fatalf("message B: %d %v %v", code, out, err)
	}
	waitStreaming(ctx, t, evs, "stream B")
	stopped := time.Now()
	if err := zombie.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = zombie.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "after the stop C"})
	accepted := time.Since(stopped)
	if err != nil || code != http.StatusAccepted {
		t.Fatalf("message C: %d %v %v", code, out, err)
	}
	for done := false; !done; {
		select {
		case ev := <-evs:
			if ev.typ == "turn_finished" {
				res, _ := ev.data["result"].(map[string]any)
				in, _ := res["input"].(map[string]any)
				done = in["body"] == "after the stop C"
			}
		case <-ctx.Done():
			t.Fatal("C never finished")
		}
	}
	after := f.owners(ctx, []string{id})[id]
	if after.Owner != survivor.member || after.Epoch != 2 {
		t.Fatalf("after the stop: owner %s epoch %d, want the survivor at epoch 2", after.Owner, after.Epoch)
	}
	// The survivor's history once it is settled (two reads alike): the
	// zombie must not change a byte of it.
	var settled string
	for prev := ""; ; prev = settled {
		settled = fr.messageLines(t, id)
		if settled == prev {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	// Resume the zombie: its stream goes on, every write of it fenced.
	_ = zombie.cmd.Process.Signal(syscall.SIGCONT)
	resumed = true
	continued := time.Now()
	zlog := filepath.Join(f.dir, "state-"+zombie.name, "odin", "odin.log")
	for {
		b, _ := os.ReadFile(zlog)
		if bytes.Contains(b, []byte("a later claim owns the session; stopping this activation")) {
			t.Logf("zombie: its activation stopped within %.3f s of the SIGCONT (log polled every 50 ms)", time.Since(continued).Seconds())
			break
		}
		// Or the zombie found it was dropped first, and its node left
		// (closing the activation) to rejoin under a new member ID.
		if strings.Contains(zombie.out.String(), "was dropped by the cluster") {
			t.Logf("zombie: dropped while alive, it left to rejoin within %.3f s of the SIGCONT (polled every 50 ms)", time.Since(continued).Seconds())
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the zombie's activation never stopped; its log:\n%s", b)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Let anything the zombie could still write land, then read the
	// transcript: no reply of the zombie's is complete in it.
	time.Sleep(2 * time.Second)
	if n := zombie.metric(t, "odin_fenced_writes_total", ""); n <= 0 {
		t.Errorf("the zombie counts %v fenced writes, want some", n)
	}
	if n := survivor.metric(t, "odin_activations_total", `reason="failover"`); n != 1 {
		t.Errorf("the survivor counts %v failover activations, want 1", n)
	}
	var export bytes.Buffer
	req, _ := http.NewRequest("GET", fr.base+"/v1/sessions/"+id+"/export?format=jsonl", nil)
	req.Header.Set("Authorization", "Bearer "+fr.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(&export, resp.Body)
	resp.Body.Close()
	if got := fr.messageLines(t, id); got != settled {
		t.Errorf("the stored history changed after the zombie resumed:\nbefore:\n%s\nafter:\n%s", settled, got)
	}
	full := "ZOMBIE " + strings.Repeat("streaming text ", 20)
	if strings.Contains(export.String(), strings.TrimSpace(full)) {
		t.Errorf("the zombie completed its reply in the store after losing the session:\n%s", export.String())
	}
	// The zombie, dropped while alive, rejoins under a new member ID
	// (TestRejoinAfterDrop): the topology changes, and the session may
	// be claimed again (epoch 3 or later, on either worker); never by
	// the zombie's old ID, whose writes the history check above covers.
	if n := f.owners(ctx, []string{id})[id]; n.Owner == zombie.member || n.Epoch < 2 {
		t.Errorf("after the zombie resumed: owner %s epoch %d, want a claim after the survivor's, not by the zombie's old member ID %s", n.Owner, n.Epoch, zombie.member)
	}
	t.Logf("zombie: C accepted %.3f s after the SIGSTOP", accepted.Seconds())
}

// TestApprovalAcrossNodes: a command the session on a worker asks
// approval for is answered through serve's HTTP API; it runs once, on
// the worker, in the project.
func TestApprovalAcrossNodes(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap not installed: commands cannot run sandboxed")
	}
	script := llmtest.NewScript()
	script.Add("orchestrator",
		llmtest.Step{When: "approve me", ToolCalls: []llmtest.ToolCall{llmtest.Call("ExecuteCommand", map[string]any{"command": "rm keep.txt"})}},
		llmtest.Step{When: "Exit code", Text: "removed"},
	)
	f := newFleet(t, script, "")
	keep := filepath.Join(f.project, "keep.txt")
	if err := os.WriteFile(keep, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.worker("worker-1")
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session: %d %v %v", code, s, err)
	}
	id := s["id"].(string)
	evs, err := fr.events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "approve me"}); err != nil || code != http.StatusAccepted {
		t.Fatalf("message: %d %v %v", code, out, err)
	}
	asked := 0
	for finished := false; !finished; {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatal("the event stream ended")
			}
			switch ev.typ {
			case "approval_requested":
				asked++
				if _, err := os.Stat(keep); err != nil {
					t.Fatalf("the command ran before it was approved: %v", err)
				}
				aid, _ := ev.data["id"].(string)
				if code, out, err := fr.call("GET", "/v1/sessions/"+id+"/approvals", nil); err != nil || code != http.StatusOK {
					t.Errorf("pending approvals: %d %v %v", code, out, err)
				}
				if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/approvals/"+aid, map[string]string{"decision": "once"}); err != nil || code != http.StatusNoContent {
					t.Fatalf("answer %s: %d %v %v", aid, code, out, err)
				}
			case "turn_finished":
				finished = true
				res, _ := ev.data["result"].(map[string]any)
				if res["status"] != "done" || res["answer"] != "removed" {
					t.Errorf("turn %v %q", res["status"], res["answer"])
				}
			}
		case <-ctx.Done():
			t.Fatal("the turn never finished")
		}
	}
	if asked != 1 {
		t.Errorf("%d approval requests, want 1", asked)
	}
	if _, err := os.Stat(keep); !os.IsNotExist(err) {
		t.Errorf("the approved command did not run on the worker: %v", err)
	}
	if n := len(f.model.RequestsFor("orchestrator")); n != 2 {
		t.Errorf("%d model requests, want 2 (the call, then its result once)", n)
	}
}

// waitStreaming returns once the turn of the input body streams text: its
// turn_started, then a text_delta (the stream replays the earlier turns'
// deltas first, which must not count).
func waitStreaming(ctx context.Context, t *testing.T, evs <-chan sse, body string) {
	t.Helper()
	for started := false; ; {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("the event stream ended before %q streamed", body)
			}
			switch ev.typ {
			case "turn_started":
				in, _ := ev.data["input"].(map[string]any)
				started = in["body"] == body
			case "text_delta":
				if started {
					return
				}
			}
		case <-ctx.Done():
			t.Fatalf("%q never streamed", body)
		}
	}
}

// longCluster skips the failover, passivation and PostgreSQL runs unless
// ODIN_CLUSTER_TESTS=1 (make test-cluster): they take minutes, and cluster
// runs belong beside the benchmarks, not in make test. TestPlacement, the
// fleet's basic check, always runs.
func longCluster(t *testing.T) {
	t.Helper()
	if os.Getenv("ODIN_CLUSTER_TESTS") != "1" {
		t.Skip("a long cluster run: make test-cluster (ODIN_CLUSTER_TESTS=1) runs it")
	}
}

// TestApprovalFailover: the worker whose session waits for an approval is
// SIGKILLed before anyone answers. The survivor takes the session over
// and resumes the turn: the command the lost node asked about never ran,
// so the model asks for it again and the survivor asks for approval
// again; the front lists only the survivor's approval (the lost one can
// no longer be answered: answering it fails), and the command approved
// through serve runs once.
func TestApprovalFailover(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap not installed: commands cannot run sandboxed")
	}
	cmd := llmtest.Call("ExecuteCommand", map[string]any{"command": "rm -f keep.txt && echo ran >> runs.txt"})
	script := llmtest.NewScript()
	script.Add("orchestrator",
		llmtest.Step{When: "approve me", ToolCalls: []llmtest.ToolCall{cmd}},
		llmtest.Step{When: "Exit code", Text: "ran it"},
		// The survivor's resumption: the lost node's call never ran (the
		// store repairs it as cancelled when it was saved, else the turn
		// starts over from its input), so the model asks for it again.
		llmtest.Step{ToolCalls: []llmtest.ToolCall{cmd}},
	)
	f := newFleet(t, script, "")
	workers := []*proc{f.worker("worker-1"), f.worker("worker-2")}
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session: %d %v %v", code, s, err)
	}
	id := s["id"].(string)
	evs, err := fr.events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "approve me"}); err != nil || code != http.StatusAccepted {
		t.Fatalf("message: %d %v %v", code, out, err)
	}
	runs := filepath.Join(f.project, "runs.txt")
	nextApproval := func() string {
		t.Helper()
		for {
			select {
			case ev, ok := <-evs:
				if !ok {
					t.Fatal("the event stream ended")
				}
				switch ev.typ {
				case "approval_requested":
					aid, _ := ev.data["id"].(string)
					return aid
				case "turn_finished":
					t.Fatalf("the turn finished before an approval: %v", ev.data)
				}
			case <-ctx.Done():
				t.Fatal("no approval request")
			}
		}
	}
	first := nextApproval()
	owner := f.owners(ctx, []string{id})[id]
	var victim *proc
	for _, w := range workers {
		if w.member == owner.Owner {
			victim = w
		}
	}
	if victim == nil {
		t.Fatalf("session owned by %q, not a worker", owner.Owner)
	}
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	second := nextApproval()
	if second == first {
		t.Fatalf("the survivor's approval has the lost one's ID %s", first)
	}
	if _, err := os.Stat(runs); !os.IsNotExist(err) {
		t.Fatalf("the command ran before the second approval was answered: %v", err)
	}
	if c := f.owners(ctx, []string{id})[id]; c.Epoch != 2 || c.Owner == victim.member {
		t.Fatalf("after the kill: owner %s epoch %d, want the survivor at epoch 2", c.Owner, c.Epoch)
	}
	req, _ := http.NewRequest("GET", fr.base+"/v1/sessions/"+id+"/approvals", nil)
	req.Header.Set("Authorization", "Bearer "+fr.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("pending approvals: %d %s", resp.StatusCode, body)
	}
	listed := string(body)
	if !strings.Contains(listed, second) || strings.Contains(listed, first) {
		t.Errorf("pending approvals %s, want the survivor's %s and not the lost %s", listed, second, first)
	}
	if code, _, err := fr.call("POST", "/v1/sessions/"+id+"/approvals/"+first, map[string]string{"decision": "once"}); err != nil || code == http.StatusNoContent {
		t.Errorf("answering the lost activation's approval: %d %v, want a refusal", code, err)
	}
	if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/approvals/"+second, map[string]string{"decision": "once"}); err != nil || code != http.StatusNoContent {
		t.Fatalf("answer %s: %d %v %v", second, code, out, err)
	}
	for finished := false; !finished; {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatal("the event stream ended")
			}
			switch ev.typ {
			case "approval_requested":
				t.Fatalf("asked a third time: %v", ev.data)
			case "turn_finished":
				finished = true
				res, _ := ev.data["result"].(map[string]any)
				if res["status"] != "done" || res["answer"] != "ran it" {
					t.Errorf("turn %v %q", res["status"], res["answer"])
				}
			}
		case <-ctx.Done():
			t.Fatal("the turn never finished")
		}
	}
	b, err := os.ReadFile(runs)
	if err != nil || string(b) != "ran\n" {
		t.Errorf("runs.txt %q %v, want the command run once", b, err)
	}
}
