package cluster

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/metrics"
	"github.com/odin-code/odin/messages"
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
// rooted at the task's tree (so the sandbox binds that tree). release is
// called when the task ends.
type SpecialistDeps interface {
	Deps(ctx context.Context, root string) (deps *actors.Deps, release func(), err error)
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
		return &specialistProxy{s: s, run: run, tried: map[string]bool{}}
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

func (s *specialists) done(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.placed[addr] > 0 {
		s.placed[addr]--
	}
}

// specialistProxy stands in for one remote task as the Orchestrator's
// child: it takes the Delegate, snapshots the session's tree, has a
// worker's specialist host run the task there, and passes the worker's
// progress and report up as a local specialist would. When the worker is
// lost before the report (its endpoint terminates: Terminated, within a
// second of a kill), it delegates the task once more — to another worker,
// or here — and tells the session (agent_restarted).
type specialistProxy struct {
	s   *specialists
	run actors.RemoteRun
	d   *messages.Delegate

	repo   *Repo
	worker string     // the member running the task now
	host   *actor.PID // its specialist host
	task   *actor.PID // the task there, once started
	local  *actor.PID // the specialist here, when it runs here
	tried  map[string]bool
	moves  int // re-delegations after a lost worker
	done   bool
	asking bool // a SpawnSpecialist awaits its answer
}

// maxMoves is how often a task is delegated again after losing its
// worker: once, as a lost worker is rare and a second loss in one task
// says the cluster is in trouble.
const maxMoves = 1

type repoReady struct {
	repo *Repo
	err  error
}

func (p *specialistProxy) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *messages.Delegate:
		p.onDelegate(c, msg)
	case *repoReady:
		p.onRepo(c, msg)
	case *anypb.Any:
		p.onEnvelope(c, msg)
	case *actor.Terminated:
		p.onTerminated(c, msg)
	case *actor.Stopping:
		p.stopRemote(c)
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
	if p.done {
		return
	}
	if msg.err != nil {
		p.runLocal(c, fmt.Sprintf("runs here: %v", msg.err))
		return
	}
	p.repo = msg.repo
	p.place(c, "")
}

// place sends the task to the next worker, or runs it here when no
// worker can take it.
func (p *specialistProxy) place(c actor.Context, why string) {
	addr := p.s.pick(p.tried)
	if addr == "" {
		text := "no worker hosts specialists: runs here"
		if why != "" {
			text = why + "; no other worker: runs here"
		}
		p.runLocal(c, text)
		return
	}
	if why != "" {
		p.run.Publish(messages.AgentRestarted{TaskID: p.d.TaskID, Agent: p.d.Agent, Restart: p.moves, Reason: why + "; delegated again to " + addr})
	}
	p.tried[addr] = true
	p.worker = addr
	p.host = actor.NewPID(addr, specialistHostName)
	p.task = nil
	// Watching the host tells the loss of its node before the task is
	// even started there.
	c.Watch(p.host)
	d := *p.d
	// The supervisor's step checks do not cross nodes: the deadline and
	// turn limit bound a remote task, and the wall budget is enforced
	// here (the Orchestrator stops this stand-in).
	d.Supervised = false
	env, err := Encode(&SpawnSpecialist{Delegate: d, Repo: *p.repo, Root: p.run.Root, ReplyAddress: c.Self().Address, ReplyID: c.Self().Id})
	if err != nil {
		p.runLocal(c, err.Error())
		return
	}
	p.asking = true
	c.Request(p.host, env)
}

// runLocal runs the task here, as the stand-in's child.
func (p *specialistProxy) runLocal(c actor.Context, why string) {
	if p.run.Publish != nil && p.run.Agent.Placement == actors.PlacementRemote {
		p.run.Publish(messages.Notice{Level: "info", Text: fmt.Sprintf("%s task %s %s", p.d.Agent, p.d.TaskID, why)})
	}
	p.worker, p.host, p.task = "", nil, nil
	p.local = c.SpawnPrefix(p.run.Local, "local-"+p.d.Agent)
	c.Send(p.local, p.d)
}

