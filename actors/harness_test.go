package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testGuard allows paths inside the root.
type testGuard struct{ root string }

type denied struct{ msg string }

func (d denied) Error() string { return d.msg }
func (d denied) Denied() bool  { return true }

func (g testGuard) Resolve(_ context.Context, path string, _ tool.Access) (string, error) {
	p, err := workspace.Resolve(g.root, path)
	if err != nil {
		return "", err
	}
	if !workspace.Within(g.root, p) {
		return "", denied{path + " is outside the project"}
	}
	return p, nil
}

type echoIn struct {
	Text string `json:"text"`
}

type writeIn struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// testTools are small real tools: a read-class echo, a write-class file
// writer (checkpointing through env.BeforeWrite), a slow read, and one that
// panics.
func testTools() tools.Set {
	echo := tool.New[echoIn]("Echo", tool.ClassRead, "echo text", func(_ context.Context, _ *tool.Env, in echoIn) (tool.Result, error) {
		return tool.Result{Output: "echo: " + in.Text}, nil
	})
	write := tool.New[writeIn]("Write", tool.ClassWrite, "write a file", func(ctx context.Context, env *tool.Env, in writeIn) (tool.Result, error) {
		p, err := env.Guard.Resolve(ctx, in.Path, tool.AccessWrite)
		if err != nil {
			return tool.Result{Output: err.Error(), IsError: true, Denied: tool.IsDenied(err)}, nil
		}
		if env.BeforeWrite != nil {
			if err := env.BeforeWrite(p); err != nil {
				return tool.Errorf("%v", err), nil
			}
		}
		if err := os.WriteFile(p, []byte(in.Content), 0o644); err != nil {
			return tool.Errorf("%v", err), nil
		}
		return tool.Result{Output: "wrote " + in.Path, Files: []string{p}}, nil
	})
	slow := tool.New[echoIn]("Slow", tool.ClassRead, "wait until cancelled", func(ctx context.Context, _ *tool.Env, in echoIn) (tool.Result, error) {
		<-ctx.Done()
		return tool.Errorf("stopped: %v", ctx.Err()), nil
	})
	boom := tool.New[echoIn]("Boom", tool.ClassRead, "panics", func(context.Context, *tool.Env, echoIn) (tool.Result, error) {
		panic("boom")
	})
	broken := tool.New[echoIn]("Broken", tool.ClassRead, "fails with a Go error: the runtime broke", func(context.Context, *tool.Env, echoIn) (tool.Result, error) {
		return tool.Result{}, errors.New("boom: the runtime broke")
	})
	set := []tool.Tool{echo, write, slow, boom, broken}
	// Stand-ins named and classed like the built-ins, so that the roster's
	// tool lists and the mode filtering see a realistic set.
	for name, class := range map[string]tool.Class{
		"ReadFile": tool.ClassRead, "Glob": tool.ClassRead, "Grep": tool.ClassRead, "LS": tool.ClassRead,
		"Tree": tool.ClassRead, "GitDiff": tool.ClassRead, "WriteFile": tool.ClassWrite, "EditTool": tool.ClassWrite,
		"MultiEditTool": tool.ClassWrite, "ExecuteCommand": tool.ClassExecute, "WebFetch": tool.ClassWeb, "WebSearch": tool.ClassWeb,
	} {
		set = append(set, tool.New[echoIn](name, class, "stand-in", func(context.Context, *tool.Env, echoIn) (tool.Result, error) {
			return tool.Errorf("%s is a stand-in in actor tests", name), nil
		}))
	}
	sort.Slice(set, func(i, j int) bool { return set[i].Info().Name < set[j].Info().Name })
	return tools.NewSet(set...).Map(tools.WithRecover)
}

type harness struct {
	t      testing.TB
	root   string
	client *llmtest.Client
	deps   *Deps
	sess   *Session
	events <-chan messages.Envelope
	cancel context.CancelFunc
}

type harnessOpt func(*Deps)

func withConfig(f func(*config.Config)) harnessOpt { return func(d *Deps) { f(d.Config) } }

