package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/internal/serve"
)

// TestMain lets the test binary be the sandbox's helper, as odin's main
// is: commands that sessions run re-execute it.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// loadEnv is a project, a state directory and the scripted model for
// in-process serve tests. Sessions come from the same opener odin serve
// uses, so they are real Orchestrators with a real store.
type loadEnv struct {
	root   string
	model  *llmtest.Server
	srv    *serve.Server
	opener sessionOpener
	http   *httptest.Server
	token  string
}

// newLoadEnv starts the server; with external the scripted model runs in
// its own process, so that its record of requests does not count in the
// benchmark's heap figures.
func newLoadEnv(t testing.TB, sessions int, idle time.Duration, external bool) *loadEnv {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "proj")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := loadScript(sessions)
	var model *llmtest.Server
	modelURL := ""
	if external {
		modelURL = externalModel(t, script, work)
	} else {
		if model, err = llmtest.Serve("127.0.0.1:0", script); err != nil {
			t.Fatal(err)
		}
		modelURL = model.URL()
	}
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	t.Setenv("OPENAI_BASE_URL", modelURL)
	g := &globalFlags{logLevel: "error"}
	opener := newSessionOpener(g)
	srv, err := serve.New(serve.Options{Opener: serveOpener{opener}, Token: "t0k", Roots: []string{root}, Idle: idle})
	if err != nil {
		t.Fatal(err)
	}
	return &loadEnv{root: root, model: model, srv: srv, opener: opener, http: httptest.NewServer(srv.Handler()), token: "t0k"}
}

func (e *loadEnv) close() {
	e.srv.Shutdown()
	e.opener.Close()
	e.http.CloseClientConnections()
	e.http.Close()
	if e.model != nil {
		e.model.Close()
	}
	http.DefaultClient.CloseIdleConnections()
}

func (e *loadEnv) call(method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.http.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, nil
}

// event is one SSE event with the time the client read it.
type event struct {
	typ  string
	data map[string]any
	at   time.Time
}

func (e *loadEnv) stream(ctx context.Context, id string) (<-chan event, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/v1/sessions/"+id+"/events?last_event_id=0", nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	ch := make(chan event, 256)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && ev.typ != "":
				ev.at = time.Now()
				ch <- ev
				ev = event{}
			case strings.HasPrefix(line, "event: "):
				ev.typ = line[7:]
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(line[6:]), &ev.data)
			}
		}
	}()
	return ch, nil
}

// driveSession runs one session's three messages; role "cancel" cancels
// its slow second message, role "approve" answers its approval. It
// returns the statuses of its turns and the event latencies it saw.
func (e *loadEnv) driveSession(ctx context.Context, role string) (id string, statuses []string, lat []time.Duration, err error) {
	code, s, err := e.call("POST", "/v1/sessions", map[string]string{"project": e.root})
	if err != nil || code != http.StatusCreated {
		return "", nil, nil, fmt.Errorf("create: %d %v %v", code, s, err)
	}
	id = s["id"].(string)
	evs, err := e.stream(ctx, id)
	if err != nil {
		return id, nil, nil, err
	}
	second := "hello again"
	switch role {
	case "cancel":
		second = "slow"
	case "approve":
		second = "approve me"
	}
	for _, body := range []string{"hello", second, "hello once more"} {
		if code, out, err := e.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": body}); err != nil || code != http.StatusAccepted {
			return id, nil, nil, fmt.Errorf("message: %d %v %v", code, out, err)
		}
	}
	for len(statuses) < 3 {
		var ev event
		select {
		case ev = <-evs:
		case <-ctx.Done():
			return id, statuses, lat, fmt.Errorf("session %s (%s): %w after %v", id, role, ctx.Err(), statuses)
		}
		if t, ok := ev.data["time"].(string); ok {
			if sent, err := time.Parse(time.RFC3339Nano, t); err == nil {
				lat = append(lat, ev.at.Sub(sent))
			}
		}
		switch ev.typ {
		case "turn_started":
			if role == "cancel" && ev.data["input"].(map[string]any)["body"] == "slow" {
				e.call("POST", "/v1/sessions/"+id+"/cancel", nil)
			}
		case "approval_requested":
			e.call("POST", "/v1/sessions/"+id+"/approvals/"+ev.data["id"].(string), map[string]string{"decision": "once"})
		case "turn_finished":
			res := ev.data["result"].(map[string]any)
			st := res["status"].(string)
			if st == "failed" {
				st += fmt.Sprintf("(%v)", res["error"])
			}
			statuses = append(statuses, st)
		case "":
			return id, statuses, lat, fmt.Errorf("stream ended")
		}
	}
	return id, statuses, lat, nil
}

func openFDs(t testing.TB) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(fds)
}

