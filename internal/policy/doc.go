// Package policy decides what Odin's tools may touch and run: it resolves and
// confines paths (Guard) and walks shell commands' syntax trees (Commands)
// down to every simple command, which it judges with the packages below it:
//
//   - shell: static evaluation of words and the places bash evaluates
//     arithmetic;
//   - rules: read-only, destructive and test-runner forms as tables with
//     examples;
//   - approve: verdicts, denials and approvers (Memory, BusApprover);
//   - trust: the trust store and the pins of trusted programs.
//
// The hook runner is internal/hooks. The old names of approve's, trust's
// and hooks' types stay available here (facade.go) for existing callers.
//
// Every decision is made from facts, never from string prefixes: paths are
// made absolute and symlink-resolved the way the kernel does it before a
// component-wise containment test, and commands are parsed with
// mvdan.cc/sh/v3/syntax so that every simple command hidden behind chaining
// operators, substitutions, wrappers and nested shells is checked on its own.
//
// A decision has three outcomes (Action): Allow, Ask and Deny. Ask means a
// human must approve; headless runs answer every question with the Headless
// approver, which never waits. A refusal is returned as a *Denial, whose
// message is written for the model: it names the rule that refused and what
// the user could do to allow it.
//
// Policy ties the pieces together for one session and implements
// tool.Permission (internal/hooks.Hooks implements tool.HookRunner). Guards, Commands and
// Policy are immutable after construction and safe for concurrent use; the
// session state they share (approvals remembered for the session) lives in a
// Memory, which is safe for concurrent use too.
package policy
