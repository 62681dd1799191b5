package messages

// GateDecision is the quality-gate verdict for a change set, decided in code
// from facts.
type GateDecision struct {
	ReviewRequired bool `json:"review_required"`
	QARequired     bool `json:"qa_required"`
	// Reasons say why, one per triggering fact ("3 files changed",
	// "auth/login.go matches risk path **/auth/**").
	Reasons []string `json:"reasons"`
	Files   []string `json:"files"`
}

// GateStageResult is one stage run of the gate pipeline.
type GateStageResult struct {
	Stage   string `json:"stage"` // review, test, qa, fix
	Round   int    `json:"round"`
	Passed  bool   `json:"passed"`
	Summary string `json:"summary"`
	TaskID  string `json:"task_id,omitempty"`
}

// ShownRound is the stage's round as users (and the synthesis model) see
// it, counted from 1 for every stage: review, test and QA carry the number
// of fix rounds before them (0 for the first pass), a fix its own number.
func (s GateStageResult) ShownRound() int {
	if s.Stage == "fix" {
		return s.Round
	}
	return s.Round + 1
}

// GateReport is everything the gates did for one turn.
type GateReport struct {
	Decision  GateDecision      `json:"decision"`
	Stages    []GateStageResult `json:"stages"`
	FixRounds int               `json:"fix_rounds"`
	Passed    bool              `json:"passed"`
	Review    *ReviewResult     `json:"review,omitempty"`
	Test      *TestResult       `json:"test,omitempty"`
	QA        *QAResult         `json:"qa,omitempty"`
}
