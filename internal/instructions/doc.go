// Package instructions loads a project's custom instructions: ODIN.md files
// from the git root down to the project root, plus the user's own ODIN.md.
// Where a directory has no ODIN.md, its AGENTS.md or CLAUDE.md is read
// instead, so projects set up for other agents work at once.
package instructions
