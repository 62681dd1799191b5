package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Names of the Orchestrator's agent tools (seed 001's AgentTool and its
// get_output / kill).
const (
	AgentToolName       = "agent"
	AgentOutputToolName = "agent_output"
	AgentStopToolName   = "agent_stop"
)

// AgentInput is what the Orchestrator's model passes to the agent tool.
type AgentInput struct {
	Agent       string `json:"agent"`
	Description string `json:"description" jsonschema:"3-5 words for the user"`
	Prompt      string `json:"prompt" jsonschema:"Self-contained task: goal, absolute paths, constraints, what done means"`
	Background  bool   `json:"run_in_background,omitempty" jsonschema:"Return its run ID at once (see agent_output)"`
	Resume      string `json:"resume,omitempty" jsonschema:"Run ID to continue; prompt is its next instruction"`
	Model       string `json:"model,omitempty" jsonschema:"Instead of the agent's own"`
	MaxTurns    int    `json:"max_turns,omitempty" jsonschema:"Cap on model calls"`
	// Thoroughness and Context are enums set on the schema.
	Thoroughness string   `json:"thoroughness,omitempty" jsonschema:"Default medium"`
	Context      string   `json:"context,omitempty" jsonschema:"Besides the prompt: brief (default) nothing; scoped: files and a summary of this conversation; fork: this conversation"`
	Files        []string `json:"files,omitempty" jsonschema:"Absolute paths, for scoped"`
	Timeout      int      `json:"timeout_seconds,omitempty" jsonschema:"Capped at the agent's max"`
	// OnlyFiles, when given, are enforced: the specialist's writes
	// anywhere else are refused by its path guard.
	OnlyFiles []string `json:"only_files,omitempty" jsonschema:"The only files it may change (absolute paths or globs)"`
	// Budget may only lower the agent's own budget (budget.go).
	Budget *BudgetInput `json:"budget,omitempty" jsonschema:"Limits below its own; stopped when over"`
	// Isolation is an enum set on the schema.
	Isolation string `json:"isolation,omitempty" jsonschema:"worktree: its own git worktree, merged back as a patch (parallel writers). Default: the agent's own"`
}

// agentTool is the one delegation tool of the Orchestrator's model: its
// agent parameter is an enum of agents, each described on one line in the
// tool description. The Orchestrator intercepts its calls (a delegation
// spawns an actor); Run only validates. readOnly is the tool of an ask or
// plan turn: its agents write nothing, so it goes without the parameters
// that only govern writes (only_files, isolation), which a call there
// cannot pass.
func agentTool(agents []*AgentDefinition, models []string, readOnly bool) tool.Tool {
	var b strings.Builder
	b.WriteString("Delegate a task to a specialist agent; its structured report is the result.\nAgents (deadline, max):\n")
	names := make([]any, 0, len(agents))
	for _, a := range agents {
		names = append(names, a.Name)
		fmt.Fprintf(&b, "- %s: %s (%s, %s)\n", a.Name, firstLine(strings.TrimSpace(a.Description)), shortDuration(a.Timeout), shortDuration(a.MaxTimeout))
	}
	if len(models) == 0 {
		models = []string{"main", "small"}
	}
	modelEnum := make([]any, 0, len(models))
	for _, m := range models {
		modelEnum = append(modelEnum, m)
	}
	enum := func(s *jsonschema.Schema) {
		s.Properties["agent"].Enum = names
		s.Properties["thoroughness"].Enum = []any{string(messages.ThoroughQuick), string(messages.ThoroughMedium), string(messages.ThoroughVery)}
		s.Properties["context"].Enum = []any{string(messages.ContextBrief), string(messages.ContextScoped), string(messages.ContextFork)}
		s.Properties["model"].Enum = modelEnum
		s.Properties["isolation"].Enum = []any{"none", string(messages.IsolationWorktree)}
		if readOnly {
			for _, p := range writeOnlyParams {
				delete(s.Properties, p)
				s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(n string) bool { return n == p })
			}
		}
	}
	desc := strings.TrimSpace(b.String())
	// The description names every agent, so with the models it is the
	// tool's identity: sessions with the same roster and models share one
	// tool.
	key := desc + "\x00" + strings.Join(models, ",") + "\x00" + strconv.FormatBool(readOnly)
	sharedAgentTools.mu.Lock()
	defer sharedAgentTools.mu.Unlock()
	if t, ok := sharedAgentTools.m[key]; ok {
		return t
	}
	t := tool.New[AgentInput](AgentToolName, tool.ClassSpawn, desc,
		func(_ context.Context, _ *tool.Env, in AgentInput) (tool.Result, error) {
			return tool.Result{Output: handledByOrchestrator, Meta: in}, nil
		}, tool.WithSchema(enum))
	if len(sharedAgentTools.m) >= maxAgentTools {
		clear(sharedAgentTools.m)
	}
	sharedAgentTools.m[key] = t
	return t
}

// writeOnlyParams are the agent tool's parameters that only govern what a
// specialist writes, left out of a read-only turn's agent tool.
var writeOnlyParams = []string{"only_files", "isolation"}

