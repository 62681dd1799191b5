// Package compat reads the settings files of other coding agents — Claude
// Code (.claude/settings*.json), Codex (~/.codex/config.toml) and opencode
// (opencode.json) — and turns them into trees in odin.yaml's shape, so that
// a user's existing files take effect through Odin's own configuration,
// policy and trust rules rather than through a second, parallel one.
//
// Everything a file holds is either mapped into a Layer or named in a Note:
// nothing is dropped silently. The package reads files only; it runs
// nothing and imports no other Odin package but the leaf internal/dotkey,
// so config, the CLI and `odin import` can all use it. Its functions are safe for concurrent use.
package compat
