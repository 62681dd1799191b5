// Package hooks runs the user's hook commands on session events
// (PreToolUse, PostToolUse, UserPromptSubmit, SubagentStart, SubagentStop,
// Stop, PreCompact): each hook gets the event as JSON on its standard
// input, runs through the sandbox launcher with a timeout, and decides by
// its exit code (2 blocks). Hooks implements tool.HookRunner, so tools are
// wrapped with tools.WithHooks. A Hooks is immutable after New and safe
// for concurrent use.
package hooks
