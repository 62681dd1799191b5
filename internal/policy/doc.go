// Package policy decides what Odin's tools may touch and run: it resolves and
// confines paths (Guard), classifies shell commands from their syntax tree
// (Commands), asks for and remembers approvals (Approver, Memory), records
// which projects the user trusts (TrustStore) and fingerprints the project
// files their MCP servers and hooks execute (PinProgram), runs the user's hook commands
// on session events (Hooks), and builds the git invocations Odin itself makes
// (GitArgs, GitEnv).
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
// tools.Permission; Hooks implements tools.HookRunner. Guards, Commands and
// Policy are immutable after construction and safe for concurrent use; the
// session state they share (approvals remembered for the session) lives in a
// Memory, which is safe for concurrent use too.
package policy
