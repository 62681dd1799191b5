package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/metrics"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// KindSpecialist is what a member that runs remote specialists
// advertises in the members table. It is not a grain kind: a task has one
// owner (the Orchestrator that delegated it) and a deadline, and a stray
// message never starts one.
const KindSpecialist = "specialist"

// specialistHostName is the specialist host actor on every member that
// runs remote specialists.
const specialistHostName = "odin-specialists"

// SpecialistDeps builds what the specialists of one task resolve their
// Delegate against on a worker: the node's models, roster and tools,
// rooted at the task's tree (so the sandbox binds that tree). scratch is
// an empty directory private to the task (its commands' build cache),
// removed after release, which is called when the task ends.
type SpecialistDeps interface {
	Deps(ctx context.Context, root, scratch string) (deps *actors.Deps, release func(), err error)
}

// The remote specialist protocol.

// SpawnSpecialist asks a member's specialist host to run one task on
// Repo and send what its specialist reports to ReplyAddress/ReplyID (the
// Orchestrator's stand-in). Root is the session's root, which paths in
// the reports are mapped back to. Answered by SpecialistStarted or
// Failure.
type SpawnSpecialist struct {
	Delegate     messages.Delegate `json:"delegate"`
	Repo         Repo              `json:"repo"`
	Root         string            `json:"root"`
	ReplyAddress string            `json:"reply_address"`
	ReplyID      string            `json:"reply_id"`
}

// SpecialistStarted names the actor that runs the task on the worker;
// the stand-in watches it.
type SpecialistStarted struct {
	Address string `json:"address"`
	ID      string `json:"id"`
}

// StopSpecialist stops a remote task (its turn was cancelled, it was
// stopped, or its deadline passed).
type StopSpecialist struct{}

func init() {
	for kind, sample := range map[string]any{
		"spawn_specialist": &SpawnSpecialist{}, "specialist_started": &SpecialistStarted{}, "stop_specialist": &StopSpecialist{},
		"report": &messages.Report{}, "agent_progress": &messages.AgentProgress{},
	} {
		wire.register(kind, sample)
	}
}

var (
	specialistTasks = metrics.NewCounter("odin_specialist_tasks_total",
		"Remote specialist tasks this node's specialist host started.", "")
	redelegations = metrics.NewCounter("odin_specialist_redelegations_total",
		"Remote specialist tasks this node delegated again because their worker was lost.", "")
)

// specialists is a node's side of remote specialists: the tasks its
// Orchestrators placed per member (for least-loaded placement) and, on a
// worker, the host.
type specialists struct {
	n      *Node
	mu     sync.Mutex
	placed map[string]int // member address → tasks placed there and running
	next   int
}

// SpecialistPlacement is what a session's Deps.Remote is on a cluster
// node: agents placed remote or any run on the members that host
// specialists.
func (n *Node) SpecialistPlacement() actors.RemoteSpecialists { return n.specs }

// Props implements actors.RemoteSpecialists.
func (s *specialists) Props(run actors.RemoteRun) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &specialistProxy{s: s, run: run}
	}, actor.WithSupervisor(run.Supervisor))
}

// pick chooses the member for a task: of those hosting specialists, alive
// and not in skip, the one with the fewest tasks placed from here, ties
// taken in turn. "" when none can.
func (s *specialists) pick(skip map[string]bool) string {
	var cands []string
	for _, m := range s.n.Members() {
		addr := m.Address()
		if slices.Contains(m.Kinds, KindSpecialist) && !skip[addr] && !s.n.lookup.AddressDown(addr) {
			cands = append(cands, addr)
		}
	}
	if len(cands) == 0 {
		return ""
	}
	sort.Strings(cands)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.placed == nil {
		s.placed = map[string]int{}
	}
	s.next++
	best := ""
	for i := range cands {
		c := cands[(s.next+i)%len(cands)]
		if best == "" || s.placed[c] < s.placed[best] {
			best = c
		}
	}
	s.placed[best]++
	return best
}

// alive reports whether the member at addr is in the membership with a
// live endpoint.
func (s *specialists) alive(addr string) bool {
	if s.n.lookup.AddressDown(addr) {
		return false
	}
	for _, m := range s.n.Members() {
		if m.Address() == addr {
			return true
		}
	}
	return false
}

func (s *specialists) done(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.placed[addr] > 0 {
		s.placed[addr]--
	}
}

