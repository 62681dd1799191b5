package messages

// The structured results specialists return through their Report tool
// (seed 004). Field tags give the JSON names and the descriptions the
// models see; fields marked omitempty are optional.

// SearchResult is the Search agent's report.
type SearchResult struct {
	Query              string    `json:"query" jsonschema:"the question that was searched"`
	Findings           []Finding `json:"findings" jsonschema:"most relevant first"`
	Summary            string    `json:"summary" jsonschema:"what was found, in a few sentences"`
	Confidence         float64   `json:"confidence" jsonschema:"0 to 1"`
	SuggestedNextSteps []string  `json:"suggested_next_steps,omitempty"`
}

// Finding is one place the Search agent found.
type Finding struct {
	File      string  `json:"file"`
	Line      int     `json:"line,omitempty"`
	Snippet   string  `json:"snippet,omitempty"`
	Relevance float64 `json:"relevance" jsonschema:"0 to 1"`
	Context   string  `json:"context,omitempty"`
}

// ResearchResult is the Research agent's report.
type ResearchResult struct {
	Query            string    `json:"query"`
	Type             string    `json:"type" jsonschema:"documentation, solution, security, example or general"`
	Sources          []Source  `json:"sources"`
	Summary          string    `json:"summary"`
	RelevantSnippets []Snippet `json:"relevant_snippets,omitempty"`
	Confidence       float64   `json:"confidence" jsonschema:"0 to 1"`
	CachedAt         string    `json:"cached_at,omitempty"`
}

// Source is a web source the Research agent used.
type Source struct {
	URL         string `json:"url"`
	Title       string `json:"title"`
	Type        string `json:"type" jsonschema:"official_docs, github, stackoverflow, security, blog, tutorial, forum or other (Odin sets it from the URL)"`
	Reliability int    `json:"reliability" jsonschema:"1 to 10 by source priority (Odin sets it from the URL)"`
	Date        string `json:"date,omitempty"`
}

// Snippet is an excerpt the Research agent quotes.
type Snippet struct {
	Content  string `json:"content"`
	Language string `json:"language,omitempty"`
	Source   string `json:"source"`
	Context  string `json:"context,omitempty"`
}

// CodeResult is the Code agent's report. Odin fills FilesModified and
// FilesCreated (with diffs) from what the agent's tools actually did; the
// model supplies the rest.
type CodeResult struct {
	Task          string       `json:"task" jsonschema:"the task as understood"`
	Summary       string       `json:"summary" jsonschema:"what was changed and why"`
	LintPassed    bool         `json:"lint_passed,omitempty"`
	Warnings      []string     `json:"warnings,omitempty"`
	FilesModified []FileChange `json:"files_modified,omitempty" jsonschema:"filled in by Odin; leave empty"`
	FilesCreated  []FileChange `json:"files_created,omitempty" jsonschema:"filled in by Odin; leave empty"`
	// Lint is what Odin's formatter and linter pass ran on the changed
	// files before the report (quality.code_lint).
	Lint *LintReport `json:"lint,omitempty" jsonschema:"filled in by Odin; leave empty"`
}

// FileChange is one file a change set touched.
type FileChange struct {
	Path         string `json:"path"`
	Diff         string `json:"diff,omitempty"`
	LinesChanged int    `json:"lines_changed,omitempty"`
}

// ReviewResult is the Review agent's report.
type ReviewResult struct {
	FilesReviewed []string      `json:"files_reviewed"`
	Issues        []ReviewIssue `json:"issues" jsonschema:"empty when none"`
	Suggestions   []Suggestion  `json:"suggestions,omitempty"`
	OverallScore  int           `json:"overall_score" jsonschema:"1 to 10"`
	Summary       string        `json:"summary"`
	Approved      bool          `json:"approved"`
	// Criteria judge the acceptance criteria the brief lists, if any.
	Criteria []CriterionVerdict `json:"criteria,omitempty" jsonschema:"one per acceptance criterion your brief lists, in its words"`
}

// Review issue severities (seed 004); critical and major send a change
// back to Code. The Report tool's schema makes severity an enum of these;
// a value outside it (from a model that bypassed the schema) is treated as
// blocking, so an unforeseen word such as "high" can never pass a change.
const (
	SeverityCritical = "critical"
	SeverityMajor    = "major"
	SeverityMinor    = "minor"
	SeverityInfo     = "info"
)

