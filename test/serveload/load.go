// Package serveload drives a built `odin serve` binary with many
// concurrent sessions over its HTTP API, against the scripted model, and
// checks afterwards that every session's stored history holds every
// message sent and every answer received.
//
// The CI test (load_test.go) runs it small, with a graceful restart of
// the server in the middle; `make bench-serve` (cmd benchserve) runs it
// large and reports throughput, latency against one session, the serve
// process's CPU per turn, its memory and its file descriptors.
package serveload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// Config is one load run.
type Config struct {
	// Bin is the odin binary to run as the server.
	Bin string
	// Sessions run Turns turns each, all at once; Single turns of one
	// session run first, alone, as the latency baseline (0: none).
	Sessions, Turns, Single int
	// Restart stops the server gracefully (SIGTERM) once half the turns
	// are done and starts it again on the same state directory; sessions
	// whose turn it interrupted send that message again.
	Restart bool
	// ModelLatency is how long the scripted model takes before the first
	// byte of each answer (a provider's time to first token); 0 answers at
	// once.
	ModelLatency time.Duration
	// Settle is how long the server is left idle after the burst before
	// its memory, file descriptors and model connections are read again.
	Settle time.Duration
	// Dir holds the project and the state directory (a temp dir if empty).
	Dir string
	// Env is added to the server's environment (e.g. ODIN_SERVE_PPROF).
	Env []string
	// Logf, if set, reports progress.
	Logf func(format string, args ...any)
}

// Result is what a run measured.
type Result struct {
	Sessions, Turns int
	// Wall is the burst's duration; TurnsPerSec its throughput.
	Wall        time.Duration
	TurnsPerSec float64
	// Latencies of the burst's turns (message posted to turn_finished
	// received) and of the single session's, sorted.
	Lat, SingleLat []time.Duration
	// CPUPerTurn is the serve process's user+system CPU during the burst
	// divided by the turns done (and over both processes with Restart).
	CPUPerTurn time.Duration
	// PeakRSS is the serve process's high-water mark (VmHWM); RSSAfter
	// its resident set Settle after the burst.
	PeakRSS, RSSAfter int64
	// PeakFDs and FDsAfter count its open file descriptors; ModelConns
	// its TCP connections to the model server Settle after the burst.
	PeakFDs, FDsAfter, ModelConns int
	// Retried counts turns the restart interrupted and that were sent
	// again; Restarts how many times the server was restarted.
	Retried, Restarts int
	// Incomplete counts the sessions whose export missed a question or
	// an answer right after the burst, Lost those still missing one 5 s
	// later; JournalQueued is the journals' queued writes at the first
	// check, from /metrics (-1 for a server without it).
	Incomplete, Lost, JournalQueued int
}

// P returns the q-quantile (0..1) of sorted durations.
func P(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}

// question and answer of session s's turn t: distinct per turn, so that
// an answer found in a session's export proves that turn was stored.
func question(s, t int) string { return fmt.Sprintf("load question <%d.%d>", s, t) }
func answer(s, t int) string   { return fmt.Sprintf("load answer <%d.%d> done", s, t) }

// script answers every question of the run, each twice over when a
// restart may make a session ask again.
func script(sessions, turns, single int, restart bool, latency time.Duration) *llmtest.Script {
	sc := llmtest.NewScript()
	copies := 1
	if restart {
		copies = 2
	}
	add := func(s, t int) {
		for range copies {
			sc.Add("orchestrator", llmtest.Step{When: question(s, t), Text: answer(s, t), Latency: llmtest.Duration(latency)})
		}
	}
	for t := range single {
		add(-1, t)
	}
	// Turn-major: the scripted server scans its steps from the first
	// unused one, so the order of the requests keeps the scan short.
	for t := range turns {
		for s := range sessions {
			add(s, t)
		}
	}
	return sc
}

// server is one odin serve process.
type server struct {
	cmd    *exec.Cmd
	base   string
	token  string
	stderr *bytes.Buffer
	exited chan struct{}
}

