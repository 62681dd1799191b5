package main

import (
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/odin-code/odin/messages"
)

// claudeStream writes `--output-format stream-json`: Claude Code's stream
// shapes (docs/claude-stream.md), so a script written for
// `claude -p --output-format stream-json --verbose` reads Odin's unchanged.
// Odin's own, richer events are `--output-format odin-stream`.
//
// The mapping: the first line is a system/init message; what a model says
// before calling tools and the calls themselves are assistant messages
// (text and tool_use blocks); each tool's result is a user message with a
// tool_result block; the turn ends with a result message. A specialist's
// messages carry parent_tool_use_id: the Orchestrator's `agent` call that
// started it, or, for a specialist the quality gates started (which no
// call announced), its task id.
type claudeStream struct {
	w       io.Writer
	session string
	model   string // the Orchestrator's model
	start   time.Time

	said    map[string]*strings.Builder // pending text per origin ("" the Orchestrator)
	models  map[string]string           // the model of each task, from agent_started
	parents map[string]string           // task id → the agent call that started it
	calls   []pendingCall               // agent calls not yet matched to a task

	turns   int // the Orchestrator's model calls this turn
	byModel map[string]*claudeModelUsage
	order   []string // models in first-use order, for a stable modelUsage
	denials []claudeDenial
}

type pendingCall struct {
	id, input string
}

func newClaudeStream(w io.Writer) *claudeStream {
	return &claudeStream{w: w, start: time.Now(), said: map[string]*strings.Builder{}, models: map[string]string{},
		parents: map[string]string{}, byModel: map[string]*claudeModelUsage{}}
}

// claudeInit is the system/init message.
type claudeInit struct {
	Type           string   `json:"type"`    // "system"
	Subtype        string   `json:"subtype"` // "init"
	SessionID      string   `json:"session_id"`
	Cwd            string   `json:"cwd"`
	Model          string   `json:"model"`
	Tools          []string `json:"tools"`
	MCPServers     []any    `json:"mcp_servers"`
	PermissionMode string   `json:"permissionMode"`
	SlashCommands  []string `json:"slash_commands"`
	Agents         []string `json:"agents"`
	APIKeySource   string   `json:"apiKeySource"`
	OutputStyle    string   `json:"output_style"`
	UUID           string   `json:"uuid"`
	// Odin's own, for consumers that know them.
	Mode    messages.Mode `json:"odin_mode"`
	Version string        `json:"odin_version"`
}

// claudeMessage is an assistant or user message line.
type claudeMessage struct {
	Type            string      `json:"type"` // "assistant" or "user"
	Message         claudeInner `json:"message"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	SessionID       string      `json:"session_id"`
	UUID            string      `json:"uuid"`
}

type claudeInner struct {
	ID           string         `json:"id,omitempty"`
	Type         string         `json:"type,omitempty"` // "message" for the assistant's
	Role         string         `json:"role"`
	Model        string         `json:"model,omitempty"`
	Content      []claudeBlock  `json:"content"`
	StopReason   *string        `json:"stop_reason,omitempty"`
	StopSequence *string        `json:"stop_sequence,omitempty"`
	Usage        *claudeMsgUsed `json:"usage,omitempty"`
}

// claudeBlock is a content block: text, tool_use or tool_result.
type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   *bool           `json:"is_error,omitempty"`
}

type claudeMsgUsed struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// claudeUsage is a result's usage: Claude's names, with Odin's beside them
// (prompt_tokens counts cached tokens too; input_tokens does not), so
// consumers of either read it.
type claudeUsage struct {
	InputTokens              int64          `json:"input_tokens"`
	CacheCreationInputTokens int64          `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64          `json:"cache_read_input_tokens"`
	OutputTokens             int64          `json:"output_tokens"`
	ServerToolUse            map[string]int `json:"server_tool_use"`
	ServiceTier              string         `json:"service_tier"`
	messages.Usage
}

func newClaudeUsage(u messages.Usage) claudeUsage {
	return claudeUsage{InputTokens: max(u.PromptTokens-u.CachedTokens, 0), CacheReadInputTokens: u.CachedTokens,
		OutputTokens: u.CompletionTokens, ServerToolUse: map[string]int{"web_search_requests": 0},
		ServiceTier: "standard", Usage: u}
}

