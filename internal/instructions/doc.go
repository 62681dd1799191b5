// Package instructions loads a project's custom instructions: every
// ODIN.md, AGENTS.md (or AGENTS.override.md), CLAUDE.md, CLAUDE.local.md
// and GEMINI.md from the repository root down to the project root, plus
// the user's own (Odin's, ~/.claude/CLAUDE.md, ~/.codex/AGENTS.md,
// ~/.gemini/GEMINI.md), de-duplicated and read through the
// same path resolver as the ReadFile tool so that no file outside the
// project reaches a prompt.
package instructions