// specialistProxy stands in for one remote task as the Orchestrator's
// child, in the session's actor system: it takes the Delegate, snapshots
// the session's tree and has a remoteRun — in the node's cluster system,
// the one with a remote — place it on a worker; it passes the worker's
// progress and report up as a local specialist would. When no worker can
// take the task (none is up, the tree is no git repository, a worker was
// lost and no other is left) it runs the specialist here, as its child.
type specialistProxy struct {
	s   *specialists
	run actors.RemoteRun
	d   *messages.Delegate

	remote *actor.PID // the remoteRun, in the node's system
	local  *actor.PID // the specialist here, when it runs here
	done   bool
}

// Messages between a specialistProxy and its remoteRun.
type (
	repoReady struct {
		repo *Repo
		err  error
	}
	// runHere: the task runs on the session's node after all.
	runHere struct{ why string }
	// fromWorker carries what the worker's task sent.
	fromWorker struct{ msg any }
)

func (p *specialistProxy) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *messages.Delegate:
		p.onDelegate(c, msg)
	case *repoReady:
		p.onRepo(c, msg)
	case *runHere:
		p.runLocal(c, msg.why)
	case *fromWorker:
		p.onWorker(c, msg.msg)
	case *actor.Terminated:
		if p.local != nil && msg.Who.Equal(p.local) {
			// The local specialist stopped without a report the parent
			// took (its crashes passed the restart limit): so does its
			// stand-in, and the Orchestrator reports the failure.
			c.Stop(c.Self())
		}
	case *actor.Stopping:
		if p.remote != nil {
			p.s.n.System.Root.Stop(p.remote)
		}
	case *actor.Started, *actor.Stopped, *actor.Restarting:
	default:
		if p.local == nil {
			return
		}
		if actors.FromSpecialist(msg) {
			c.Forward(c.Parent())
			return
		}
		c.Forward(p.local)
	}
}

func (p *specialistProxy) onDelegate(c actor.Context, d *messages.Delegate) {
	if p.d != nil {
		return
	}
	p.d = d
	root, deny := p.run.Root, p.run.DenyRead
	self, system := c.Self(), c.ActorSystem()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		repo, err := Snapshot(ctx, root, deny)
		system.Root.Send(self, &repoReady{repo: repo, err: err})
	}()
}

func (p *specialistProxy) onRepo(c actor.Context, msg *repoReady) {
	if p.done || p.local != nil {
		return
	}
	if msg.err != nil {
		p.runLocal(c, fmt.Sprintf("runs here: %v", msg.err))
		return
	}
	self, system := c.Self(), c.ActorSystem()
	deliver := func(m any) { system.Root.Send(self, m) }
	d := p.d
	props := actor.PropsFromProducer(func() actor.Actor {
		return &remoteRun{s: p.s, run: p.run, d: d, repo: msg.repo, deliver: deliver, tried: map[string]bool{}}
	})
	p.remote = p.s.n.System.Root.SpawnPrefix(props, "remote-"+d.Agent+"-")
}

// runLocal runs the task here, as the stand-in's child.
func (p *specialistProxy) runLocal(c actor.Context, why string) {
	if p.done || p.local != nil {
		return
	}
	if p.run.Publish != nil && p.run.Agent.Placement == actors.PlacementRemote {
		p.run.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("%s task %s %s", p.d.Agent, p.d.TaskID, why)})
	}
	p.local = c.SpawnPrefix(p.run.Local, "local-"+p.d.Agent)
	c.Send(p.local, p.d)
}

func (p *specialistProxy) onWorker(c actor.Context, msg any) {
	if p.done || p.local != nil {
		return
	}
	switch m := msg.(type) {
	case *messages.Report:
		p.done = true
		if m.Patch != nil {
			m = p.screen(m)
		}
		// A writer's patch is applied by the Orchestrator as a local
		// isolated specialist's: under its locks, change set and guard.
		c.Send(c.Parent(), m)
	case *messages.AgentProgress:
		c.Send(c.Parent(), m)
	}
}

// screen drops the patch of a task that was not isolated, and leaves out
// of a worker's patch the files the session may not read: they were
// never shipped to the worker, whose copy is the commit's (or none), so
// its "before" is not the session's and its change was made blind. They
// are reported as not carried back.
func (p *specialistProxy) screen(r *messages.Report) *messages.Report {
	if p.d.Isolation != messages.IsolationWorktree {
		// Only an isolated task's patch is asked for: a worker cannot
		// make another task write the project.
		cp := *r
		cp.Patch = nil
		return &cp
	}
	if p.run.DenyRead == nil {
		return r
	}
	patch := *r.Patch
	patch.Files = nil
	patch.Skipped = slices.Clone(r.Patch.Skipped)
	for _, f := range r.Patch.Files {
		if _, denied := p.run.DenyRead.Check(filepath.Join(p.run.Root, filepath.FromSlash(f.Path))); denied {
			patch.Skipped = append(patch.Skipped, f.Path+": the session may not read it, so the worker never had it")
			continue
		}
		patch.Files = append(patch.Files, f)
	}
	cp := *r
	cp.Patch = &patch
	return &cp
}