func (p *specialistProxy) onEnvelope(c actor.Context, env *anypb.Any) {
	msg, err := Decode(env)
	if err != nil {
		return
	}
	switch m := msg.(type) {
	case *SpecialistStarted:
		p.asking = false
		if p.worker == "" || p.done {
			return
		}
		p.task = actor.NewPID(m.Address, m.ID)
		c.Watch(p.task)
	case *Failure:
		// The host refused (it cannot make the tree): the next worker,
		// or here.
		p.asking = false
		p.leave(c)
		p.place(c, "")
	case *messages.Report:
		if p.done || m.TaskID != p.d.TaskID || p.local != nil {
			return
		}
		p.done = true
		p.leave(c)
		c.Send(c.Parent(), m)
	case *messages.AgentProgress:
		if !p.done && m.TaskID == p.d.TaskID && p.local == nil {
			c.Send(c.Parent(), m)
		}
	}
}

// leave forgets the current worker.
func (p *specialistProxy) leave(c actor.Context) {
	if p.worker == "" {
		return
	}
	p.s.done(p.worker)
	if p.host != nil {
		c.Unwatch(p.host)
	}
	if p.task != nil {
		c.Unwatch(p.task)
	}
	p.worker, p.host, p.task = "", nil, nil
}

func (p *specialistProxy) onTerminated(c actor.Context, msg *actor.Terminated) {
	switch {
	case p.local != nil && msg.Who.Equal(p.local):
		// The local specialist stopped without a report the parent took
		// (its crashes passed the restart limit): so does its stand-in,
		// and the Orchestrator reports the failure.
		c.Stop(c.Self())
	case p.done || p.worker == "":
	case msg.Who.Equal(p.host) || (p.task != nil && msg.Who.Equal(p.task)):
		lost := p.worker
		p.leave(c)
		if msg.Why != actor.TerminatedReason_AddressTerminated && msg.Who.Id != specialistHostName {
			// The task stopped on a live worker without reporting.
			p.done = true
			c.Send(c.Parent(), &messages.Report{TaskID: p.d.TaskID, Agent: p.d.Agent, Status: messages.ReportFailed,
				Summary: fmt.Sprintf("the %s specialist on %s stopped without reporting", p.d.Agent, lost),
				Error:   "stopped without reporting on " + lost})
			return
		}
		if p.moves >= maxMoves {
			p.done = true
			c.Send(c.Parent(), &messages.Report{TaskID: p.d.TaskID, Agent: p.d.Agent, Status: messages.ReportFailed,
				Summary: fmt.Sprintf("the %s task lost its worker %s after it had been delegated again", p.d.Agent, lost),
				Error:   "worker lost twice"})
			return
		}
		p.moves++
		redelegations.Inc()
		p.place(c, "worker "+lost+" lost")
	}
}

// stopRemote stops the remote task when the stand-in stops first (the
// turn was cancelled, the deadline passed, the report is in).
func (p *specialistProxy) stopRemote(c actor.Context) {
	if p.worker == "" {
		return
	}
	if p.task != nil && !p.done {
		if env, err := Encode(&StopSpecialist{}); err == nil {
			c.Send(p.task, env)
		}
	}
	p.leave(c)
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
			var deps *actors.Deps
			var releaseDeps func()
			deps, releaseDeps, err = t.deps.Deps(ctx, tree)
			if err != nil {
				releaseTree()
			} else {
				r.tree, r.deps = tree, deps
				r.release = func() { releaseDeps(); releaseTree() }
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
	sup := r.deps.Config.Supervision
	window := sup.Window
	if window <= 0 {
		window = time.Minute
	}
	props := actors.SpecialistProps(r.deps).Configure(actor.WithSupervisor(
		actor.NewOneForOneStrategy(sup.MaxRestarts, window, func(any) actor.Directive { return actor.RestartDirective })))
	t.child = c.SpawnPrefix(props, "specialist-"+t.req.Delegate.Agent)
	d := t.req.Delegate
	c.Send(t.child, &d)
}

func (t *remoteTask) onReport(c actor.Context, r *messages.Report) {
	if t.reported || r.TaskID != t.req.Delegate.TaskID {
		return
	}
	t.reported = true
	t.send(c, t.paths.report(r))
	c.Stop(c.Self())
}

func (t *remoteTask) fail(c actor.Context, status messages.ReportStatus, why string) {
	if t.reported {
		return
	}
	t.reported = true
	d := t.req.Delegate
	t.send(c, &messages.Report{TaskID: d.TaskID, Agent: d.Agent, Status: status, Summary: why, Error: why})
	c.Stop(c.Self())
}

func (t *remoteTask) send(c actor.Context, msg any) {
	env, err := Encode(msg)
	if err != nil {
		return
	}
	c.Send(t.owner, env)
}
