package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	ocluster "github.com/odin-code/odin/internal/cluster"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/pgtest"
	"github.com/odin-code/odin/messages"
)

// fleetPlan is what one run of the fleet benchmark does. The smoke test
// (make test) and BenchmarkFleet (make bench-cluster) run the same code
// with different sizes.
type fleetPlan struct {
	// ramp is the cumulative counts of active sessions on one worker;
	// at each, every active session runs one turn per latency, all at
	// once.
	ramp      []int
	latencies []time.Duration
	// passivated sessions are activated on a worker with --idle 1s, in
	// batches of batch, each batch passivated before the next; 0 skips
	// the phase. concurrent of them are activated at once (timed), and
	// re-activated at once at the end.
	passivated, batch, concurrent int
	// spread sessions are activated over two workers and counted per
	// worker; the first failover of them run a turn, one worker is
	// SIGKILLed, and all of them run a turn again.
	spread, failover int
	// settle is how long the worker is left alone before its RSS is read.
	settle time.Duration
	out    io.Writer
	// store is the fleet's --store: "" for a SQLite file.
	store string
}

// waveResult is one round of turns: every active session ran one, all at
// once.
type waveResult struct {
	sessions int
	latency  time.Duration
	// overhead is each turn's time from submit to turn_finished minus the
	// model's latency.
	p50, p99 time.Duration
	wall     time.Duration
	// cpu is the worker's CPU time (user+system) over the wave, per turn.
	cpu time.Duration
}

// fleetResult is what a run measured.
type fleetResult struct {
	// loadavg is the machine's load (/proc/loadavg's 1-minute figure)
	// when the run began and ended: on a shared machine it says how much
	// of the times is waiting for a CPU.
	loadavg [2]string
	store   string // SQLite or PostgreSQL
	baseKB  int64
	// activeKB is the worker's RSS with ramp[i] sessions active, after
	// their turns.
	activeKB []int64
	waves    []waveResult

	passBaseKB, passFirstKB, passLastKB int64
	passivatedN, firstBatch             int
	activation, reactivation            []time.Duration

	perWorker []int // spread sessions per worker
	// failoverAll is from the SIGKILL until the last of the failover
	// sessions answered; failoverP50 the median session's.
	failoverAll, failoverP50 time.Duration
	moved                    int // failover sessions the victim owned
}

// fleetRig is a fleet of odin worker processes driven from a cluster node
// in this process: a front that hosts no sessions, as odin serve
// --host-sessions=false is, without its HTTP layer, so that the figures
// are the workers'.
type fleetRig struct {
	*fleet
	t    testing.TB
	st   store.Store
	node *ocluster.Node
}

func newFleetRig(t testing.TB, script *llmtest.Script, storeURL string) *fleetRig {
	f := newFleet(t, script, storeURL)
	// Nodes are lost only when the run kills one: a TTL that a loaded
	// worker's late heartbeat cannot miss.
	f.ttl = "3s"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.OpenURL(ctx, f.store)
	if err != nil {
		t.Fatal(err)
	}
	members, ok := st.(store.Membership)
	if !ok {
		st.Close()
		t.Fatalf("store %s keeps no members table", f.store)
	}
	// The front node's own log, shown when the run fails: what it saw of
	// the members is half of any membership trouble.
	logPath := filepath.Join(f.dir, "front.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- front node (this process):\n%s", b)
		}
	})
	node, err := ocluster.Start(ocluster.Config{Name: "t", Store: members, TTL: 3 * time.Second,
		ActivationTimeout: time.Minute, RequestTimeout: 3 * time.Minute,
		Log: slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	// Cleanups run last first: the node leaves before the workers stop.
	t.Cleanup(func() { st.Close() })
	t.Cleanup(node.Stop)
	return &fleetRig{fleet: f, t: t, st: st, node: node}
}

// create stores n new sessions of the project, as odin serve's front
// does before it activates one.
func (r *fleetRig) create(ctx context.Context, n int) []string {
	r.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		s, err := r.st.CreateSession(ctx, store.Session{ID: uuid.NewString(), Project: r.project, Agent: store.AgentOrchestrator})
		if err != nil {
			r.t.Fatal(err)
		}
		ids[i] = s.ID
	}
	return ids
}