// runner holds a run's shared state.
type runner struct {
	cfg    Config
	env    []string
	root   string
	hc     *http.Client
	model  *llmtest.Server
	mport  string
	srvMu  sync.RWMutex
	srv    *server
	ready  chan struct{} // closed while srv is up; replaced during a restart
	cpu    time.Duration // CPU of servers that have exited
	peak   atomic.Int64  // peak fds seen
	done   atomic.Int64  // turns done in the burst
	retry  atomic.Int64
	restMu sync.Mutex
	rests  sync.WaitGroup
	rest   atomic.Bool // a restart has been done
}

// Run runs cfg and checks every session's export; the error names every
// session whose stored history misses a message or an answer.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "odin-serveload")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	}
	dir, err := filepath.EvalSymlinks(cfg.Dir)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "proj")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	model, err := llmtest.Serve("127.0.0.1:0", script(cfg.Sessions, cfg.Turns, cfg.Single, cfg.Restart, cfg.ModelLatency))
	if err != nil {
		return nil, err
	}
	defer model.Close()
	_, mport, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(model.URL(), "/v1"), "http://"))
	env := append(os.Environ(),
		"HOME="+filepath.Join(dir, "home"), "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "NO_COLOR=1",
		"OPENAI_BASE_URL="+model.URL(), "OPENAI_API_KEY=")
	env = append(env, cfg.Env...)
	tr := &http.Transport{MaxIdleConnsPerHost: 4096, MaxConnsPerHost: 0, IdleConnTimeout: time.Minute}
	r := &runner{cfg: cfg, env: env, root: root, model: model, mport: mport,
		hc: &http.Client{Transport: tr}, ready: make(chan struct{})}
	defer tr.CloseIdleConnections()
	if err := r.start(); err != nil {
		return nil, err
	}
	defer r.stop()
	res := &Result{Sessions: cfg.Sessions, Turns: cfg.Turns}

	sampleCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go r.sample(sampleCtx)

	// The single session's turns: the latency of an unloaded server.
	if cfg.Single > 0 {
		id, err := r.create(ctx)
		if err != nil {
			return nil, err
		}
		for t := range cfg.Single {
			d, err := r.turn(ctx, id, -1, t)
			if err != nil {
				return nil, fmt.Errorf("single session: %w", err)
			}
			res.SingleLat = append(res.SingleLat, d)
		}
		slices.Sort(res.SingleLat)
		if err := r.check(ctx, id, -1, cfg.Single); err != nil {
			return nil, err
		}
	}

	// Sessions are created first, in parallel, so that the burst measures
	// turns only.
	ids := make([]string, cfg.Sessions)
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Sessions)
	sem := make(chan struct{}, 64)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			id, err := r.create(ctx)
			if err != nil {
				errs <- err
				return
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return nil, fmt.Errorf("create sessions: %w", err)
	default:
	}
	cfg.Logf("created %d sessions", cfg.Sessions)

	cpu0 := r.cpuNow()
	start := time.Now()
	lats := make([][]time.Duration, cfg.Sessions)
	total := int64(cfg.Sessions * cfg.Turns)
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range cfg.Turns {
				d, err := r.turn(ctx, id, i, t)
				if err != nil {
					errs <- fmt.Errorf("session %d (%s) turn %d: %w", i, id, t, err)
					return
				}
				lats[i] = append(lats[i], d)
				if n := r.done.Add(1); cfg.Restart && n == total/2 {
					r.rests.Add(1)
					go func() {
						defer r.rests.Done()
						r.restart()
					}()
				}
			}
		}()
	}
	wg.Wait()
	r.rests.Wait()
	res.Wall = time.Since(start)
	cpu := r.cpuNow() - cpu0
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	for _, l := range lats {
		res.Lat = append(res.Lat, l...)
	}
	slices.Sort(res.Lat)
	res.TurnsPerSec = float64(len(res.Lat)) / res.Wall.Seconds()
	if len(res.Lat) > 0 {
		res.CPUPerTurn = cpu / time.Duration(len(res.Lat))
	}
	res.Retried = int(r.retry.Load())
	if r.rest.Load() {
		res.Restarts = 1
	}
	cfg.Logf("burst: %d turns in %v", len(res.Lat), res.Wall.Round(time.Millisecond))

	// The client's own idle connections to the server are not the
	// server's to account for.
	tr.CloseIdleConnections()
	pid := r.pid()
	res.PeakRSS = procStatus(pid, "VmHWM")
	res.PeakFDs = int(r.peak.Load())
	if cfg.Settle > 0 {
		select {
		case <-time.After(cfg.Settle):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	res.RSSAfter = procStatus(pid, "VmRSS")
	res.FDsAfter = countFDs(pid)
	res.ModelConns = r.modelConns(pid)

	// Every session's export holds every question and answer. A session
	// found incomplete is read again after a pause, to tell writes that
	// were late (turn_finished before its writes were committed) from
	// writes that were lost.
	res.JournalQueued = r.journalQueued(ctx)
	checkAll := func(which []int) (bad []string, failed []int) {
		var badMu sync.Mutex
		for _, i := range which {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if err := r.check(ctx, ids[i], i, cfg.Turns); err != nil {
					badMu.Lock()
					bad = append(bad, err.Error())
					failed = append(failed, i)
					badMu.Unlock()
				}
			}()
		}
		wg.Wait()
		return bad, failed
	}
	all := make([]int, len(ids))
	for i := range all {
		all[i] = i
	}
	bad, failed := checkAll(all)
	res.Incomplete = len(bad)
	if len(bad) > 0 {
		select {
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		bad, _ = checkAll(failed)
		cfg.Logf("%d sessions' exports were incomplete right after the burst, %d still 5 s later (journal queue then: %d writes)",
			res.Incomplete, len(bad), res.JournalQueued)
	}
	res.Lost = len(bad)
	if len(bad) > 0 {
		slices.Sort(bad)
		more := ""
		if len(bad) > 10 {
			more = fmt.Sprintf("\n... and %d more", len(bad)-10)
			bad = bad[:10]
		}
		return res, fmt.Errorf("%d of %d sessions' exports are incomplete (%d right after the burst):\n%s%s", res.Lost, cfg.Sessions, res.Incomplete, strings.Join(bad, "\n"), more)
	}
	return res, nil
}

var listening = regexp.MustCompile(`listening on (https?://\S+) \(token in (\S+);`)

// start runs odin serve and waits for its address.
func (r *runner) start() error {
	cmd := exec.Command(r.cfg.Bin, "serve", "--listen", "127.0.0.1:0", "--root", r.root)
	cmd.Env, cmd.Dir = r.env, r.root
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = &lockedWriter{w: stderr}
	if err := cmd.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("odin serve printed no address: %v\n%s", err, stderr)
	}
	m := listening.FindStringSubmatch(line)
	if m == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("odin serve said %q", line)
	}
	tok, err := os.ReadFile(m[2])
	if err != nil {
		return err
	}
	s := &server{cmd: cmd, base: m[1], token: strings.TrimSpace(string(tok)), stderr: stderr, exited: make(chan struct{})}
	go func() {
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(s.exited)
	}()
	r.srvMu.Lock()
	r.srv = s
	close(r.ready)
	r.srvMu.Unlock()
	return nil
}

