package messages

// LintRun is one formatter or linter command the Code specialist ran on
// the files it changed before reporting.
type LintRun struct {
	// Kind is "format" or "lint".
	Kind     string `json:"kind"`
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	// Output is the tail of what the command printed (its findings).
	Output string `json:"output,omitempty"`
	// Fixed are the files the command rewrote (a formatter's fixes),
	// relative to the root.
	Fixed []string `json:"fixed,omitempty"`
	// Missing is set when the tool is not installed (exit 127): it ran
	// nothing and is not a finding.
	Missing bool `json:"missing,omitempty"`
}

// LintReport is what Odin ran on a Code specialist's changed files before
// its Report, and how it ended. Odin fills it in; the model does not.
type LintReport struct {
	// Runs are the commands, in order, over every lint pass (at most two:
	// before the model's extra turn and after it).
	Runs []LintRun `json:"runs"`
	// Clean is true when every command of the last pass exited 0 (or is
	// not installed).
	Clean bool `json:"clean"`
	// Passes is how many times the commands ran (2 when the model had one
	// more turn to fix the remaining findings).
	Passes int `json:"passes"`
	// Note says why nothing ran ("no formatter or linter is configured or
	// detectable for these files").
	Note string `json:"note,omitempty"`
}