// DelegationModels are the models the agent tool's model parameter
// offers: the roles main and small, then every configured model id that
// resolves to a provider with its key (models.main and models.small's
// ids, the model_info entries the configuration adds or changes, the
// models roster agents name), sorted.
func DelegationModels(cfg *config.Config, r *Roster) []string {
	out := []string{"main", "small"}
	if cfg == nil {
		return out
	}
	ids := map[string]bool{cfg.Models.Main: true, cfg.Models.Small: true}
	builtin := config.Default().ModelInfo
	for id, info := range cfg.ModelInfo {
		// Odin's own price list is not the user's choice of models: an
		// entry counts once configured (added or changed).
		if def, ok := builtin[id]; ok && reflect.DeepEqual(def, info) {
			continue
		}
		ids[id] = true
	}
	if r != nil {
		for _, a := range r.Agents() {
			ids[a.Model] = true
		}
	}
	var extra []string
	for id := range ids {
		if id == "" || id == "main" || id == "small" {
			continue
		}
		if _, err := cfg.ResolveModel(id); err == nil {
			extra = append(extra, id)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

// sharedAgentTools are the agent tools built so far, by description and
// models: a process serving many sessions (odin serve) derives each
// roster's schema once. Bounded: rosters change only with the projects' agent files.
var sharedAgentTools = struct {
	mu sync.Mutex
	m  map[string]tool.Tool
}{m: map[string]tool.Tool{}}

const maxAgentTools = 64

const handledByOrchestrator = "handled by the Orchestrator"

// shortDuration formats d for a tool description without Duration's zero
// units: 2m, 1m30s, 45s rather than 2m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// AgentOutputInput asks for a run's report.
type AgentOutputInput struct {
	ID      string `json:"id" jsonschema:"Run ID"`
	Timeout int    `json:"timeout_seconds,omitempty" jsonschema:"Seconds to wait for it (0: status now)"`
}

// AgentStopInput stops or detaches a run.
type AgentStopInput struct {
	ID     string `json:"id" jsonschema:"Run ID"`
	Detach bool   `json:"detach,omitempty" jsonschema:"Run on past this turn; its report lands in the session"`
}

// agentOutputTool, agentStopTool and requestReviewTool never change, and
// deriving a tool's schema costs more than the rest of starting a turn:
// every session of the process shares one of each (a Tool is immutable
// and safe for concurrent use).
var agentOutputTool = sync.OnceValue(func() tool.Tool {
	return tool.New[AgentOutputInput](AgentOutputToolName, tool.ClassRead,
		"A background run's report once it finishes; until then its status and last activities.",
		func(_ context.Context, _ *tool.Env, in AgentOutputInput) (tool.Result, error) {
			return tool.Result{Output: handledByOrchestrator, Meta: in}, nil
		})
})

var agentStopTool = sync.OnceValue(func() tool.Tool {
	return tool.New[AgentStopInput](AgentStopToolName, tool.ClassSpawn,
		"Stop a background run, or detach it to work on after this turn.",
		func(_ context.Context, _ *tool.Env, in AgentStopInput) (tool.Result, error) {
			return tool.Result{Output: handledByOrchestrator, Meta: in}, nil
		})
})

// parseCall validates a call's arguments with the tool's own schema and
// decodes them into in, returning an error text for the model when they
// are bad.
func parseCall[In any](t tool.Tool, args string, in *In) string {
	res, err := t.Run(context.Background(), nil, json.RawMessage(args))
	if err != nil {
		return err.Error()
	}
	// The handler answers handledByOrchestrator; a validation failure has
	// a different message.
	if res.Output != handledByOrchestrator {
		return res.Output
	}
	// The handler hands back the input the tool decoded after validating
	// it: decoding the arguments a third time cost every delegation of a
	// fan-out again, in the Orchestrator's mailbox.
	if v, ok := res.Meta.(In); ok {
		*in = v
		return ""
	}
	if err := json.Unmarshal([]byte(args), in); err != nil {
		return err.Error()
	}
	return ""
}

// parseDelegation validates an agent tool call against the agents of the
// turn.
func parseDelegation(t tool.Tool, agents map[string]*AgentDefinition, args string) (AgentInput, *AgentDefinition, string) {
	var in AgentInput
	if p := parseCall(t, args, &in); p != "" {
		return in, nil, p
	}
	def := agents[in.Agent]
	if def == nil {
		return in, nil, fmt.Sprintf("no agent %q is available in this mode", in.Agent)
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return in, nil, "prompt must not be empty: describe the task completely"
	}
	if in.MaxTurns < 0 || in.Timeout < 0 {
		return in, nil, "max_turns and timeout_seconds must not be negative"
	}
	if p := in.Budget.problem(); p != "" {
		return in, nil, p
	}
	if len(in.Files) > 0 && messages.ContextMode(in.Context) != messages.ContextScoped {
		return in, nil, "files are given to the specialist only with context scoped"
	}
	return in, def, ""
}

// timeoutFor caps a requested deadline at the agent's maximum.
func timeoutFor(def *AgentDefinition, seconds int) time.Duration {
	d := def.Timeout
	if seconds > 0 {
		d = time.Duration(seconds) * time.Second
	}
	if d > def.MaxTimeout {
		d = def.MaxTimeout
	}
	return d
}

// turnBudget is a task's model-call budget: the roster's, halved for a
// quick look and doubled for a very thorough one, and capped by what the
// Orchestrator asked for.
func turnBudget(def *AgentDefinition, th messages.Thoroughness, asked int) int {
	n := def.MaxTurns
	switch th {
	case messages.ThoroughQuick:
		n = max(n/2, 3)
	case messages.ThoroughVery:
		n *= 2
	}
	if asked > 0 && asked < n {
		n = asked
	}
	return n
}

// thoroughnessNote is the instruction a thoroughness level adds to a
// specialist's task.
func thoroughnessNote(th messages.Thoroughness) string {
	switch th {
	case messages.ThoroughQuick:
		return "Thoroughness: quick. Do a basic, single-pass search and report the first good answer; do not explore alternatives."
	case messages.ThoroughVery:
		return "Thoroughness: very thorough. Search comprehensively across multiple locations and naming conventions, follow references, and verify before reporting."
	case messages.ThoroughMedium:
		return "Thoroughness: medium. Explore moderately, with some follow-up where the first results are unclear."
	}
	return ""
}