// claudeModelUsage is one model's line of a result's modelUsage.
type claudeModelUsage struct {
	InputTokens              int64    `json:"inputTokens"`
	OutputTokens             int64    `json:"outputTokens"`
	CacheReadInputTokens     int64    `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64    `json:"cacheCreationInputTokens"`
	WebSearchRequests        int      `json:"webSearchRequests"`
	CostUSD                  *float64 `json:"costUSD"` // null when the model's price is unknown
	cost                     float64
	unknown                  bool
}

type claudeDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// claudeResult is the last line of a turn (and the whole of
// --output-format json): Claude's result fields, then Odin's TurnResult.
type claudeResult struct {
	Type       string `json:"type"`    // "result"
	Subtype    string `json:"subtype"` // "success" or "error_during_execution"
	IsError    bool   `json:"is_error"`
	DurationMS int64  `json:"duration_ms"`
	// DurationAPIMS is Claude's time spent in model calls. Odin's events
	// do not time the calls apart from the tools, so it is the turn's
	// whole duration, as docs/claude-stream.md says.
	DurationAPIMS     int64                        `json:"duration_api_ms"`
	NumTurns          int                          `json:"num_turns"`
	Result            string                       `json:"result"`
	StopReason        *string                      `json:"stop_reason"`
	SessionID         string                       `json:"session_id"`
	TotalCostUSD      *float64                     `json:"total_cost_usd"` // null when a price is unknown
	Usage             claudeUsage                  `json:"usage"`
	ModelUsage        map[string]*claudeModelUsage `json:"modelUsage"`
	PermissionDenials []claudeDenial               `json:"permission_denials"`
	UUID              string                       `json:"uuid"`
	messages.TurnResult
}

func (c *claudeStream) write(v any) { writeJSON(c.w, v) }

// init writes the system/init line.
func (c *claudeStream) init(ev messages.Init, permissionMode string) {
	c.session, c.model = ev.SessionID, ev.Model
	tools := append([]string{}, ev.Tools...)
	c.write(claudeInit{Type: "system", Subtype: "init", SessionID: ev.SessionID, Cwd: ev.Cwd, Model: ev.Model,
		Tools: tools, MCPServers: []any{}, PermissionMode: permissionMode, SlashCommands: []string{}, Agents: ev.Agents,
		APIKeySource: "none", OutputStyle: "default", UUID: uuid.NewString(), Mode: ev.Mode, Version: ev.Version})
}

// parent is the parent_tool_use_id of an origin's messages.
func (c *claudeStream) parent(o messages.Origin) *string {
	if o.TaskID == "" {
		return nil
	}
	if p, ok := c.parents[o.TaskID]; ok {
		return &p
	}
	p := o.TaskID
	return &p
}

func (c *claudeStream) modelOf(o messages.Origin) string {
	if m := c.models[o.TaskID]; o.TaskID != "" && m != "" {
		return m
	}
	return c.model
}

// assistant writes an assistant message of blocks, with the origin's
// pending text first.
func (c *claudeStream) assistant(o messages.Origin, blocks ...claudeBlock) {
	if b := c.said[o.TaskID]; b != nil {
		if text := strings.TrimSpace(b.String()); text != "" {
			blocks = append([]claudeBlock{{Type: "text", Text: text}}, blocks...)
		}
		b.Reset()
	}
	if len(blocks) == 0 {
		return
	}
	c.write(claudeMessage{Type: "assistant", ParentToolUseID: c.parent(o), SessionID: c.session, UUID: uuid.NewString(),
		Message: claudeInner{ID: "msg_" + strings.ReplaceAll(uuid.NewString(), "-", ""), Type: "message", Role: "assistant",
			Model: c.modelOf(o), Content: blocks, Usage: &claudeMsgUsed{}}})
}

// toolInput is a call's arguments as a JSON object (Claude's input is
// always one); arguments that are not one are kept as {"raw": "..."}.
func toolInput(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(map[string]string{"raw": s})
	return b
}

// event turns one of Odin's events into Claude's lines (most events have
// none: Claude's stream has no place for them).
func (c *claudeStream) event(env messages.Envelope) {
	switch ev := env.Event.(type) {
	case messages.TextDelta:
		b := c.said[ev.TaskID]
		if b == nil {
			b = &strings.Builder{}
			c.said[ev.TaskID] = b
		}
		b.WriteString(ev.Text)
	case messages.Retrying:
		if b := c.said[ev.TaskID]; b != nil {
			b.Reset() // the failed call's text is not what the model said
		}
	case messages.ToolStarted:
		if ev.TaskID == "" && ev.Name == "agent" {
			c.calls = append(c.calls, pendingCall{id: ev.CallID, input: ev.Input})
		}
		c.assistant(ev.Origin, claudeBlock{Type: "tool_use", ID: ev.CallID, Name: ev.Name, Input: toolInput(ev.Input)})
	case messages.ToolFinished:
		out, isErr := ev.Output, ev.IsError || ev.Denied
		if ev.Denied {
			c.denials = append(c.denials, claudeDenial{ToolName: ev.Name, ToolUseID: ev.CallID, ToolInput: json.RawMessage("{}")})
		}
		c.write(claudeMessage{Type: "user", ParentToolUseID: c.parent(ev.Origin), SessionID: c.session, UUID: uuid.NewString(),
			Message: claudeInner{Role: "user", Content: []claudeBlock{{Type: "tool_result", ToolUseID: ev.CallID, Content: &out, IsError: &isErr}}}})
	case messages.AgentStarted:
		c.models[ev.TaskID] = ev.Model
		// The agent call whose arguments hold this task's description
		// started it; failing that, the oldest unmatched one.
		pick := -1
		for i, call := range c.calls {
			if ev.Description != "" && strings.Contains(call.input, jsonString(ev.Description)) {
				pick = i
				break
			}
		}
		if pick < 0 && len(c.calls) > 0 {
			pick = 0
		}
		if pick >= 0 {
			c.parents[ev.TaskID] = c.calls[pick].id
			c.calls = append(c.calls[:pick], c.calls[pick+1:]...)
		}
	case messages.AgentFinished:
		c.assistant(messages.Origin{Agent: ev.Report.Agent, TaskID: ev.Report.TaskID})
	case messages.UsageUpdated:
		if ev.TaskID == "" {
			c.turns++
		}
		c.addModelUsage(ev.Model, ev.Usage)
	}
}

// jsonString is s as it appears inside a JSON document (quotes stripped).
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

func (c *claudeStream) addModelUsage(model string, u messages.Usage) {
	m := c.byModel[model]
	if m == nil {
		m = &claudeModelUsage{}
		c.byModel[model] = m
		c.order = append(c.order, model)
	}
	m.InputTokens += max(u.PromptTokens-u.CachedTokens, 0)
	m.OutputTokens += u.CompletionTokens
	m.CacheReadInputTokens += u.CachedTokens
	m.cost += u.Cost
	m.unknown = m.unknown || u.CostUnknown
}

// result builds the turn's result message; the stream writes it after the
// final assistant message, --output-format json alone.
func (c *claudeStream) result(res messages.TurnResult, session string) claudeResult {
	subtype, stop := "success", "end_turn"
	switch {
	case res.Status == messages.TurnDone:
	case res.Budget != nil && res.Budget.Limit == messages.LimitUSD:
		subtype, stop = "error_max_budget_usd", string(res.Status) // Claude's name for it
	default:
		subtype, stop = "error_during_execution", string(res.Status)
	}
	usage := map[string]*claudeModelUsage{}
	for _, name := range c.order {
		m := c.byModel[name]
		if !m.unknown {
			cost := m.cost
			m.CostUSD = &cost
		}
		usage[name] = m
	}
	denials := c.denials
	if denials == nil {
		denials = []claudeDenial{}
	}
	elapsed := res.Elapsed
	if elapsed == 0 {
		elapsed = time.Since(c.start)
	}
	return claudeResult{Type: "result", Subtype: subtype, IsError: res.Status != messages.TurnDone,
		DurationMS: elapsed.Milliseconds(), DurationAPIMS: elapsed.Milliseconds(), NumTurns: c.turns,
		Result: res.Answer, StopReason: &stop, SessionID: session, TotalCostUSD: totalCostUSD(res.Usage),
		Usage: newClaudeUsage(res.Usage), ModelUsage: usage, PermissionDenials: denials, UUID: uuid.NewString(), TurnResult: res}
}

// finish ends a turn: what the Orchestrator said last, the final answer
// when the gates wrote a different one, and the result line. The counters
// start again for the next turn (--input-format stream-json).
func (c *claudeStream) finish(res messages.TurnResult, session string) {
	o := messages.Origin{Agent: "orchestrator"}
	said := ""
	if b := c.said[""]; b != nil {
		said = strings.TrimSpace(b.String())
	}
	if answer := strings.TrimSpace(res.Answer); answer != "" && answer != said {
		c.assistant(o) // the interim text, before the gates
		c.assistant(o, claudeBlock{Type: "text", Text: answer})
	} else {
		c.assistant(o)
	}
	c.write(c.result(res, session))
	c.turns, c.denials = 0, nil
	c.byModel, c.order, c.start = map[string]*claudeModelUsage{}, nil, time.Now()
}
