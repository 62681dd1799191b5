package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/internal/worktree"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// rootGuard confines paths to a root.
type rootGuard struct{ root string }

type outside struct{}

func (outside) Error() string { return "outside the project" }
func (outside) Denied() bool  { return true }

func (g rootGuard) Resolve(_ context.Context, path string, _ tool.Access) (string, error) {
	p, err := workspace.Resolve(g.root, path)
	if err != nil {
		return "", err
	}
	if !workspace.Within(g.root, p) {
		return "", outside{}
	}
	return p, nil
}

// scriptedDeps builds a specialist's deps in a tree: Grep and the
// scripted model.
type scriptedDeps struct {
	client *llmtest.Client
	roots  atomic.Value // the last tree asked for
}

func (s *scriptedDeps) Deps(_ context.Context, root, _ string) (*actors.Deps, func(), error) {
	s.roots.Store(root)
	cfg := config.Default()
	set := tools.NewSet(tools.NewGrep())
	roster, err := actors.LoadRoster(actors.RosterOptions{Config: cfg, ToolNames: set.Names()})
	if err != nil {
		return nil, nil, err
	}
	var ids atomic.Int64
	deps := &actors.Deps{Root: root, Config: cfg, Tools: set, Roster: roster, Bus: events.New("remote", nil),
		Models: actors.ModelFunc(func(name string) (actors.Model, error) {
			return actors.Model{Client: s.client, ID: name, ContextWindow: 100000}, nil
		}),
		Guard: func(string, string) tool.PathGuard { return rootGuard{root} },
		Log:   zerolog.Nop(), NewID: func() string { return fmt.Sprint(ids.Add(1)) }}
	return deps, func() {}, nil
}

// parent stands for the Orchestrator: it spawns the stand-in and hands
// on what reaches it.
type parent struct {
	props *actor.Props
	d     *messages.Delegate
	got   chan any
}

func (p *parent) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *actor.Started:
		pid := c.Spawn(p.props)
		c.Send(pid, p.d)
	case *messages.Report, *messages.AgentProgress:
		p.got <- msg
	}
}

// One node in one process (one remote per test binary): a stand-in in
// another actor system — as a session's is — places a Search task on the
// node's own specialist host, which runs it in a worktree holding the
// uncommitted change, and the report comes back with the session's
// paths. Run with -race, this covers the stand-in, the placement, the
// host and the task actor.
func TestRemoteSpecialistOneNode(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("HOME", t.TempDir())
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitRun(t, root, "init", "-q")
	write(t, filepath.Join(root, "a.go"), "package a\n")
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "one")
	write(t, filepath.Join(root, "a.go"), "package a\n// NEEDLE dirty-marker\n")

	script := llmtest.NewScript()
	script.Add("search",
		llmtest.Step{When: "find the needle", ToolCalls: []llmtest.ToolCall{llmtest.Call("Grep", map[string]any{"pattern": "NEEDLE", "output_mode": "content"})}},
		llmtest.Step{When: "dirty-marker", ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{
			"query": "needle", "findings": []map[string]any{{"file": "{{tree}}/a.go", "line": 2, "relevance": 1}},
			"summary": "the needle is in {{tree}}/a.go", "confidence": 1})}})
	// The model names the tree it was shown, as a real one would: the
	// test's client fills in the tree once it exists.
	var client *llmtest.Client
	sd := &scriptedDeps{}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := Start(Config{Name: "specialists", Store: st, TTL: time.Second, Specialists: lazyDeps{sd, func(tree string) error {
		s, err := script.WithVars(map[string]string{"tree": tree})
		if err != nil {
			return err
		}
		client, err = llmtest.NewClient(s, nil)
		sd.client = client
		return err
	}}, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	sys := actors.NewActorSystem(slog.New(slog.DiscardHandler))
	defer sys.Shutdown()
	cfg := config.Default()
	roster, err := actors.LoadRoster(actors.RosterOptions{Config: &config.Config{Agents: map[string]config.Agent{"search": {Placement: "remote"}}}})
	if err != nil {
		t.Fatal(err)
	}
	def, _ := roster.Get("search")
	bus := events.New("s", nil)
	props := n.SpecialistPlacement().Props(actors.RemoteRun{Agent: def, Root: root, Local: actor.PropsFromFunc(func(actor.Context) {}),
		Publish: bus.Publish, Supervisor: actor.NewOneForOneStrategy(cfg.Supervision.MaxRestarts, time.Minute, func(any) actor.Directive { return actor.RestartDirective })})
	got := make(chan any, 16)
	d := &messages.Delegate{TaskID: "task-1", Agent: "search", Brief: "find the needle", Timeout: 30 * time.Second, SessionID: "s"}
	sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &parent{props: props, d: d, got: got} }))

	var rep *messages.Report
	for rep == nil {
		select {
		case m := <-got:
			if r, ok := m.(*messages.Report); ok {
				rep = r
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no report")
		}
	}
	if rep.Status != messages.ReportOK {
		t.Fatalf("report: %+v", rep)
	}
	tree, _ := sd.roots.Load().(string)
	if tree == "" || !strings.HasPrefix(tree, n.cfg.WorkDir) {
		t.Fatalf("the task ran in %q, not in a tree under %s", tree, n.cfg.WorkDir)
	}
	var sr messages.SearchResult
	if err := json.Unmarshal(rep.Result, &sr); err != nil {
		t.Fatal(err)
	}
	if want := root + "/a.go"; sr.Findings[0].File != want || rep.Summary != "the needle is in "+want {
		t.Errorf("report names %q / %q, want the session's %s", sr.Findings[0].File, rep.Summary, want)
	}
	if got := specialistTasks.Value(""); got == 0 {
		t.Error("the host counted no task")
	}
	// The grep ran in the tree, where the uncommitted line is.
	reqs := client.RequestsFor("search")
	last := reqs[len(reqs)-1].Messages
	if out := last[len(last)-1].Content; !strings.Contains(out, tree) || !strings.Contains(out, "dirty-marker") {
		t.Errorf("the grep's output %q does not come from the tree %s", out, tree)
	}
	if _, err := os.Stat(root + "/.git/index"); err != nil {
		t.Error(err)
	}
}