// remoteRun places one task on a worker, from the node's cluster system:
// it picks the least-loaded member hosting specialists, has its host
// start the task, watches the host and the task, and hands what the task
// sends to the stand-in. When the worker is lost before the report (its
// endpoint terminates: Terminated, within a second of a kill), it
// delegates the task once more — to another worker, or back to the
// stand-in to run here — and tells the session (agent_restarted).
type remoteRun struct {
	s       *specialists
	run     actors.RemoteRun
	d       *messages.Delegate
	repo    *Repo
	deliver func(any)

	worker string     // the member running the task now
	host   *actor.PID // its specialist host
	task   *actor.PID // the task there, once started
	tried  map[string]bool
	moves  int // re-delegations after a lost worker
	done   bool
}

// maxMoves is how often a task is delegated again after losing its
// worker: once, as a lost worker is rare and a second loss in one task
// says the cluster is in trouble.
const maxMoves = 1

// checkWorker asks a remoteRun whether its worker is still a member.
type checkWorker struct{}

// checkEvery is how often a remoteRun looks for its worker in the
// membership: a worker that is stopped or cut off keeps its connection
// open (no Terminated) and is dropped only when its heartbeat ages past
// the TTL.
const checkEvery = 250 * time.Millisecond

func (r *remoteRun) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		r.place(c, "")
		r.tick(c)
	case *checkWorker:
		if r.done {
			return
		}
		if r.worker != "" && !r.s.alive(r.worker) {
			r.lost(c)
		}
		r.tick(c)
	case *anypb.Any:
		r.onEnvelope(c, msg)
	case *actor.Terminated:
		r.onTerminated(c, msg)
	case *actor.Stopping:
		r.stopRemote(c)
	case *actor.Stopped, *actor.Restarting:
	}
}

// place sends the task to the next worker, or back to the stand-in when
// no worker can take it.
func (r *remoteRun) place(c actor.Context, why string) {
	addr := r.s.pick(r.tried)
	if addr == "" {
		text := "no worker hosts specialists: runs here"
		if why != "" {
			text = why + "; no other worker: runs here"
			r.run.Publish(messages.AgentRestarted{TaskID: r.d.TaskID, Agent: r.d.Agent, Restart: r.moves, Reason: why + "; delegated again to the session's node"})
		}
		r.done = true
		r.deliver(&runHere{why: text})
		c.Stop(c.Self())
		return
	}
	if why != "" {
		r.run.Publish(messages.AgentRestarted{TaskID: r.d.TaskID, Agent: r.d.Agent, Restart: r.moves, Reason: why + "; delegated again to " + addr})
	}
	r.tried[addr] = true
	r.worker = addr
	r.host = actor.NewPID(addr, specialistHostName)
	r.task = nil
	// Watching the host tells the loss of its node before the task is
	// even started there.
	c.Watch(r.host)
	d := *r.d
	// The supervisor's step checks do not cross nodes: the deadline and
	// turn limit bound a remote task, and the wall budget is enforced on
	// the session's node (the Orchestrator stops the stand-in).
	d.Supervised = false
	env, err := Encode(&SpawnSpecialist{Delegate: d, Repo: *r.repo, Root: r.run.Root, ReplyAddress: c.Self().Address, ReplyID: c.Self().Id})
	if err != nil {
		r.leave(c)
		r.done = true
		r.deliver(&runHere{why: "runs here: " + err.Error()})
		c.Stop(c.Self())
		return
	}
	c.Request(r.host, env)
}

func (r *remoteRun) onEnvelope(c actor.Context, env *anypb.Any) {
	msg, err := Decode(env)
	if err != nil || r.done {
		return
	}
	switch m := msg.(type) {
	case *SpecialistStarted:
		if r.worker == "" || m.Address != r.worker {
			return // the answer of a worker given up on
		}
		r.task = actor.NewPID(m.Address, m.ID)
		c.Watch(r.task)
	case *Failure:
		// The host refused: the next worker, or here.
		r.leave(c)
		r.place(c, "")
	case *messages.Report:
		if m.TaskID != r.d.TaskID {
			return
		}
		r.deliver(&fromWorker{msg: m})
		r.finish(c, nil)
	case *messages.AgentProgress:
		if m.TaskID == r.d.TaskID {
			r.deliver(&fromWorker{msg: m})
		}
	}
}

