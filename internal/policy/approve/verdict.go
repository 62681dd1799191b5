package approve

import (
	"fmt"
	"strings"
)

// Action is what a check decided.
type Action int

// Actions, ordered: a verdict is the strongest action among its findings.
const (
	// Allow: run without asking.
	Allow Action = iota
	// Ask: a human must approve (headless runs refuse).
	Ask
	// Deny: never run; no approval can override it.
	Deny
)

func (a Action) String() string {
	switch a {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Finding is one reason a check asks or denies.
type Finding struct {
	Action Action
	// Rule is one of the Rule constants.
	Rule string
	// Subject is what the finding is about: a simple command as written or
	// an absolute path.
	Subject string
	// Key identifies the subject in a session's approval memory; approving
	// "for this session" remembers it. Empty for denials.
	Key string
	// Reason is a sentence for the user and the model.
	Reason string
}

// Verdict is the outcome of a check: the strongest action among its findings
// (Allow when there are none).
type Verdict struct {
	Action   Action
	Findings []Finding
}

// Reasons returns the findings' reasons in order, without duplicates.
func (v Verdict) Reasons() []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range v.Findings {
		if !seen[f.Reason] {
			seen[f.Reason] = true
			out = append(out, f.Reason)
		}
	}
	return out
}

// add records f and raises the verdict's action to f's.
func (v *Verdict) Add(f Finding) {
	for _, g := range v.Findings {
		if g.Action == f.Action && g.Reason == f.Reason && g.Key == f.Key {
			return
		}
	}
	v.Findings = append(v.Findings, f)
	if f.Action > v.Action {
		v.Action = f.Action
	}
}

// asks returns the findings that need approval.
func (v Verdict) Asks() []Finding {
	var out []Finding
	for _, f := range v.Findings {
		if f.Action == Ask {
			out = append(out, f)
		}
	}
	return out
}

// denials returns the findings that refuse.
func (v Verdict) Denials() []Finding {
	var out []Finding
	for _, f := range v.Findings {
		if f.Action == Deny {
			out = append(out, f)
		}
	}
	return out
}

// String renders the verdict for logs and test failures.
func (v Verdict) String() string {
	if len(v.Findings) == 0 {
		return v.Action.String()
	}
	return v.Action.String() + ": " + strings.Join(v.Reasons(), "; ")
}
