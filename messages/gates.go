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
	// Run counts this stage's runs in the turn, this one included: QA's
	// first run is run 1 even when a fix round came before it. 0 in
	// records from before it was kept.
	Run int `json:"run,omitempty"`
	// MaxRounds is the most rounds the stage can have in the turn:
	// quality.max_fix_rounds for a fix, one more for review, test and QA,
	// which run once before any fix and once after each fix sent back to
	// them. Users see "review round 2 of 3". 0 in records from before it
	// was kept, which show "review round 2".
	MaxRounds int `json:"max_rounds,omitempty"`
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

// Mark is the word for a finished stage: "applied" for a fix, else
// "passed" or "failed"; the same in every front end and in what the
// synthesis model reads.
func (s GateStageResult) Mark() string {
	switch {
	case s.Stage == "fix":
		return "applied"
	case s.Passed:
		return "passed"
	}
	return "failed"
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

// AcceptanceCriterion is one condition a todo item must meet when done,
// set by the Orchestrator's plan. With a Command, QA checks it by the
// command's exit code; without, by the reviewer's judgement.
type AcceptanceCriterion struct {
	Criterion string `json:"criterion" jsonschema:"what must hold when the item is done"`
	Command   string `json:"command,omitempty" jsonschema:"shell command that proves it (exit 0 = met)"`
}

// CriterionVerdict is the reviewer's judgement of one acceptance
// criterion.
type CriterionVerdict struct {
	Criterion string `json:"criterion"`
	Met       bool   `json:"met"`
	Evidence  string `json:"evidence,omitempty" jsonschema:"why: file and line, or what is missing"`
}

// CriterionResult is how QA found one acceptance criterion.
type CriterionResult struct {
	// Todo is the todo item the criterion belongs to.
	Todo      string `json:"todo"`
	Criterion string `json:"criterion"`
	Command   string `json:"command,omitempty"`
	Met       bool   `json:"met"`
	// By is "command" (its exit code decided) or "review" (the reviewer's
	// judgement); "none" when nobody could judge it (counted unmet).
	By       string `json:"by"`
	Evidence string `json:"evidence,omitempty"`
}

// PackageCoverage is a package's test coverage before and after a change,
// in percent of statements; nil when it could not be measured.
type PackageCoverage struct {
	Package string   `json:"package"`
	Before  *float64 `json:"before,omitempty"`
	After   *float64 `json:"after,omitempty"`
}

// CoverageReport is QA's coverage measurement of the changed packages.
type CoverageReport struct {
	Command  string            `json:"command"`
	Packages []PackageCoverage `json:"packages"`
	// Note says why a measurement is missing (no baseline, the command
	// failed...).
	Note string `json:"note,omitempty"`
}