// stop ends the server with SIGTERM (gracefully) and waits for it.
func (r *runner) stop() {
	r.srvMu.Lock()
	s := r.srv
	r.srvMu.Unlock()
	if s == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// restart stops the server gracefully and starts a new one on the same
// state directory; requests wait for it meanwhile.
func (r *runner) restart() {
	r.restMu.Lock()
	defer r.restMu.Unlock()
	r.srvMu.Lock()
	old := r.srv
	r.ready = make(chan struct{})
	r.srvMu.Unlock()
	r.cfg.Logf("restarting odin serve after %d turns", r.done.Load())
	_ = old.cmd.Process.Signal(syscall.SIGTERM)
	<-old.exited
	if ps := old.cmd.ProcessState; ps != nil {
		r.srvMu.Lock()
		r.cpu += ps.UserTime() + ps.SystemTime()
		r.srvMu.Unlock()
		if !ps.Success() {
			r.cfg.Logf("odin serve exited with %v:\n%s", ps, old.stderr)
		}
	}
	r.rest.Store(true)
	if err := r.start(); err != nil {
		r.cfg.Logf("restart: %v", err)
	}
}

// current waits for a running server.
func (r *runner) current(ctx context.Context) (*server, error) {
	for {
		r.srvMu.RLock()
		ready, s := r.ready, r.srv
		r.srvMu.RUnlock()
		select {
		case <-ready:
			return s, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (r *runner) pid() int {
	r.srvMu.RLock()
	defer r.srvMu.RUnlock()
	return r.srv.cmd.Process.Pid
}

// cpuNow is the CPU used so far by every server of the run.
func (r *runner) cpuNow() time.Duration {
	r.srvMu.RLock()
	defer r.srvMu.RUnlock()
	return r.cpu + procCPU(r.srv.cmd.Process.Pid)
}

// sample records the server's peak of open file descriptors.
func (r *runner) sample(ctx context.Context) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := int64(countFDs(r.pid()))
		for {
			p := r.peak.Load()
			if n <= p || r.peak.CompareAndSwap(p, n) {
				break
			}
		}
	}
}

// errRetry: the server went away during the request; try again on the
// next one.
var errRetry = errors.New("server restarting")

func (r *runner) call(ctx context.Context, s *server, method, path string, body any, want int) ([]byte, error) {
	raw, _, err := r.callWith(ctx, s, method, path, body, nil, want)
	return raw, err
}

// callWith is call with extra request headers, accepting any of want and
// returning the status.
func (r *runner) callWith(ctx context.Context, s *server, method, path string, body any, hdr http.Header, want ...int) ([]byte, int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return nil, 0, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := r.hc.Do(req)
	if err != nil {
		if r.cfg.Restart && ctx.Err() == nil {
			return nil, 0, errRetry
		}
		return nil, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode == http.StatusServiceUnavailable && r.cfg.Restart {
		return nil, 0, errRetry
	}
	if !slices.Contains(want, resp.StatusCode) {
		return nil, 0, fmt.Errorf("%s %s: %s %s", method, path, resp.Status, bytes.TrimSpace(raw))
	}
	return raw, resp.StatusCode, nil
}

// create starts a session and returns its id.
func (r *runner) create(ctx context.Context) (string, error) {
	for {
		s, err := r.current(ctx)
		if err != nil {
			return "", err
		}
		raw, err := r.call(ctx, s, "POST", "/v1/sessions", map[string]string{"project": r.root}, http.StatusCreated)
		if errors.Is(err, errRetry) {
			r.waitGone(ctx, s)
			continue
		}
		if err != nil {
			return "", err
		}
		var info struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &info); err != nil || info.ID == "" {
			return "", fmt.Errorf("create: %q: %v", raw, err)
		}
		return info.ID, nil
	}
}

// waitGone waits until s is no longer the current server (a restart is
// replacing it), or briefly if it stays.
func (r *runner) waitGone(ctx context.Context, s *server) {
	select {
	case <-s.exited:
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
}

// turn sends session i's question t and waits for its turn to finish;
// when a restart interrupts it, it is sent again to the new server.
func (r *runner) turn(ctx context.Context, id string, i, t int) (time.Duration, error) {
	for {
		s, err := r.current(ctx)
		if err != nil {
			return 0, err
		}
		d, err := r.turnOn(ctx, s, id, i, t)
		if errors.Is(err, errRetry) {
			r.retry.Add(1)
			r.waitGone(ctx, s)
			continue
		}
		return d, err
	}
}

// turnOn runs one turn on server s: the event stream is opened first (it
// holds what happens from then on), then the message is posted.
func (r *runner) turnOn(ctx context.Context, s *server, id string, i, t int) (time.Duration, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, "GET", s.base+"/v1/sessions/"+id+"/events", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := r.hc.Do(req)
	if err != nil {
		if r.cfg.Restart && ctx.Err() == nil {
			return 0, errRetry
		}
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusServiceUnavailable && r.cfg.Restart {
			return 0, errRetry
		}
		return 0, fmt.Errorf("events: %s %s", resp.Status, raw)
	}
	start := time.Now()
	// The key makes a question sent again after a restart the same
	// input: if the restarted server resumed it (or finished it), it is
	// not run a second time.
	key := http.Header{"Idempotency-Key": {fmt.Sprintf("load-%d-%d", i, t)}}
	raw, code, err := r.callWith(ctx, s, "POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": question(i, t)}, key,
		http.StatusAccepted, http.StatusOK)
	if err != nil {
		return 0, err
	}
	var sent struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	if err := json.Unmarshal(raw, &sent); err != nil {
		return 0, fmt.Errorf("message: %q: %v", raw, err)
	}
	if code == http.StatusOK && sent.State == "done" {
		// Finished while no stream was open; check reads its answer.
		return time.Since(start), nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	typ := ""
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			typ = string(line[7:])
		case bytes.HasPrefix(line, []byte("data: ")) && typ == "shutdown" && r.cfg.Restart:
			return 0, errRetry
		case bytes.HasPrefix(line, []byte("data: ")) && typ == "turn_finished":
			var ev struct {
				Result struct {
					Input struct {
						ID string `json:"id"`
					} `json:"input"`
					Status, Answer, Error string
				} `json:"result"`
			}
			if err := json.Unmarshal(line[6:], &ev); err != nil {
				return 0, fmt.Errorf("turn_finished: %v", err)
			}
			if ev.Result.Input.ID != sent.ID {
				continue
			}
			d := time.Since(start)
			switch {
			case ev.Result.Status == "cancelled" && r.cfg.Restart:
				// The restart cancelled and saved it: ask again (the
				// same key: the new server resumes it or has).
				return 0, errRetry
			case ev.Result.Status != "done":
				return 0, fmt.Errorf("turn %s: %s", ev.Result.Status, ev.Result.Error)
			case ev.Result.Answer != answer(i, t):
				return 0, fmt.Errorf("answer %q, want %q", ev.Result.Answer, answer(i, t))
			}
			return d, nil
		}
	}
	if r.cfg.Restart && ctx.Err() == nil {
		return 0, errRetry
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("events: %w", err)
	}
	return 0, errors.New("event stream ended before turn_finished")
}

// journalQueued reads odin_journal_queued_writes from /metrics; -1 when
// the server has no such metric (an older build).
func (r *runner) journalQueued(ctx context.Context) int {
	s, err := r.current(ctx)
	if err != nil {
		return -1
	}
	raw, err := r.call(ctx, s, "GET", "/metrics", nil, http.StatusOK)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "odin_journal_queued_writes "); ok {
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				return int(n)
			}
		}
	}
	return -1
}

// check reads session i's export and looks for its turns' questions and
// answers.
func (r *runner) check(ctx context.Context, id string, i, turns int) error {
	s, err := r.current(ctx)
	if err != nil {
		return err
	}
	raw, err := r.call(ctx, s, "GET", "/v1/sessions/"+id+"/export", nil, http.StatusOK)
	if err != nil {
		return fmt.Errorf("session %d (%s): export: %w", i, id, err)
	}
	var missing []string
	for t := range turns {
		for _, want := range []string{question(i, t), answer(i, t)} {
			// The export is JSON: < and > may be escaped.
			if !bytes.Contains(raw, []byte(want)) && !bytes.Contains(raw, []byte(jsonEscaped(want))) {
				missing = append(missing, strconv.Quote(want))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("session %d (%s): export misses %s", i, id, strings.Join(missing, ", "))
	}
	return nil
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// lockedWriter serialises writes (exec copies stderr from its own
// goroutine while a failed run reads it).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