// attach activates ids, width at a time, and returns their sessions and
// how long each activation took (from the request until the grain
// answered its subscription).
func (r *fleetRig) attach(ctx context.Context, ids []string, width int) ([]*ocluster.RemoteSession, []time.Duration, error) {
	out := make([]*ocluster.RemoteSession, len(ids))
	lat := make([]time.Duration, len(ids))
	errs := make([]error, len(ids))
	sem := make(chan struct{}, width)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t0 := time.Now()
			out[i], errs[i] = r.node.Attach(ctx, id)
			lat[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	return out, lat, errors.Join(errs...)
}

// turns runs one turn of body in every session at once and returns how
// long each took from its submit to its turn_finished. A turn that does
// not end done with the scripted answer is an error.
func turns(ctx context.Context, sessions []*ocluster.RemoteSession, body, answer string) ([]time.Duration, error) {
	lat := make([]time.Duration, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, rs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat[i], errs[i] = turn(ctx, rs, body, answer)
		}()
	}
	wg.Wait()
	return lat, errors.Join(errs...)
}

func turn(ctx context.Context, rs *ocluster.RemoteSession, body, answer string) (time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	evs := rs.Bus().Subscribe(ctx, 64, true)
	t0 := time.Now()
	if _, err := rs.SubmitInput(ctx, uuid.NewString(), body, ""); err != nil {
		return 0, fmt.Errorf("session %s: submit %q: %w", rs.ID(), body, err)
	}
	for {
		select {
		case env, ok := <-evs:
			if !ok {
				return 0, fmt.Errorf("session %s: no turn_finished for %q: %w", rs.ID(), body, ctx.Err())
			}
			tf, ok := env.Event.(messages.TurnFinished)
			if !ok || tf.Result.Input.Body != body {
				continue // another event, or an earlier turn's end replayed
			}
			if tf.Result.Status != messages.TurnDone || tf.Result.Answer != answer {
				return 0, fmt.Errorf("session %s: turn %q ended %s %q %s", rs.ID(), body, tf.Result.Status, tf.Result.Answer, tf.Result.Error)
			}
			return time.Since(t0), nil
		case <-ctx.Done():
			return 0, fmt.Errorf("session %s: no turn_finished for %q: %w", rs.ID(), body, ctx.Err())
		}
	}
}

func closeAll(ctx context.Context, sessions []*ocluster.RemoteSession) {
	for _, rs := range sessions {
		if rs != nil {
			_ = rs.Close(ctx)
		}
	}
}

// procStatus reads a field of /proc/PID/status in kB (VmRSS, VmHWM).
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// procCPU is the process's user and system CPU time so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces: fields count from its ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	// USER_HZ is 100 on every Linux this runs on.
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// loadavg is the machine's 1-minute load average, "?" when unknown.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func (r *fleetRig) rss(p *proc, settle time.Duration) int64 {
	r.t.Helper()
	time.Sleep(settle)
	kb, err := procStatus(p.cmd.Process.Pid, "VmRSS")
	if err != nil {
		r.t.Fatal(err)
	}
	return kb
}