// withWindow gives every model a context window of n tokens.
func withWindow(n int) harnessOpt {
	return func(d *Deps) {
		inner := d.Models
		d.Models = ModelFunc(func(name string) (Model, error) {
			m, err := inner.Model(name)
			m.ContextWindow = n
			return m, err
		})
	}
}

// newHarness starts a session whose models are the scripted client.
func newHarness(t testing.TB, script *llmtest.Script, opts ...harnessOpt) *harness {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	client, err := llmtest.NewClient(script, map[string]string{"root": root})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Supervision.MaxRestarts = 2
	cfg.Supervision.Window = time.Minute
	set := testTools()
	var ids atomic.Int64
	deps := &Deps{
		Root: root, Config: cfg, Tools: set, Bus: events.New("s1", nil),
		Models: ModelFunc(func(name string) (Model, error) {
			return Model{Client: client, ID: name + "-model", ContextWindow: 100000, Price: config.Price{Input: 1, Output: 2}}, nil
		}),
		Guard:   func(string, string) tool.PathGuard { return testGuard{root} },
		Changes: trackerSets{root},
		Log:     zerolog.Nop(),
		NewID:   func() string { return fmt.Sprintf("id%d", ids.Add(1)) },
	}
	for _, o := range opts {
		o(deps)
	}
	if deps.Roster == nil {
		roster, err := LoadRoster(RosterOptions{Config: cfg, ToolNames: deps.Tools.Names()})
		if err != nil {
			t.Fatal(err)
		}
		deps.Roster = roster
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, root: root, client: client, deps: deps, cancel: cancel}
	h.events = deps.Bus.Subscribe(ctx, 1024, true)
	sess, err := NewSession(deps, SessionOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	h.sess = sess
	t.Cleanup(h.close)
	return h
}

func (h *harness) close() {
	client := h.client
	client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = h.sess.Close(ctx)
	h.cancel()
	for range h.events {
	}
}

// next waits for the next event of type T, collecting the ones before it.
func next[T messages.Event](h *harness) (T, []messages.Event) {
	h.t.Helper()
	var seen []messages.Event
	timeout := time.After(20 * time.Second)
	for {
		select {
		case env, ok := <-h.events:
			if !ok {
				var zero T
				h.t.Fatalf("event stream closed while waiting for %T", zero)
			}
			seen = append(seen, env.Event)
			if ev, ok := env.Event.(T); ok {
				return ev, seen
			}
		case <-timeout:
			var zero T
			h.t.Fatalf("no %T within 20s; saw %d events: %s", zero, len(seen), eventTypes(seen))
		}
	}
}

func (h *harness) turn() messages.TurnResult {
	h.t.Helper()
	tf, _ := next[messages.TurnFinished](h)
	return tf.Result
}

func eventTypes(evs []messages.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.EventType())
	}
	return strings.Join(out, ",")
}

func toolNames(req llm.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// agentEnum returns the agents the request's agent tool offers.
func agentEnum(t testing.TB, req llm.Request) []string {
	t.Helper()
	for _, d := range req.Tools {
		if d.Name != AgentToolName {
			continue
		}
		var schema struct {
			Properties struct {
				Agent struct {
					Enum []string `json:"enum"`
				} `json:"agent"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(d.Parameters, &schema); err != nil {
			t.Fatal(err)
		}
		return schema.Properties.Agent.Enum
	}
	return nil
}

// trackerSets hands out checkpoint trackers, as the CLI does.
type trackerSets struct{ root string }

func (s trackerSets) Begin(_ context.Context, _, label string) ChangeTracker {
	return checkpoint.NewTracker(s.root, label)
}
func (trackerSets) Commit(context.Context, ChangeTracker) error { return nil }

// conversation is an Orchestrator request's messages after what Odin
// composes for every request: the shared system message, and its role at
// the head of the first user message.
func conversation(req llm.Request) []llm.Message {
	msgs := slices.Clone(req.Messages)
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		msgs = msgs[1:]
	}
	if len(msgs) > 0 && strings.HasPrefix(msgs[0].Content, "# Your role\n") {
		if _, rest, ok := strings.Cut(msgs[0].Content, conversationHeading); ok {
			msgs[0].Content = rest
		} else {
			msgs = msgs[1:]
		}
	}
	return msgs
}