// lazyDeps makes the scripted client once the tree is known.
type lazyDeps struct {
	sd    *scriptedDeps
	ready func(tree string) error
}

func (l lazyDeps) Deps(ctx context.Context, root, scratch string) (*actors.Deps, func(), error) {
	if err := l.ready(root); err != nil {
		return nil, nil, err
	}
	return l.sd.Deps(ctx, root, scratch)
}

// writerDeps builds a writer's deps in a tree: read, edit and write
// tools, the scripted model, and a worktree manager under stateDir, as
// a worker's are.
type writerDeps struct {
	scripts  chan *llmtest.Script // one per task, in order
	stateDir string
	session  string // the session's root, which the model names
	trees    chan string
	scratch  chan string
	clients  []*llmtest.Client
}

func (w *writerDeps) Deps(_ context.Context, root, scratch string) (*actors.Deps, func(), error) {
	w.trees <- root
	w.scratch <- scratch
	client, err := llmtest.NewClient(<-w.scripts, nil)
	if err != nil {
		return nil, nil, err
	}
	w.clients = append(w.clients, client)
	cfg := config.Default()
	set := tools.NewSet(tools.NewReadFile(), tools.NewEditTool(), tools.NewWriteFile())
	roster, err := actors.LoadRoster(actors.RosterOptions{Config: cfg, ToolNames: set.Names()})
	if err != nil {
		return nil, nil, err
	}
	mgr := worktree.New(worktree.Options{StateDir: w.stateDir})
	var ids atomic.Int64
	deps := &actors.Deps{Root: root, Config: cfg, Tools: set, Roster: roster, Bus: events.New("remote", nil),
		Models: actors.ModelFunc(func(name string) (actors.Model, error) {
			return actors.Model{Client: client, ID: name, ContextWindow: 100000}, nil
		}),
		Guard: func(string, string) tool.PathGuard { return rootGuard{root} },
		Log:   zerolog.Nop(), NewID: func() string { return fmt.Sprint(ids.Add(1)) }, Worktrees: mgr}
	return deps, func() { _ = mgr.Close() }, nil
}

