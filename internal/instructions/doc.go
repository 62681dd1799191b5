// Package instructions loads a project's custom instructions: every
// ODIN.md, AGENTS.md and CLAUDE.md from the repository root down to the
// project root, plus the user's own, de-duplicated and read through the
// same path resolver as the ReadFile tool so that no file outside the
// project reaches a prompt.
package instructions
