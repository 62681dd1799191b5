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
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/workspace"
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

func (s *scriptedDeps) Deps(_ context.Context, root string) (*actors.Deps, func(), error) {
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

func (l lazyDeps) Deps(ctx context.Context, root string) (*actors.Deps, func(), error) {
	if err := l.ready(root); err != nil {
		return nil, nil, err
	}
	return l.sd.Deps(ctx, root)
}