// leave forgets the current worker.
func (r *remoteRun) leave(c actor.Context) {
	if r.worker == "" {
		return
	}
	r.s.done(r.worker)
	if r.host != nil {
		c.Unwatch(r.host)
	}
	if r.task != nil {
		c.Unwatch(r.task)
	}
	r.worker, r.host, r.task = "", nil, nil
}

func (r *remoteRun) onTerminated(c actor.Context, msg *actor.Terminated) {
	if r.done || r.worker == "" || !(msg.Who.Equal(r.host) || (r.task != nil && msg.Who.Equal(r.task))) {
		return
	}
	if msg.Why != actor.TerminatedReason_AddressTerminated && msg.Who.Id != specialistHostName {
		// The task stopped on a live worker without reporting.
		lost := r.worker
		r.leave(c)
		r.finish(c, &messages.Report{TaskID: r.d.TaskID, Agent: r.d.Agent, Status: messages.ReportFailed,
			Summary: fmt.Sprintf("the %s specialist on %s stopped without reporting", r.d.Agent, lost),
			Error:   "stopped without reporting on " + lost})
		return
	}
	r.lost(c)
}

func (r *remoteRun) tick(c actor.Context) {
	self, system := c.Self(), c.ActorSystem()
	time.AfterFunc(checkEvery, func() { system.Root.Send(self, &checkWorker{}) })
}

// lost delegates the task again after its worker was lost. A report the
// lost worker sends after all (it was only stopped) is as good as the
// new one's: the first to arrive is the task's.
func (r *remoteRun) lost(c actor.Context) {
	lost := r.worker
	r.stopRemote(c)
	if r.moves >= maxMoves {
		r.finish(c, &messages.Report{TaskID: r.d.TaskID, Agent: r.d.Agent, Status: messages.ReportFailed,
			Summary: fmt.Sprintf("the %s task lost its worker %s after it had been delegated again", r.d.Agent, lost),
			Error:   "worker lost twice"})
		return
	}
	r.moves++
	redelegations.Inc()
	r.place(c, "worker "+lost+" lost")
}

// finish ends the run with rep (nil: the worker's report was delivered)
// and stops the task on the worker, which waits for that.
func (r *remoteRun) finish(c actor.Context, rep *messages.Report) {
	if rep != nil {
		r.deliver(&fromWorker{msg: rep})
	}
	r.stopRemote(c)
	r.done = true
	c.Stop(c.Self())
}

// stopRemote stops the remote task (it reported, the turn was cancelled,
// the deadline passed).
func (r *remoteRun) stopRemote(c actor.Context) {
	if r.worker == "" {
		return
	}
	if r.task != nil {
		if env, err := Encode(&StopSpecialist{}); err == nil {
			c.Send(r.task, env)
		}
	}
	r.leave(c)
}

// specialistHost runs on every member that hosts specialists: it starts
// a task actor per SpawnSpecialist and supervises it (a task that fails
// stops; its owner re-delegates or reports).
type specialistHost struct {
	ws   *Workspaces
	deps SpecialistDeps
}

func (h *specialistHost) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *anypb.Any:
		m, err := Decode(msg)
		if err != nil {
			c.Respond(mustEncode(&Failure{Error: err.Error()}))
			return
		}
		req, ok := m.(*SpawnSpecialist)
		if !ok || req.ReplyAddress == "" || req.ReplyID == "" || req.Delegate.TaskID == "" {
			c.Respond(mustEncode(&Failure{Error: fmt.Sprintf("specialist host: unexpected %T", m)}))
			return
		}
		props := actor.PropsFromProducer(func() actor.Actor {
			return &remoteTask{req: req, owner: actor.NewPID(req.ReplyAddress, req.ReplyID), ws: h.ws, deps: h.deps}
		})
		pid := c.SpawnPrefix(props, "task-")
		specialistTasks.Inc()
		c.Respond(mustEncode(&SpecialistStarted{Address: pid.Address, ID: pid.Id}))
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Terminated, *actor.Restarting:
	}
}

func mustEncode(msg any) *anypb.Any {
	env, err := Encode(msg)
	if err != nil {
		panic(err)
	}
	return env
}

