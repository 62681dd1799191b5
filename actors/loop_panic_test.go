package actors

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// TestRunCallsRecoversPanics: a tool that panics outside any WithRecover
// (here: bare) fails its own call with an error result naming it, logged
// with its stack; the call beside it completes. Without the recovery the
// panic would end the test binary, as it ended odin.
func TestRunCallsRecoversPanics(t *testing.T) {
	type in struct {
		X string `json:"x,omitempty"`
	}
	boom := tool.New[in]("Boom", tool.ClassRead, "panics", func(context.Context, *tool.Env, in) (tool.Result, error) {
		var m map[string]int
		//lint:ignore SA5000 the runtime panic is what this test needs
		m["x"] = 1
		return tool.Result{}, nil
	})
	fine := tool.New[in]("Fine", tool.ClassRead, "works", func(context.Context, *tool.Env, in) (tool.Result, error) {
		return tool.Result{Output: "fine"}, nil
	})
	var logged bytes.Buffer
	calls := []llm.ToolCall{{ID: "1", Name: "Boom", Arguments: "{}"}, {ID: "2", Name: "Fine", Arguments: "{}"}}
	out := runCalls(t.Context(), zerolog.New(&logged), tools.NewSet(boom, fine), &tool.Env{}, calls, calls, events.New("t", nil), messages.Origin{Agent: "orchestrator"})
	if out[0].err != nil || !out[0].result.IsError || !strings.Contains(out[0].result.Output, "Boom failed") {
		t.Errorf("panicking call: %+v", out[0])
	}
	if out[1].err != nil || out[1].result.IsError || out[1].result.Output != "fine" {
		t.Errorf("the call beside it: %+v", out[1])
	}
	if !strings.Contains(logged.String(), `"tool":"Boom"`) || !strings.Contains(logged.String(), "loop_panic_test.go") {
		t.Errorf("the panic is not logged with its stack: %s", logged.String())
	}
}
