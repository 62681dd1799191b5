package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/odin-code/odin/tools"
)

// DelegateInput is what the Orchestrator's model passes to a delegation
// tool.
type DelegateInput struct {
	Description string `json:"description" jsonschema:"a short (3-5 words) label of the task, shown to the user"`
	Brief       string `json:"brief" jsonschema:"the complete, self-contained task: goal, relevant files (absolute paths), constraints, and what done means. The specialist sees nothing else of the conversation."`
	Timeout     int    `json:"timeout_seconds,omitempty" jsonschema:"optional deadline in seconds; capped at the agent's maximum"`
	// Files, when given, are enforced: the specialist's writes anywhere
	// else are refused by its path guard.
	Files []string `json:"files,omitempty" jsonschema:"optional: the only files the specialist may create or change (absolute paths or globs under the project); writes to any other file are refused"`
}

// delegationTool is the model-facing definition of a specialist. The
// Orchestrator intercepts calls to it (a delegation spawns an actor); Run is
// never used for real and reports that.
func delegationTool(def *AgentDefinition) tools.Tool {
	desc := fmt.Sprintf("Delegate a task to the %s specialist. %s Default deadline %s, maximum %s.",
		def.Name, strings.TrimSpace(def.Description), def.Timeout, def.MaxTimeout)
	return tools.New[DelegateInput](def.ToolName(), tools.ClassSpawn, desc,
		func(context.Context, *tools.Env, DelegateInput) (tools.Result, error) {
			return tools.Errorf("delegation tools are handled by the Orchestrator"), nil
		})
}

// parseDelegation validates a delegation call's arguments with the tool's
// own schema, returning an error text for the model when they are bad.
func parseDelegation(def *AgentDefinition, args string) (DelegateInput, string) {
	var in DelegateInput
	t := def.DelegationTool()
	res, err := t.Run(context.Background(), nil, json.RawMessage(args))
	if err != nil {
		return in, err.Error()
	}
	// Run's handler always answers with an error Result; a validation
	// failure has a different message.
	if !strings.Contains(res.Output, "handled by the Orchestrator") {
		return in, res.Output
	}
	if err := json.Unmarshal([]byte(args), &in); err != nil {
		return in, err.Error()
	}
	if strings.TrimSpace(in.Brief) == "" {
		return in, "brief must not be empty: describe the task completely"
	}
	return in, ""
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