func (r *fleetRig) cpu(p *proc) time.Duration {
	r.t.Helper()
	d, err := procCPU(p.cmd.Process.Pid)
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// stop ends a worker with SIGTERM (it closes its sessions and leaves)
// and waits for it.
func (r *fleetRig) stop(p *proc) {
	r.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(2 * time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.exited
		r.t.Fatalf("%s did not stop within 2 min of SIGTERM", p.name)
	}
}

// waitPassivated waits until worker p hosts no session and has
// passivated want in all.
func (r *fleetRig) waitPassivated(ctx context.Context, p *proc, want int) {
	r.t.Helper()
	for {
		active := p.metric(r.t, "odin_sessions_active", "")
		done := p.metric(r.t, "odin_sessions_passivated_total", "")
		if active == 0 && int(done) >= want {
			return
		}
		select {
		case <-ctx.Done():
			r.t.Fatalf("%s: %v sessions active, %v of %d passivated: %v", p.name, active, done, want, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// fleetScript answers every turn the plan runs: a step per turn, keyed
// by the latency its body names ("lat-0ms", "lat-1s").
func fleetScript(p fleetPlan) *llmtest.Script {
	s := llmtest.NewScript()
	total := 0
	for _, n := range p.ramp {
		total = max(total, n)
	}
	for _, lat := range p.latencies {
		for range total * len(p.ramp) {
			s.Add("orchestrator", llmtest.Step{When: "lat-" + lat.String() + " ", Latency: llmtest.Duration(lat), Text: "ok"})
		}
	}
	// Failover: one turn before the kill and one after; a spare per
	// session for a turn the lost worker had begun.
	for range 3 * p.failover {
		s.Add("orchestrator", llmtest.Step{When: "failover", Text: "ok"})
	}
	return s
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1)+0.5)]
}

// runFleet runs plan and checks what must hold whatever the machine:
// every turn ends done with the model's answer, every session is
// activated, every one passivates, the sessions spread over both workers
// and all of them answer again after one is killed. Times and memory are
// only measured.
func runFleet(t testing.TB, plan fleetPlan) *fleetResult {
	r := newFleetRig(t, fleetScript(plan), plan.store)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	res := &fleetResult{}
	res.loadavg[0] = loadavg()
	res.store = "SQLite"
	if strings.HasPrefix(plan.store, "postgres") {
		res.store = "PostgreSQL"
	}
	defer func() { res.loadavg[1] = loadavg() }()
	logf := func(format string, args ...any) {
		if plan.out != nil {
			fmt.Fprintf(plan.out, format+"\n", args...)
		}
	}

	// One worker: the ramp of active sessions.
	w := r.worker("worker-ramp", "--idle", "30m")
	res.baseKB = r.rss(w, plan.settle)
	ids := r.create(ctx, plan.ramp[len(plan.ramp)-1])
	var active []*ocluster.RemoteSession
	for _, n := range plan.ramp {
		more, _, err := r.attach(ctx, ids[len(active):n], 16)
		active = append(active, more...)
		if err != nil {
			t.Fatal(err)
		}
		for _, lat := range plan.latencies {
			cpu0, t0 := r.cpu(w), time.Now()
			body := fmt.Sprintf("lat-%s n%d", lat, n)
			took, err := turns(ctx, active, body, "ok")
			if err != nil {
				t.Fatal(err)
			}
			wr := waveResult{sessions: n, latency: lat, wall: time.Since(t0), cpu: (r.cpu(w) - cpu0) / time.Duration(n)}
			for i := range took {
				took[i] -= lat
			}
			wr.p50, wr.p99 = quantile(took, 0.5), quantile(took, 0.99)
			res.waves = append(res.waves, wr)
			logf("ramp: %d active, model %s: overhead p50 %s p99 %s, wave %s, worker CPU %s/turn", n, lat, wr.p50, wr.p99, wr.wall, wr.cpu)
		}
		res.activeKB = append(res.activeKB, r.rss(w, plan.settle))
		logf("ramp: %d active: worker RSS %d kB (base %d kB)", n, res.activeKB[len(res.activeKB)-1], res.baseKB)
	}
	if got := w.metric(t, "odin_sessions_active", ""); int(got) != len(active) {
		t.Errorf("the worker counts %v active sessions, want %d", got, len(active))
	}
	closeAll(ctx, active)
	r.stop(w)

	// One worker that passivates after 1 s: activations, and what a
	// passivated session leaves behind.
	if plan.passivated > 0 {
		w := r.worker("worker-passivate", "--idle", "1s")
		res.passBaseKB = r.rss(w, plan.settle)
		ids := r.create(ctx, plan.passivated)
		first, lat, err := r.attach(ctx, ids[:plan.concurrent], plan.concurrent)
		if err != nil {
			t.Fatal(err)
		}
		res.activation = lat
		logf("passivation: %d concurrent activations: p50 %s p99 %s", plan.concurrent, quantile(lat, 0.5), quantile(lat, 0.99))
		closeAll(ctx, first)
		done := plan.concurrent
		r.waitPassivated(ctx, w, done)
		for done < plan.passivated {
			end := min(done+plan.batch, plan.passivated)
			batch, _, err := r.attach(ctx, ids[done:end], 16)
			closeAll(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			if done == plan.concurrent {
				res.firstBatch = end
			}
			done = end
			r.waitPassivated(ctx, w, done)
			if done == res.firstBatch {
				res.passFirstKB = r.rss(w, plan.settle)
			}
			logf("passivation: %d passivated: worker RSS %d kB", done, r.rss(w, 0))
		}
		res.passivatedN = done
		res.passLastKB = r.rss(w, plan.settle)
		again, lat, err := r.attach(ctx, ids[:plan.concurrent], plan.concurrent)
		if err != nil {
			t.Fatal(err)
		}
		res.reactivation = lat
		logf("passivation: %d concurrent re-activations: p50 %s p99 %s", plan.concurrent, quantile(lat, 0.5), quantile(lat, 0.99))
		closeAll(ctx, again)
		r.stop(w)
	}

	// Two workers: the spread, then one is killed under load.
	if plan.spread > 0 {
		workers := []*proc{r.worker("worker-a", "--idle", "30m"), r.worker("worker-b", "--idle", "30m")}
		ids := r.create(ctx, plan.spread)
		sessions, _, err := r.attach(ctx, ids, 16)
		if err != nil {
			t.Fatal(err)
		}
		owners := r.owners(ctx, ids)
		res.perWorker = make([]int, len(workers))
		for _, id := range ids {
			for i, w := range workers {
				if owners[id].Owner == w.member {
					res.perWorker[i]++
				}
			}
		}
		logf("spread: %d sessions over 2 workers: %v", plan.spread, res.perWorker)
		if res.perWorker[0]+res.perWorker[1] != plan.spread {
			t.Errorf("sessions per worker %v, want all %d on the workers", res.perWorker, plan.spread)
		}
		if res.perWorker[0] == 0 || res.perWorker[1] == 0 {
			t.Errorf("sessions per worker %v: one worker got none", res.perWorker)
		}
		load := sessions[:plan.failover]
		if _, err := turns(ctx, load, "failover before", "ok"); err != nil {
			t.Fatal(err)
		}
		victim := workers[0]
		for _, id := range ids[:plan.failover] {
			if owners[id].Owner == victim.member {
				res.moved++
			}
		}
		killed := time.Now()
		if err := victim.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		took, err := turns(ctx, load, "failover after", "ok")
		if err != nil {
			t.Fatal(err)
		}
		res.failoverAll = time.Since(killed)
		res.failoverP50 = quantile(took, 0.5)
		after := r.owners(ctx, ids[:plan.failover])
		for _, id := range ids[:plan.failover] {
			if after[id].Owner != workers[1].member {
				t.Errorf("session %s is on %s after the kill, want the survivor %s", id, after[id].Owner, workers[1].member)
			}
		}
		logf("failover: %d active, %d on the killed worker: all answered %s after the SIGKILL (p50 %s)", plan.failover, res.moved, res.failoverAll, res.failoverP50)
		closeAll(ctx, sessions)
	}
	return res
}

// TestFleetSmoke is the fleet benchmark in small (make test), through
// the wiring users run: odin serve --cluster --host-sessions=false and
// odin worker processes. 10 then 100 sessions answer a turn each on one
// worker; a second worker joins, 100 new sessions are placed over both
// and counted per worker, each answers a turn, the first worker is
// SIGKILLed and all 100 answer again, from the survivor. Times and RSS
// are logged, never asserted. (BenchmarkFleet drives the workers from a
// cluster node inside the test process instead, to measure them without
// serve; that node is not race-clean under -race, protoactor's gossip
// and member list race with each other, so the smoke keeps every node
// in a child process.)
func TestFleetSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts odin serve and two odin workers")
	}
	script := llmtest.NewScript()
	for range 10 + 100 + 100 + 2*100 {
		script.Add("orchestrator", llmtest.Step{When: "fleet", Text: "ok"})
	}
	f := newFleet(t, script, "")
	f.ttl = "3s"
	w1 := f.worker("worker-1", "--idle", "30m")
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	base, err := procStatus(w1.cmd.Process.Pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range []int{10, 100} {
		ids = append(ids, createViaFront(t, fr, f.project, n-len(ids))...)
		t0 := time.Now()
		if err := frontTurns(ctx, fr, ids, fmt.Sprintf("fleet n%d", n)); err != nil {
			t.Fatal(err)
		}
		kb, err := procStatus(w1.cmd.Process.Pid, "VmRSS")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("one worker, %d sessions: a turn each in %s; worker RSS %d kB (%d kB per session over the idle worker's)", n, time.Since(t0), kb, (kb-base)/int64(n))
	}
	if got := w1.metric(t, "odin_sessions_active", ""); int(got) != len(ids) {
		t.Errorf("the worker counts %v active sessions, want %d", got, len(ids))
	}

	w2 := f.worker("worker-2", "--idle", "30m")
	spread := createViaFront(t, fr, f.project, 100)
	owners := f.owners(ctx, spread)
	per := map[string]int{}
	for _, id := range spread {
		per[owners[id].Owner]++
	}
	t.Logf("two workers, 100 new sessions: %d on %s, %d on %s", per[w1.member], w1.name, per[w2.member], w2.name)
	if per[w1.member] == 0 || per[w2.member] == 0 || per[w1.member]+per[w2.member] != len(spread) {
		t.Errorf("sessions per owner %v (workers %s, %s): want all %d on the two, some on each", per, w1.member, w2.member, len(spread))
	}
	if err := frontTurns(ctx, fr, spread, "fleet before"); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := w1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := frontTurns(ctx, fr, spread, "fleet after"); err != nil {
		t.Fatal(err)
	}
	t.Logf("SIGKILL of %s with %d of the 100 sessions: all answered again %s after it", w1.name, per[w1.member], time.Since(killed))
	for id, c := range f.owners(ctx, spread) {
		if c.Owner != w2.member {
			t.Errorf("session %s is on %s after the kill, want the survivor %s", id, c.Owner, w2.member)
		}
	}
}

// createViaFront creates n sessions through serve's API (each is
// activated on the worker that owns it) and returns their IDs.
func createViaFront(t *testing.T, fr *front, project string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": project})
		if err != nil || code != http.StatusCreated {
			t.Fatalf("create session: %d %v %v", code, s, err)
		}
		ids[i] = s["id"].(string)
	}
	return ids
}

// frontTurns runs a turn of body in every session at once through serve
// and wants each done with the scripted answer.
func frontTurns(ctx context.Context, fr *front, ids []string, body string) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, ans, err := fr.turn(ctx, id, body)
			if err == nil && (st != "done" || ans != "ok") {
				err = fmt.Errorf("session %s: turn %q ended %s %q", id, body, st, ans)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// BenchmarkFleet is the fleet benchmark of issue 35 (make bench-cluster):
// one worker with 1, 10, 100 and 1,000 active sessions, each running a
// turn against the scripted model at 0 ms and at 1 s latency; 10,000
// sessions activated and passivated on one worker, 100 activated at once;
// 1,000 sessions over two workers, and 100 of them answering again after
// one worker is SIGKILLed. It prints a table of the figures. Run once:
// go test -run '^$' -bench Fleet -benchtime 1x -timeout 90m ./test/cluster
// ODIN_FLEET_PASSIVATED changes the 10,000; ODIN_FLEET_STORE=postgres
// runs the fleet on a PostgreSQL store (a private server) instead of a
// SQLite file.
func BenchmarkFleet(b *testing.B) {
	plan := fleetPlan{ramp: []int{1, 10, 100, 1000}, latencies: []time.Duration{0, time.Second},
		passivated: 10000, batch: 1000, concurrent: 100, spread: 1000, failover: 100,
		settle: 3 * time.Second, out: os.Stderr}
	if v := os.Getenv("ODIN_FLEET_PASSIVATED"); v != "" {
		if _, err := fmt.Sscan(v, &plan.passivated); err != nil || plan.passivated < 2*plan.concurrent {
			b.Fatalf("ODIN_FLEET_PASSIVATED=%q: want a count of %d or more", v, 2*plan.concurrent)
		}
	}
	switch v := os.Getenv("ODIN_FLEET_STORE"); v {
	case "", "sqlite":
	case "postgres":
		plan.store = pgtest.New(b).Database(b)
	default:
		b.Fatalf("ODIN_FLEET_STORE=%q: want sqlite or postgres", v)
	}
	for range b.N {
		res := runFleet(b, plan)
		writeFleetTable(os.Stdout, res)
	}
}

// writeFleetTable prints res as the tables of docs/cluster.md.
func writeFleetTable(w io.Writer, res *fleetResult) {
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d.Microseconds())/1e3, 'f', 1, 64) + " ms"
	}
	var lats []time.Duration
	for _, wv := range res.waves {
		if !containsDur(lats, wv.latency) {
			lats = append(lats, wv.latency)
		}
	}
	fmt.Fprintf(w, "\nStore %s; load average %s at the start, %s at the end (%d CPUs)\n", res.store, res.loadavg[0], res.loadavg[1], runtime.NumCPU())
	fmt.Fprintf(w, "\nOne worker, sessions active (base RSS %.1f MB)\n\n", float64(res.baseKB)/1024)
	fmt.Fprint(w, "| active | worker RSS | RSS per active session |")
	for _, l := range lats {
		fmt.Fprintf(w, " turn overhead p50 / p99, model %s | worker CPU per turn, model %s |", l, l)
	}
	fmt.Fprint(w, "\n|---:|---:|---:|")
	for range lats {
		fmt.Fprint(w, "---:|---:|")
	}
	fmt.Fprintln(w)
	var sizes []int
	for _, wv := range res.waves {
		if len(sizes) == 0 || sizes[len(sizes)-1] != wv.sessions {
			sizes = append(sizes, wv.sessions)
		}
	}
	for i, n := range sizes {
		kb := res.activeKB[i]
		fmt.Fprintf(w, "| %d | %.1f MB | %.0f KB |", n, float64(kb)/1024, float64(kb-res.baseKB)/float64(n))
		for _, l := range lats {
			for _, wv := range res.waves {
				if wv.sessions == n && wv.latency == l {
					fmt.Fprintf(w, " %s / %s | %s |", ms(wv.p50), ms(wv.p99), ms(wv.cpu))
				}
			}
		}
		fmt.Fprintln(w)
	}
	for _, l := range lats {
		var one time.Duration
		past := "not within the ramp"
		for _, wv := range res.waves {
			if wv.latency != l {
				continue
			}
			if one == 0 {
				one = wv.p50
			} else if wv.p50 > 2*one {
				past = fmt.Sprintf("at %d active sessions (p50 %s against %s with %d)", wv.sessions, ms(wv.p50), ms(one), sizes[0])
				break
			}
		}
		fmt.Fprintf(w, "\nModel %s: turn overhead passes 2x one session's %s.\n", l, past)
	}
	if res.passivatedN > 0 {
		fmt.Fprintf(w, "\nOne worker, --idle 1s: %d sessions activated and passivated\n\n", res.passivatedN)
		fmt.Fprintln(w, "| measure | figure |\n|---|---:|")
		fmt.Fprintf(w, "| RSS per passivated session, after the first %d to after all %d | %.2f KB |\n", res.firstBatch, res.passivatedN,
			float64(res.passLastKB-res.passFirstKB)/float64(res.passivatedN-res.firstBatch))
		fmt.Fprintf(w, "| RSS per passivated session, from the idle worker (%.1f to %.1f MB) | %.2f KB |\n",
			float64(res.passBaseKB)/1024, float64(res.passLastKB)/1024, float64(res.passLastKB-res.passBaseKB)/float64(res.passivatedN))
		fmt.Fprintf(w, "| %d concurrent activations (new sessions) p50 / p99 | %s / %s |\n", len(res.activation), ms(quantile(res.activation, 0.5)), ms(quantile(res.activation, 0.99)))
		fmt.Fprintf(w, "| %d concurrent re-activations (passivated) p50 / p99 | %s / %s |\n", len(res.reactivation), ms(quantile(res.reactivation, 0.5)), ms(quantile(res.reactivation, 0.99)))
	}
	if len(res.perWorker) == 2 {
		n := res.perWorker[0] + res.perWorker[1]
		fmt.Fprintf(w, "\nTwo workers: %d sessions, %d / %d (%.1f%% / %.1f%%); SIGKILL of one with 100 active (%d on it): all answered again %s after the kill, p50 %s\n",
			n, res.perWorker[0], res.perWorker[1], 100*float64(res.perWorker[0])/float64(n), 100*float64(res.perWorker[1])/float64(n),
			res.moved, ms(res.failoverAll), ms(res.failoverP50))
	}
}

