// Package agents reads agent definitions from Markdown files: YAML front
// matter (name, description, tools, model, role, ...) over the prompt, in
// Odin's format and in those of Claude Code, opencode and Gemini CLI,
// whose tool and model names are mapped to Odin's. Files scans the
// project's folders (a file leading out of its folder is skipped with a
// warning; one that does not parse is an error), UserFiles the user's
// (where nothing is fatal). Package actors builds the roster from them.
package agents