// Severities returns the review severities, most severe first.
func Severities() []string {
	return []string{SeverityCritical, SeverityMajor, SeverityMinor, SeverityInfo}
}

// ReviewIssue is one problem Review found.
type ReviewIssue struct {
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
	Category string `json:"category" jsonschema:"correctness, security, performance, maintenance or tests"`
}

// Suggestion is an improvement Review proposes.
type Suggestion struct {
	File      string `json:"file"`
	Line      int    `json:"line,omitempty"`
	Current   string `json:"current"`
	Suggested string `json:"suggested"`
	Reason    string `json:"reason"`
}

// TestResult is the Test agent's report.
type TestResult struct {
	Command      string        `json:"command" jsonschema:"the test command that was run"`
	Passed       int           `json:"passed"`
	Failed       int           `json:"failed"`
	Skipped      int           `json:"skipped,omitempty"`
	Failures     []TestFailure `json:"failures,omitempty"`
	FilesCreated []string      `json:"files_created,omitempty"`
	Coverage     float64       `json:"coverage,omitempty" jsonschema:"percent, when measured"`
	Summary      string        `json:"summary"`
}

// TestFailure is one failing test with its diagnosis.
type TestFailure struct {
	Test      string `json:"test"`
	File      string `json:"file,omitempty"`
	Message   string `json:"message"`
	Diagnosis string `json:"diagnosis,omitempty"`
}

// DocsResult is the Docs agent's report.
type DocsResult struct {
	FilesUpdated []string `json:"files_updated"`
	Summary      string   `json:"summary"`
	Warnings     []string `json:"warnings,omitempty"`
}

// QAResult is the QA agent's report. Checks and Passed are established by
// Odin from the commands' exit codes; the model contributes the analysis.
type QAResult struct {
	Checks   []QACheck `json:"checks"`
	Passed   bool      `json:"passed"`
	Blockers []string  `json:"blockers"`
	Warnings []string  `json:"warnings"`
	Summary  string    `json:"summary"`
	// Criteria are the plan's acceptance criteria, met or not.
	Criteria []CriterionResult `json:"criteria,omitempty" jsonschema:"filled in by Odin; leave empty"`
	// Coverage is the changed packages' coverage before and after.
	Coverage *CoverageReport `json:"coverage,omitempty" jsonschema:"filled in by Odin; leave empty"`
}

// QACheck is one QA command and its outcome.
type QACheck struct {
	Name     string `json:"name"`
	Command  string `json:"command,omitempty"`
	Passed   bool   `json:"passed"`
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output,omitempty" jsonschema:"tail of the output"`
	Required bool   `json:"required"`
}

// InitResult is the Init agent's report: the ODIN.md sections it generated.
type InitResult struct {
	Sections []InitSection `json:"sections"`
	Warnings []string      `json:"warnings,omitempty"`
	// The fields below are filled in by Odin when it writes the file.
	Mode            string      `json:"mode,omitempty" jsonschema:"filled in by Odin; leave empty"`
	Path            string      `json:"path,omitempty" jsonschema:"filled in by Odin; leave empty"`
	TokenCount      int         `json:"token_count,omitempty" jsonschema:"filled in by Odin; leave empty"`
	TokenBudget     TokenBudget `json:"token_budget,omitzero" jsonschema:"filled in by Odin; leave empty"`
	ChangesFromPrev []string    `json:"changes_from_previous,omitempty" jsonschema:"filled in by Odin; leave empty"`
}

// InitSection is one generated ODIN.md section.
type InitSection struct {
	Name       string  `json:"name" jsonschema:"section title, e.g. Objective, Stack, Commands"`
	Content    string  `json:"content" jsonschema:"Markdown body of the section, without its heading"`
	Source     string  `json:"source" jsonschema:"inferred, extracted, manual or asked"`
	Confidence float64 `json:"confidence" jsonschema:"0 to 1"`
	TokenCount int     `json:"token_count,omitempty" jsonschema:"filled in by Odin; leave empty"`
}

// TokenBudget is the Init agent's size target.
type TokenBudget struct {
	Target  int `json:"target"`
	HardCap int `json:"hard_cap"`
}

// GenericResult is the report of a custom agent.
type GenericResult struct {
	Summary string   `json:"summary" jsonschema:"the answer or outcome"`
	Details string   `json:"details,omitempty"`
	Files   []string `json:"files,omitempty"`
}
