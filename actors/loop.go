package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// modelDone carries a finished model call back to the actor.
type modelDone struct {
	turn int
	resp *llm.Response
	err  error
}

// callOutcome is one executed tool call.
type callOutcome struct {
	call    llm.ToolCall
	result  tool.Result
	err     error // the runtime broke (a tool panicked or failed internally)
	elapsed time.Duration
}

// toolsDone carries executed tool calls back to the actor, in call order.
type toolsDone struct {
	turn     int
	outcomes []callOutcome
}

// streamModel performs one model call, publishing deltas as events. tap,
// when not nil, sees every delta first (to persist the reply as it
// streams).
func streamModel(ctx context.Context, m Model, req llm.Request, bus *events.Bus, origin messages.Origin, tap func(llm.Event)) (*llm.Response, error) {
	return m.Client.Stream(ctx, req, func(ev llm.Event) {
		if tap != nil {
			tap(ev)
		}
		switch ev.Kind {
		case llm.EventText:
			bus.Publish(messages.TextDelta{Origin: origin, Text: ev.Text})
		case llm.EventReasoning:
			bus.Publish(messages.ReasoningDelta{Origin: origin, Text: ev.Text})
		case llm.EventRetry:
			r := ev.Retry
			msg := ""
			if r.Err != nil {
				msg = r.Err.Error()
			}
			bus.Publish(messages.Retrying{Origin: origin, Attempt: r.Attempt, WaitMS: r.Wait, Error: msg})
		case llm.EventRateLimit:
			bus.Publish(messages.RateLimited{Origin: origin, Provider: ev.RateWait.Provider, WaitMS: ev.RateWait.Wait})
		}
	})
}

// runCalls executes tool calls: consecutive read-class (and web-class)
// calls run concurrently, any other call runs alone in order, so
// independent reads overlap while writes and commands stay serialized.
//
// A panic in a call (a tool not wrapped with tools.WithRecover, or a
// decorator around it) becomes that call's error result, logged to log
// with its stack: the calls run in goroutines of their own, where an
// unrecovered panic would end the process and every session in it.
//
// kept[i] is calls[i] as the session keeps it (storedCall), which events
// and outcomes carry; the tool alone gets calls[i].
func runCalls(ctx context.Context, log zerolog.Logger, set tools.Set, env *tool.Env, calls, kept []llm.ToolCall, bus *events.Bus, origin messages.Origin) []callOutcome {
	ctx = log.WithContext(ctx)
	out := make([]callOutcome, len(calls))
	concurrent := func(c llm.ToolCall) bool {
		t, ok := set.Get(c.Name)
		if !ok {
			return true
		}
		cl := t.Info().Class
		return cl == tool.ClassRead || cl == tool.ClassWeb
	}
	for i := 0; i < len(calls); {
		j := i + 1
		if concurrent(calls[i]) {
			for j < len(calls) && concurrent(calls[j]) {
				j++
			}
		}
		var wg sync.WaitGroup
		for k := i; k < j; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[k] = runOne(ctx, set, env, calls[k], kept[k], bus, origin)
			}()
		}
		wg.Wait()
		i = j
	}
	return out
}

func runOne(ctx context.Context, set tools.Set, env *tool.Env, call, kept llm.ToolCall, bus *events.Bus, origin messages.Origin) callOutcome {
	start := time.Now()
	bus.Publish(messages.ToolStarted{Origin: origin, CallID: call.ID, Name: call.Name, Input: kept.Arguments})
	var res tool.Result
	var err error
	switch {
	case ctx.Err() != nil:
		res = cancelledResult()
	case call.Dropped > 0:
		res = droppedResult(call)
	default:
		// The call's identity rides in ctx so that an approval it asks
		// or an editor file it reads names this call (ACP shows them on
		// the call's card).
		res, err = runRecovered(tool.WithCall(ctx, tool.CallRef{Origin: origin, ID: call.ID}), set, env, call)
		if err == nil && ctx.Err() != nil && res.IsError {
			res = cancelledResult()
		}
	}
	o := callOutcome{call: kept, result: res, err: err, elapsed: time.Since(start)}
	out := res.Output
	if err != nil {
		out = "internal error: " + err.Error()
	}
	bus.Publish(messages.ToolFinished{Origin: origin, CallID: call.ID, Name: call.Name,
		IsError: res.IsError || err != nil, Denied: res.Denied, Output: shorten(out, 2000),
		Files: res.Files, Elapsed: o.elapsed})
	return o
}