// TestServeHundredSessions: 100 concurrent sessions against the scripted
// model, each sending 3 messages, one cancelling, one answering an
// approval; then every idle session is passivated and one is restored by
// its next message. No goroutine or file descriptor outlives the server.
func TestServeHundredSessions(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 10
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fdsBefore := openFDs(t)
	e := newLoadEnv(t, n, time.Hour, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	type result struct {
		id       string
		role     string
		statuses []string
		err      error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		role := ""
		switch i {
		case 0:
			role = "cancel"
		case 1:
			role = "approve"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, st, _, err := e.driveSession(ctx, role)
			results[i] = result{id, role, st, err}
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		want := "done done done"
		if r.role == "cancel" {
			want = "done cancelled done"
		}
		if got := strings.Join(r.statuses, " "); got != want {
			t.Errorf("session %s (%s): turns %s, want %s", r.id, r.role, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "keep.txt")); !os.IsNotExist(err) {
		t.Errorf("the approved command did not run: %v", err)
	}

	// Passivation: with a zero idle time every session is idle now.
	e.srv.SetIdle(0)
	if got := e.srv.Sweep(); got != n {
		t.Errorf("passivated %d sessions, want %d", got, n)
	}
	id := results[2].id
	code, s, err := e.call("GET", "/v1/sessions/"+id, nil)
	if err != nil || code != 200 || s["active"] != false {
		t.Fatalf("session after sweep: %d %v %v", code, s, err)
	}
	evs, err := e.stream(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	before := len(e.model.RequestsFor("orchestrator"))
	if code, out, err := e.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "hello after a rest"}); err != nil || code != http.StatusAccepted {
		t.Fatalf("message to a passivated session: %d %v %v", code, out, err)
	}
	for ev := range evs {
		if ev.typ == "turn_finished" {
			break
		}
	}
	reqs := e.model.RequestsFor("orchestrator")
	if len(reqs) != before+1 {
		t.Fatalf("model requests %d, want %d", len(reqs), before+1)
	}
	var history strings.Builder
	for _, m := range reqs[len(reqs)-1].Body.LLMMessages() {
		history.WriteString(m.Content + "\n")
	}
	if !strings.Contains(history.String(), "hello once more") {
		t.Errorf("the restored session forgot its history:\n%s", history.String())
	}
	cancel()
	e.close()
	// The servers' goroutines end asynchronously after Close.
	deadline := time.Now().Add(10 * time.Second)
	for openFDs(t) > fdsBefore && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if after := openFDs(t); after > fdsBefore {
		t.Errorf("%d file descriptors open after the server stopped, %d before", after, fdsBefore)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkServeSessions runs the 100-session load (3 messages each) and
// reports the heap per session while every session is in a turn
// (active), after they are passivated with no client connected (idle),
// and the p99 latency from an
// event's publication to its arrival at the SSE client.
func BenchmarkServeSessions(b *testing.B) {
	const n = 100
	for range b.N {
		e := newLoadEnv(b, n, time.Hour, true)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		base := heapInUse()
		var mu sync.Mutex
		var lats []time.Duration
		ids := make([]string, n)
		ctxs := make([]context.Context, n)
		stops := make([]context.CancelFunc, n)
		for i := range n {
			ctxs[i], stops[i] = context.WithCancel(ctx)
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, _, lat, err := e.driveSession(ctxs[i], "")
				if err != nil {
					b.Error(err)
				}
				mu.Lock()
				ids[i] = id
				lats = append(lats, lat...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		// Active: every session waiting on a slow model call.
		var streams []<-chan event
		for i, id := range ids {
			evs, err := e.stream(ctxs[i], id)
			if err != nil {
				b.Fatal(err)
			}
			streams = append(streams, evs)
			e.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "slow"})
		}
		for i := range ids {
			for ev := range streams[i] {
				if ev.typ == "turn_started" {
					break
				}
			}
		}
		active := heapInUse()
		for i, id := range ids {
			e.call("POST", "/v1/sessions/"+id+"/cancel", nil)
			for ev := range streams[i] {
				if ev.typ == "turn_finished" {
					break
				}
			}
		}
		// Idle: passivated, with no client connected.
		for _, stop := range stops {
			stop()
		}
		e.srv.SetIdle(0)
		e.srv.Sweep()
		http.DefaultClient.CloseIdleConnections()
		idle := heapInUse()
		sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
		if len(lats) > 0 {
			b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "p99-event-ms")
		}
		b.ReportMetric(float64(int64(active)-int64(base))/n, "B/active-session")
		b.ReportMetric(float64(int64(idle)-int64(base))/n, "B/idle-session")
		cancel()
		e.close()
	}
}

// loadScript: every session sends "hello" messages; one asks for a command
// that needs approval, one sends a slow message it cancels; after
// passivation, one more message per restored session.
func loadScript(sessions int) *llmtest.Script {
	script := llmtest.NewScript()
	script.Add("orchestrator",
		llmtest.Step{When: "approve me", ToolCalls: []llmtest.ToolCall{llmtest.Call("ExecuteCommand", map[string]any{"command": "rm keep.txt"})}},
		llmtest.Step{When: "Exit code", Text: "removed"},
		llmtest.Step{When: "slow", Latency: llmtest.Duration(time.Minute), Text: "too late"},
	)
	for range sessions*3 + 10 {
		script.Add("orchestrator", llmtest.Step{When: "hello", Text: "hi"})
		script.Add("orchestrator", llmtest.Step{When: "slow", Latency: llmtest.Duration(time.Minute), Text: "too late"})
	}
	return script
}

// externalModel runs cmd/scripted-model with script and returns its URL.
func externalModel(t testing.TB, script *llmtest.Script, dir string) string {
	bin := filepath.Join(dir, "scripted-model")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/odin-code/odin/cmd/scripted-model").CombinedOutput(); err != nil {
		t.Fatalf("build scripted-model: %v\n%s", err, out)
	}
	raw, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "script.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--script", file)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("scripted-model printed no URL: %v", err)
	}
	return strings.TrimSpace(line)
}