// remoteTask is one remote specialist's task on a worker: it makes the
// task's tree, runs the specialist there, maps the paths of what it
// reports back to the session's root and sends that to the owner. It
// ends with its report, at its deadline, when told to stop, or when its
// owner is gone (its node died): a task has one owner.
type remoteTask struct {
	req   *SpawnSpecialist
	owner *actor.PID
	ws    *Workspaces
	deps  SpecialistDeps

	child    *actor.PID
	paths    pathMapper
	release  func()
	timer    *time.Timer
	reported bool
	cancel   context.CancelFunc
}

type (
	taskReady struct {
		tree    string
		deps    *actors.Deps
		release func()
		err     error
	}
	taskDeadline struct{}
)

// taskGrace is how long past its deadline a task may take to report
// before it is stopped.
const taskGrace = 3 * time.Second

func (t *remoteTask) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		t.onStarted(c)
	case *taskReady:
		t.onReady(c, msg)
	case *messages.Report:
		t.onReport(c, msg)
	case *messages.AgentProgress:
		if !t.reported {
			t.send(c, t.paths.progress(msg))
		}
	case *messages.ResearchRequest:
		c.Respond(&messages.ResearchAnswer{Error: "the researcher is not reachable from a remote specialist; answer from the code"})
	case *anypb.Any:
		if m, err := Decode(msg); err == nil {
			if _, ok := m.(*StopSpecialist); ok {
				c.Stop(c.Self())
			}
		}
	case *taskDeadline:
		if t.reported {
			// The owner never said it had the report: it is gone.
			c.Stop(c.Self())
			return
		}
		t.fail(c, messages.ReportTimeout, fmt.Sprintf("stopped at its deadline (%s)", t.req.Delegate.Timeout))
	case *actor.Terminated:
		switch {
		case msg.Who.Equal(t.owner):
			c.Stop(c.Self())
		case t.child != nil && msg.Who.Equal(t.child):
			t.fail(c, messages.ReportFailed, "the specialist crashed past its restart limit")
		}
	case *actor.Stopping:
		if t.cancel != nil {
			t.cancel()
		}
		if t.timer != nil {
			t.timer.Stop()
		}
	case *actor.Stopped:
		// The specialist has stopped too: its tree and deps may go.
		if t.release != nil {
			go t.release()
		}
	case *actor.Restarting:
	}
}

func (t *remoteTask) onStarted(c actor.Context) {
	c.Watch(t.owner)
	self, system := c.Self(), c.ActorSystem()
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	d := t.req.Delegate
	t.timer = time.AfterFunc(d.Timeout+taskGrace, func() { system.Root.Send(self, &taskDeadline{}) })
	go func() {
		r := &taskReady{}
		tree, releaseTree, err := t.ws.Prepare(ctx, &t.req.Repo)
		if err == nil {
			// The session's root may be a directory of its repository.
			tree = filepath.Join(tree, t.req.Repo.Dir)
			var deps *actors.Deps
			var releaseDeps func()
			var scratch string
			scratch, err = t.ws.Scratch()
			if err == nil {
				deps, releaseDeps, err = t.deps.Deps(ctx, tree, scratch)
			}
			if err != nil {
				removeTree(scratch)
				releaseTree()
			} else {
				r.tree, r.deps = tree, deps
				r.release = func() { releaseDeps(); removeTree(scratch); releaseTree() }
			}
		}
		r.err = err
		system.Root.Send(self, r)
	}()
}

func (t *remoteTask) onReady(c actor.Context, r *taskReady) {
	if r.err != nil {
		t.fail(c, messages.ReportFailed, "the worker could not make the task's tree: "+r.err.Error())
		return
	}
	t.release = r.release
	t.paths = newPathMapper(r.tree, t.req.Root)
	if t.req.Delegate.Isolation == messages.IsolationWorktree && r.deps.Worktrees != nil {
		// A writer works in a worktree of its own, made from the tree
		// (which stays read-only to it): its paths are the session's too.
		t.paths = t.paths.with(filepath.Join(r.deps.Worktrees.Dir(), t.req.Delegate.TaskID, "tree", t.req.Repo.Dir), t.req.Root)
	}
	// A model names the session's files as the Orchestrator does (its
	// brief, the conversation): the guard finds them in the tree.
	deps := *r.deps
	inner, root, tree := r.deps.Guard, t.req.Root, r.tree
	deps.Guard = func(agent, taskID string) tool.PathGuard {
		return treeGuard{inner: inner(agent, taskID), root: root, tree: tree}
	}
	r.deps = &deps
	sup := r.deps.Config.Supervision
	window := sup.Window
	if window <= 0 {
		window = time.Minute
	}
	props := actors.SpecialistProps(r.deps).Configure(actor.WithSupervisor(
		actor.NewOneForOneStrategy(sup.MaxRestarts, window, func(any) actor.Directive { return actor.RestartDirective })))
	t.child = c.SpawnPrefix(props, "specialist-"+t.req.Delegate.Agent)
	// The brief names the session's files: the specialist opens them in
	// the tree.
	c.Send(t.child, t.paths.reverse().delegate(&t.req.Delegate))
}

