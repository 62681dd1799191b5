package messages

// ResearchRequest: a specialist asks the Research agent a question through
// the Orchestrator (seed 004's ResearchRequest). The Orchestrator answers
// the sender with one *ResearchAnswer.
type ResearchRequest struct {
	// TaskID and Agent name the asking specialist's task.
	TaskID string `json:"task_id"`
	Agent  string `json:"agent"`
	// Question is what to find out, self-contained.
	Question string `json:"question"`
}

// ResearchAnswer answers a ResearchRequest.
type ResearchAnswer struct {
	// Answer is the research report as the asking model reads it.
	Answer string `json:"answer"`
	// Cached is set when the answer came from the research cache.
	Cached bool `json:"cached,omitempty"`
	// Error says why there is no answer.
	Error string `json:"error,omitempty"`
}
