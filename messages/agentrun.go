package messages

import "time"

// AgentRunStatus is where an agent run stands: running, or how it ended
// (a ReportStatus, or stopped by the Orchestrator).
type AgentRunStatus string

// Agent run statuses beyond the ReportStatus values.
const (
	RunRunning AgentRunStatus = "running"
	RunStopped AgentRunStatus = "stopped"
	// RunAbandoned: the session closed (odin run ended, the REPL quit)
	// while the run, typically a detached one, still worked.
	RunAbandoned AgentRunStatus = "abandoned"
)

// AgentRun is one specialist run in a session's registry (the seed's
// AgentMonitor): every delegation, gate task and resumed run, across
// turns. ID is also the run's child session (its transcript).
type AgentRun struct {
	ID string `json:"id"`
	// Handle is the run's short name in its session (search-2), which the
	// Orchestrator's model quotes to agent_output, agent_stop and resume.
	Handle      string         `json:"handle,omitempty"`
	Agent       string         `json:"agent"`
	Description string         `json:"description"`
	Status      AgentRunStatus `json:"status"`
	// Background runs were started with run_in_background; Detached ones
	// were left running when their turn ended.
	Background bool      `json:"background,omitempty"`
	Detached   bool      `json:"detached,omitempty"`
	Started    time.Time `json:"started"`
	// Ended is zero while the run is running.
	Ended      time.Time `json:"ended,omitzero"`
	Tokens     int64     `json:"tokens"`
	ToolCalls  int       `json:"tool_calls"`
	Activities []string  `json:"activities,omitempty"`
	// Summary is the report's summary (or its problem) once finished.
	Summary string `json:"summary,omitempty"`
	// Resumes counts how often the run was resumed.
	Resumes int `json:"resumes,omitempty"`
	// Pending is the report of a detached run that finished after its
	// turn, kept until the session's next input carries it to the model.
	Pending string `json:"pending,omitempty"`
	// USD and Wall are what the run cost and how long it worked, over
	// all its resumptions: a resumed run starts its budget from them.
	USD  float64       `json:"usd,omitempty"`
	Wall time.Duration `json:"wall_ns,omitempty"`
}

// Finished reports whether the run has ended.
func (r AgentRun) Finished() bool { return r.Status != RunRunning }

// Elapsed is how long the run took, or has taken so far at now.
func (r AgentRun) Elapsed(now time.Time) time.Duration {
	if !r.Ended.IsZero() {
		return r.Ended.Sub(r.Started)
	}
	return now.Sub(r.Started)
}

// AgentRunsRequest asks a session's Orchestrator for its agent runs; it
// answers with *AgentRunsResponse.
type AgentRunsRequest struct{}

// AgentRunsResponse lists the session's agent runs, oldest first.
type AgentRunsResponse struct {
	Runs []AgentRun `json:"runs"`
}