func containsDur(ds []time.Duration, d time.Duration) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

// BenchmarkFleetActivation is the activation part of the fleet benchmark
// alone, for comparing builds in the same minutes: one worker (--idle 1s),
// ODIN_FLEET_ACTIVATIONS (100) new sessions activated at once, then,
// once all are passivated, re-activated at once. It prints p50/p99 of
// each with the load average. ODIN_TEST_BIN_DIR runs another build of
// odin (the workers) under the same driver; ODIN_FLEET_STORE=postgres as
// for BenchmarkFleet.
// go test -run '^$' -bench FleetActivation -benchtime 1x ./test/cluster
func BenchmarkFleetActivation(b *testing.B) {
	n := 100
	if v := os.Getenv("ODIN_FLEET_ACTIVATIONS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
			b.Fatalf("ODIN_FLEET_ACTIVATIONS=%q: want a count", v)
		}
	}
	storeURL := ""
	switch v := os.Getenv("ODIN_FLEET_STORE"); v {
	case "", "sqlite":
	case "postgres":
		storeURL = pgtest.New(b).Database(b)
	default:
		b.Fatalf("ODIN_FLEET_STORE=%q: want sqlite or postgres", v)
	}
	r := newFleetRig(b, llmtest.NewScript(), storeURL)
	w := r.worker("worker-activate", "--idle", "1s")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ids := r.create(ctx, n)
	passivated := 0
	for i := range b.N {
		load0 := loadavg()
		writes0 := w.metric(b, "odin_store_write_seconds_count", "")
		wsum0 := w.metric(b, "odin_store_write_seconds_sum", "")
		sessions, lat, err := r.attach(ctx, ids, n)
		if err != nil {
			b.Fatal(err)
		}
		// Before closing them: what the activations wrote, not what
		// closing does.
		writes := w.metric(b, "odin_store_write_seconds_count", "") - writes0
		wsum := w.metric(b, "odin_store_write_seconds_sum", "") - wsum0
		closeAll(ctx, sessions)
		what := "activations (new sessions)"
		if i > 0 {
			what = "re-activations (passivated)"
		}
		fmt.Printf("%d concurrent %s: p50 %s p99 %s max %s; %.2f write transactions per activation, %.1f ms each (queue included) (load average %s to %s)\n",
			n, what, quantile(lat, 0.5), quantile(lat, 0.99), quantile(lat, 1), writes/float64(n), 1e3*wsum/max(writes, 1), load0, loadavg())
		b.ReportMetric(float64(quantile(lat, 0.99).Milliseconds()), "p99-ms")
		passivated += n
		r.waitPassivated(ctx, w, passivated)
	}
}