// A writer placed remote with isolation: worktree, on one node: its
// task runs in a worktree of the worker's tree — the model naming the
// session's paths, as the Orchestrator does — and its report carries
// the patch (whole contents before and after, the uncommitted base
// included) with the session's paths, while neither the session's
// project nor the worker's tree changed and no worktree is left. A patch
// past the wire's cap comes back as a failure saying so.
func TestRemoteWriterOneNode(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("HOME", t.TempDir())
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitRun(t, root, "init", "-q")
	write(t, filepath.Join(root, "a.txt"), "alpha\r\nbeta\n")
	write(t, filepath.Join(root, "b.txt"), "bravo\n")
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "one")
	// Uncommitted: the base the worker starts from is the session's.
	write(t, filepath.Join(root, "b.txt"), "bravo, uncommitted\n")

	big := strings.Repeat("0123456789abcdef", 3<<20/16+1)
	edit := llmtest.NewScript().Add("code",
		llmtest.Calls(llmtest.Call("ReadFile", map[string]any{"file_path": root + "/a.txt"}),
			llmtest.Call("ReadFile", map[string]any{"file_path": root + "/b.txt"})),
		llmtest.Calls(llmtest.Call("EditTool", map[string]any{"file_path": root + "/a.txt", "old_string": "beta", "new_string": "BETA"}),
			llmtest.Call("EditTool", map[string]any{"file_path": root + "/b.txt", "old_string": "uncommitted", "new_string": "edited remotely"}),
			llmtest.Call("WriteFile", map[string]any{"file_path": root + "/c.txt", "content": "charlie\n"})),
		llmtest.Calls(llmtest.Call("Report", map[string]any{"task": "edit", "summary": "edited " + root + "/a.txt"})))
	bigScript := llmtest.NewScript().Add("code",
		llmtest.Calls(llmtest.Call("WriteFile", map[string]any{"file_path": root + "/big.txt", "content": big})),
		llmtest.Calls(llmtest.Call("Report", map[string]any{"task": "big", "summary": "wrote big.txt"})))
	scripts := make(chan *llmtest.Script, 2)
	scripts <- edit
	scripts <- bigScript
	state := t.TempDir()
	wd := &writerDeps{scripts: scripts, stateDir: state, session: root, trees: make(chan string, 4), scratch: make(chan string, 4)}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := Start(Config{Name: "writers", Store: st, TTL: time.Second, Specialists: wd, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	sys := actors.NewActorSystem(slog.New(slog.DiscardHandler))
	defer sys.Shutdown()
	roster, err := actors.LoadRoster(actors.RosterOptions{Config: &config.Config{Agents: map[string]config.Agent{"code": {Placement: "remote", Isolation: "worktree"}}}})
	if err != nil {
		t.Fatal(err)
	}
	def, _ := roster.Get("code")
	bus := events.New("s", nil)
	run := func(id, brief string) *messages.Report {
		t.Helper()
		props := n.SpecialistPlacement().Props(actors.RemoteRun{Agent: def, Root: root, Local: actor.PropsFromFunc(func(actor.Context) {}),
			Publish: bus.Publish, Supervisor: actor.NewOneForOneStrategy(1, time.Minute, func(any) actor.Directive { return actor.RestartDirective })})
		got := make(chan any, 64)
		d := &messages.Delegate{TaskID: id, Agent: "code", Brief: brief, Timeout: time.Minute, SessionID: "s", Isolation: messages.IsolationWorktree, Mode: messages.ModeEdit}
		sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &parent{props: props, d: d, got: got} }))
		for {
			select {
			case m := <-got:
				if r, ok := m.(*messages.Report); ok {
					return r
				}
			case <-time.After(90 * time.Second):
				t.Fatalf("%s: no report", id)
			}
		}
	}
	snapshot := func(dir string) map[string]string {
		out := map[string]string{}
		for _, name := range []string{"a.txt", "b.txt", "c.txt", "big.txt"} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				out[name] = string(b)
			}
		}
		return out
	}
	before := snapshot(root)

	rep := run("task-edit", "TASK-EDIT: change the files")
	tree := <-wd.trees
	scratch := []string{<-wd.scratch}
	if !strings.HasPrefix(scratch[0], n.cfg.WorkDir+string(filepath.Separator)) {
		t.Errorf("the task's scratch directory %s is not the node's", scratch[0])
	}
	if rep.Status != messages.ReportOK || rep.Patch == nil {
		t.Fatalf("report: %+v", rep)
	}
	got := map[string]string{}
	for _, f := range rep.Patch.Files {
		got[f.Path] = fmt.Sprintf("%s %q -> %q", f.Op, f.Base, f.New)
	}
	want := map[string]string{
		"a.txt": fmt.Sprintf("modify %q -> %q", "alpha\r\nbeta\n", "alpha\r\nBETA\n"),
		"b.txt": fmt.Sprintf("modify %q -> %q", "bravo, uncommitted\n", "bravo, edited remotely\n"),
		"c.txt": fmt.Sprintf("add %q -> %q", "", "charlie\n"),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("patch (-want +got):\n%s", d)
		for _, r := range wd.clients[0].RequestsFor("code") {
			for _, m := range r.Messages {
				t.Logf("%s: %.300s", m.Role, m.Content)
			}
		}
	}
	if rep.Summary != "edited "+root+"/a.txt" || strings.Contains(rep.Summary, state) || strings.Contains(rep.Summary, tree) {
		t.Errorf("summary %q does not name the session's path", rep.Summary)
	}
	// Only the patch carries the change: the session's project and the
	// worker's shared tree are as they were.
	if d := cmp.Diff(before, snapshot(root)); d != "" {
		t.Errorf("the session's project changed (-before +after):\n%s", d)
	}
	if d := cmp.Diff(before, snapshot(tree)); d != "" {
		t.Errorf("the worker's tree changed (-before +after):\n%s", d)
	}

	rep = run("task-big", "TASK-BIG: write a big file")
	<-wd.trees
	scratch = append(scratch, <-wd.scratch)
	if rep.Status != messages.ReportFailed || rep.Patch != nil || !strings.Contains(rep.Error, "more than the 3072 KB a remote task may send back") {
		t.Errorf("an oversized patch: status %s, patch %v, error %q", rep.Status, rep.Patch != nil, rep.Error)
	}
	// The worktrees went with their runs, and the scratch directories
	// with their tasks (stopped by their owners once reported).
	deadline := time.Now().Add(10 * time.Second)
	for {
		entries, _ := os.ReadDir(filepath.Join(state, "worktrees"))
		var left []string
		for _, e := range entries {
			left = append(left, e.Name())
		}
		for _, d := range scratch {
			if _, err := os.Stat(d); err == nil {
				left = append(left, d)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("left on the worker: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The stand-in screens a worker's patch before the Orchestrator applies
// it: a file the session may not read (never shipped, so changed blind)
// is left out and reported, and a task that was not isolated brings no
// patch at all, whatever its worker sends.
func TestScreenPatch(t *testing.T) {
	patch := &messages.Patch{Files: []messages.PatchFile{
		{Path: "a.go", Op: messages.PatchModify, Base: []byte("a"), New: []byte("b")},
		{Path: "cfg/.env", Op: messages.PatchModify, Base: []byte("K=1"), New: []byte("K=2")},
	}}
	rep := &messages.Report{TaskID: "t", Agent: "code", Status: messages.ReportOK, Patch: patch}
	p := &specialistProxy{run: actors.RemoteRun{Root: "/proj", DenyRead: denyEnv{}}, d: &messages.Delegate{TaskID: "t", Isolation: messages.IsolationWorktree}}
	got := p.screen(rep)
	var paths []string
	for _, f := range got.Patch.Files {
		paths = append(paths, f.Path)
	}
	if d := cmp.Diff([]string{"a.go"}, paths); d != "" {
		t.Errorf("files kept (-want +got):\n%s", d)
	}
	if len(got.Patch.Skipped) != 1 || !strings.HasPrefix(got.Patch.Skipped[0], "cfg/.env: ") {
		t.Errorf("skipped: %q", got.Patch.Skipped)
	}
	if len(rep.Patch.Files) != 2 {
		t.Error("the worker's report was changed in place")
	}
	p.d = &messages.Delegate{TaskID: "t"}
	if got := p.screen(rep); got.Patch != nil {
		t.Errorf("a task without isolation kept its worker's patch: %+v", got.Patch)
	}
}

// A writer's only_files confine it on a worker too: the brief's files,
// named by the session's paths, are mapped to the tree, and the worker's
// guard — which takes the session's paths for the tree's — is narrowed
// to them as the session's would be.
func TestTreeGuardOnlyFiles(t *testing.T) {
	tree, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tree, "a.txt"), "a\n")
	write(t, filepath.Join(tree, "b.txt"), "b\n")
	pol, err := policy.New(policy.Options{Root: tree})
	if err != nil {
		t.Fatal(err)
	}
	const session = "/home/u/proj"
	d := newPathMapper(tree, session).reverse().delegate(&messages.Delegate{WriteFiles: []string{session + "/a.txt"}})
	if d.WriteFiles[0] != tree+"/a.txt" {
		t.Fatalf("only_files on the worker: %q", d.WriteFiles)
	}
	var g tool.PathGuard = treeGuard{inner: pol.GuardFor("code", "t"), root: session, tree: tree}
	n, ok := g.(actors.Narrowable)
	if !ok {
		t.Fatal("a worker's guard cannot be narrowed")
	}
	g = n.WithFilter(&policy.WriteFilter{Agent: "code", Kind: "the files its brief names", Allow: []string{"a.txt"}})
	if p, err := g.Resolve(t.Context(), session+"/a.txt", tool.AccessWrite); err != nil || p != tree+"/a.txt" {
		t.Errorf("the named file: %q %v", p, err)
	}
	if _, err := g.Resolve(t.Context(), session+"/b.txt", tool.AccessWrite); !tool.IsDenied(err) {
		t.Errorf("a file the brief does not name was not refused: %v", err)
	}
}
