package events

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
)

// everyEvent is one value of every messages.Event type with whether a
// lagging subscriber's backlog collapse must keep it. A new event type
// fails TestEveryEventTypeIsListed until someone decides here whether a
// front end can do without it.
var everyEvent = []struct {
	ev   messages.Event
	keep bool
}{
	// The ends a front end waits for: `odin run` exits on TurnFinished.
	{messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnDone}}, true},
	{messages.SessionFenced{Epoch: 2, Reason: "taken over"}, true},
	{messages.TurnStarted{}, true},
	{messages.InputQueued{}, true},
	{messages.InputRemoved{ID: "q1"}, true},
	{messages.ApprovalRequested{}, true},
	{messages.ApprovalResolved{}, true},
	// An MCP server waits on a form only a front end can show.
	{messages.ElicitationRequested{}, true},
	{messages.ElicitationResolved{}, true},

	{messages.TextDelta{Text: "x"}, false},
	{messages.ReasoningDelta{}, false},
	{messages.Retrying{}, false},
	{messages.RateLimited{}, false},
	{messages.ToolStarted{}, false},
	{messages.ToolFinished{}, false},
	{messages.AgentStarted{}, false},
	{messages.AgentProgress{}, false},
	{messages.AgentRestarted{}, false},
	{messages.AgentFinished{}, false},
	{messages.UsageUpdated{}, false},
	{messages.TodosUpdated{}, false},
	{messages.GateDecided{}, false},
	{messages.GateStage{}, false},
	{messages.Notice{}, false},
	{messages.Compacted{}, false},
	{messages.Init{}, false},
	{messages.BudgetExceeded{}, false},
	{messages.NoProgress{}, false},
}

// A backlog collapse keeps exactly the essential events, whatever else
// surrounds them, and counts the rest in one Resync.
func TestCollapseKeepsExactlyTheEssentialEvents(t *testing.T) {
	for _, c := range everyEvent {
		t.Run(c.ev.EventType(), func(t *testing.T) {
			q := make([]messages.Envelope, 0, 21)
			for range 10 {
				q = append(q, messages.Envelope{Event: messages.TextDelta{Text: "x"}})
			}
			q = append(q, messages.Envelope{Event: c.ev})
			for range 10 {
				q = append(q, messages.Envelope{Event: messages.TextDelta{Text: "y"}})
			}
			var kept []messages.Event
			var resync messages.Resync
			for _, env := range collapse(q) {
				if r, ok := env.Event.(messages.Resync); ok {
					resync = r
					continue
				}
				kept = append(kept, env.Event)
			}
			var want []messages.Event
			dropped := 20
			if c.keep {
				want = []messages.Event{c.ev}
			} else {
				dropped++
			}
			if diff := cmp.Diff(want, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if resync.Dropped != dropped {
				t.Errorf("Resync counts %d dropped, want %d", resync.Dropped, dropped)
			}
		})
	}
}

// The end of a turn reaches a front end that stopped reading mid-turn and
// came back only after a flood of streamed text far past its backlog: the
// event `odin run` waits for is never collapsed away.
func TestTurnEndSurvivesAStalledSubscriber(t *testing.T) {
	b := New("s1", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := b.Subscribe(ctx, 1, true)
	b.Publish(messages.TurnStarted{})
	for range 2000 {
		b.Publish(messages.TextDelta{Text: "x"})
	}
	b.Publish(messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnDone}})
	for range 2000 {
		b.Publish(messages.ToolStarted{})
	}
	b.Publish(messages.SessionFenced{Epoch: 7})
	var got []string
	for env := range ch {
		switch env.Event.(type) {
		case messages.TurnStarted, messages.TurnFinished, messages.SessionFenced:
			got = append(got, env.Event.EventType())
		}
		if _, ok := env.Event.(messages.SessionFenced); ok {
			break
		}
	}
	if diff := cmp.Diff([]string{"turn_started", "turn_finished", "session_fenced"}, got); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}

// Every type in messages that implements Event has a row in everyEvent.
func TestEveryEventTypeIsListed(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "..", "messages", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("messages sources: %v", err)
	}
	var declared []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != "EventType" || fd.Recv == nil || len(fd.Recv.List) != 1 {
				continue
			}
			if id, ok := fd.Recv.List[0].Type.(*ast.Ident); ok {
				declared = append(declared, id.Name)
			}
		}
	}
	listed := []string{"Resync"} // what collapse itself writes
	for _, c := range everyEvent {
		listed = append(listed, reflect.TypeOf(c.ev).Name())
	}
	sort.Strings(declared)
	sort.Strings(listed)
	if diff := cmp.Diff(declared, listed); diff != "" {
		t.Errorf("event types (-declared +listed in everyEvent):\n%s", diff)
	}
}
