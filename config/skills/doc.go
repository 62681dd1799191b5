// Package skills finds the skills on disk: Claude Code's SKILL.md
// folders (.odin/skills, then the user's), each a name and a description
// of when to use it in YAML front matter over the instructions. Load
// lists them for the roster; Read returns one's instructions when an
// agent calls the Skill tool (package actors offers it). A broken or
// escaping SKILL.md is a warning, never fatal.
package skills