func (t *remoteTask) onReport(c actor.Context, r *messages.Report) {
	if t.reported || r.TaskID != t.req.Delegate.TaskID {
		return
	}
	t.reported = true
	env, err := Encode(t.paths.report(r))
	if err == nil && len(env.Value) > maxReport {
		// The wire carries messages up to 4 MB: a report past the cap
		// would cost the connection, and a patch that size is better
		// made where the project is.
		env, err = Encode(oversized(r, len(env.Value)))
	}
	if err == nil {
		c.Send(t.owner, env)
	}
	t.linger(c)
}

// maxReport bounds a remote task's report as sent, its patch included
// (whole contents before and after, base64 in JSON: about 2.2 MB of file
// content): the wire's messages are capped at 4 MB.
const maxReport = 3 << 20

// oversized is the failure sent instead of a report past maxReport: its
// patch stays on the worker (whose worktree is gone already) and nothing
// of it is applied.
func oversized(r *messages.Report, size int) *messages.Report {
	files := 0
	if r.Patch != nil {
		files = len(r.Patch.Files)
	}
	why := fmt.Sprintf("the %s specialist's report is %d KB with its patch (%d files, whole contents before and after), more than the %d KB a remote task may send back; "+
		"nothing of it was applied. Delegate smaller changes, or give the agent placement: local", r.Agent, size>>10, files, maxReport>>10)
	return &messages.Report{TaskID: r.TaskID, Agent: r.Agent, Status: messages.ReportFailed, Summary: why, Error: why,
		Usage: r.Usage, Model: r.Model, Turns: r.Turns, Restarts: r.Restarts, Elapsed: r.Elapsed}
}

// linger waits, once the report is sent, for the owner to stop the task:
// stopping now would let the Terminated its owner watches overtake the
// report. An owner that says nothing within reportWait is gone.
func (t *remoteTask) linger(c actor.Context) {
	if t.child != nil {
		c.Stop(t.child)
	}
	if t.timer != nil {
		t.timer.Stop()
	}
	self, system := c.Self(), c.ActorSystem()
	t.timer = time.AfterFunc(reportWait, func() { system.Root.Send(self, &taskDeadline{}) })
}

// reportWait is how long a task that reported waits for its owner.
const reportWait = 30 * time.Second

func (t *remoteTask) fail(c actor.Context, status messages.ReportStatus, why string) {
	if t.reported {
		return
	}
	t.reported = true
	d := t.req.Delegate
	t.send(c, &messages.Report{TaskID: d.TaskID, Agent: d.Agent, Status: status, Summary: why, Error: why})
	t.linger(c)
}

func (t *remoteTask) send(c actor.Context, msg any) {
	env, err := Encode(msg)
	if err != nil {
		return
	}
	c.Send(t.owner, env)
}

// treeGuard resolves a path under the session's root to the same path
// in the task's tree, then asks the worker's own guard.
type treeGuard struct {
	inner      tool.PathGuard
	root, tree string
}

func (g treeGuard) Resolve(ctx context.Context, path string, access tool.Access) (string, error) {
	return g.inner.Resolve(ctx, g.ProjectPath(path), access)
}

// WithFilter implements actors.Narrowable: a task's only_files confine
// the worker's writes as they would at home.
func (g treeGuard) WithFilter(f *policy.WriteFilter) tool.PathGuard {
	if pg, ok := g.inner.(*policy.Guard); ok {
		g.inner = pg.WithFilter(f)
	}
	return g
}

// ProjectPath implements actors.ProjectAlias: a remote isolated
// specialist's worktree guard maps the session's paths to its worktree.
func (g treeGuard) ProjectPath(path string) string {
	if rest, ok := strings.CutPrefix(path, g.root); ok && (rest == "" || rest[0] == filepath.Separator) {
		return g.tree + rest
	}
	return path
}
