package llm_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// A call is announced done while the response still streams, once the
// next call begins: every call but the last, in order, with the ID, name
// and arguments the response ends with, each before the next call is
// announced — in the stream shapes of the providers that send calls
// differently.
func TestToolCallDoneBeforeTheNextCall(t *testing.T) {
	quirks := map[string]llmtest.Quirks{
		"openai":          {},
		"whole":           {ToolCallWhole: true},
		"no index":        {NoIndex: true},
		"index base 1":    {IndexBase: 1},
		"repeated id":     {RepeatID: true},
		"empty id":        {EmptyID: true},
		"legacy function": {LegacyFunctionCall: true},
	}
	for name, q := range quirks {
		t.Run(name, func(t *testing.T) {
			n := 4
			if q.LegacyFunctionCall {
				n = 1 // one call per message in that format
			}
			var calls []llmtest.ToolCall
			for i := range n {
				calls = append(calls, llmtest.Call("agent", map[string]any{"agent": "search", "prompt": fmt.Sprintf("find the %d things that matter", i)}))
			}
			srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Step{ToolCalls: calls, ChunkSize: 5, Quirks: q}))
			c, _ := newAdapter(t, srv.URL())
			var done []llm.ToolCall
			var order []string
			resp, err := c.Stream(t.Context(), userRequest("fan out"), func(ev llm.Event) {
				switch ev.Kind {
				case llm.EventToolCall:
					order = append(order, "call "+ev.ToolCall.ID)
				case llm.EventToolCallDone:
					order = append(order, "done "+ev.ToolCall.ID)
					done = append(done, *ev.ToolCall)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) != n {
				t.Fatalf("response has %d calls, want %d", len(resp.ToolCalls), n)
			}
			want := resp.ToolCalls[:n-1]
			if diff := cmp.Diff(want, done, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("done calls (-want +got):\n%s", diff)
			}
			var wantOrder []string
			for i, c := range resp.ToolCalls {
				if i > 0 {
					wantOrder = append(wantOrder, "done "+resp.ToolCalls[i-1].ID)
				}
				wantOrder = append(wantOrder, "call "+c.ID)
			}
			if diff := cmp.Diff(wantOrder, order); diff != "" {
				t.Errorf("event order (-want +got):\n%s", diff)
			}
		})
	}
}

// A call cut off by the output limit is never announced done, nor is one
// whose arguments are not JSON: the response's tool error stays theirs.
func TestToolCallDoneNotForBrokenArguments(t *testing.T) {
	calls := []llmtest.ToolCall{
		{Name: "agent", Arguments: llmtest.RawArgs(`{"agent": "search", "prompt": `)},
		llmtest.Call("agent", map[string]any{"agent": "search", "prompt": "b"}),
		{Name: "agent", Arguments: llmtest.RawArgs(`{"agent": "search", "pro`)},
	}
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Step{ToolCalls: calls, ChunkSize: 3, FinishReason: "length"}))
	c, _ := newAdapter(t, srv.URL())
	var done []string
	resp, err := c.Stream(t.Context(), userRequest("fan out"), func(ev llm.Event) {
		if ev.Kind == llm.EventToolCallDone {
			done = append(done, ev.ToolCall.Arguments)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != llm.FinishLength || len(resp.ToolCalls) != 3 {
		t.Fatalf("response = %+v", resp)
	}
	if diff := cmp.Diff([]string{resp.ToolCalls[1].Arguments}, done); diff != "" {
		t.Errorf("done (-want +got):\n%s", diff)
	}
}