// runRecovered runs call, turning a panic into its error result.
func runRecovered(ctx context.Context, set tools.Set, env *tool.Env, call llm.ToolCall) (res tool.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = tools.PanicResult(ctx, call.Name, p, debug.Stack()), nil
		}
	}()
	return set.Run(ctx, env, call.Name, json.RawMessage(call.Arguments))
}

func cancelledResult() tool.Result {
	return tool.Result{Output: "cancelled: the turn was cancelled before this tool call finished", IsError: true}
}

// toolMessage is the conversation entry answering call.
func toolMessage(call llm.ToolCall, content string, isError bool) toolResult {
	if isError && !strings.HasPrefix(content, "Error") {
		content = "Error: " + content
	}
	if content == "" {
		content = "(no output)"
	}
	return toolResult{msg: llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: content}, isError: isError}
}

// withImages attaches a tool result's images to its message.
func withImages(r toolResult, images []messages.Image) toolResult {
	r.msg.Images = llmImages(images)
	return r
}

// withoutImageData is in as published in events: its images' names and
// sizes without their bytes, which front ends only label and the JSON
// stream would otherwise carry whole.
func withoutImageData(in messages.UserMessage) messages.UserMessage {
	if len(in.Images) == 0 {
		return in
	}
	images := make([]messages.Image, len(in.Images))
	for i, im := range in.Images {
		im.Data = nil
		images[i] = im
	}
	in.Images = images
	return in
}

// llmImages converts images to the model's form.
func llmImages(images []messages.Image) []llm.Image {
	if len(images) == 0 {
		return nil
	}
	out := make([]llm.Image, len(images))
	for i, im := range images {
		out[i] = llm.Image{Name: im.Name, MIME: im.MIME, Data: im.Data, Width: im.Width, Height: im.Height}
	}
	return out
}

// cancelledMessage answers a call that never finished.
func cancelledMessage(call llm.ToolCall) toolResult {
	r := toolMessage(call, cancelledResult().Output, true)
	r.cancelled = true
	return r
}

// assistantMessage is the conversation entry of a model response.
func assistantMessage(r *llm.Response) llm.Message {
	text := r.Text
	if text == "" && r.Refusal != "" {
		text = r.Refusal
	}
	return llm.Message{Role: llm.RoleAssistant, Content: text, Reasoning: r.Reasoning, ToolCalls: storedCalls(r.ToolCalls)}
}

// shorten cuts s to about n bytes on a rune boundary, noting the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// addUnique appends the paths not yet in list.
func addUnique(list []string, paths ...string) []string {
	for _, p := range paths {
		found := false
		for _, q := range list {
			if q == p {
				found = true
				break
			}
		}
		if !found {
			list = append(list, p)
		}
	}
	return list
}

// activity is a one-line description of a tool call for progress
// displays: the tool and its main argument, paths relative to root. call
// is the call as the session keeps it (storedCall): its arguments are
// decoded here whole.
func activity(root string, call llm.ToolCall) string {
	var args map[string]any
	// encoding/json's semantics by the v2 engine: every call of every
	// specialist passes here, a Report's whole result with it.
	_ = jsonv1.Unmarshal([]byte(call.Arguments), &args)
	for _, k := range []string{"file_path", "path", "pattern", "command", "url", "query", "description"} {
		if v, ok := args[k].(string); ok && v != "" {
			if k == "file_path" || k == "path" {
				v = relPath(root, v)
			}
			if r := []rune(v); len(r) > 60 {
				v = string(r[:59]) + "…"
			}
			return call.Name + " " + v
		}
	}
	return call.Name
}

// finishProblem explains a response that cannot be used as a final answer.
func finishProblem(r *llm.Response) string {
	switch {
	case r.FinishReason == llm.FinishLength && len(r.ToolCalls) == 0:
		return "the model's response was cut off at its output limit (finish_reason=length) before it finished"
	case r.FinishReason == llm.FinishContentFilter:
		return "the provider's content filter stopped the response"
	}
	return ""
}
