// Package prompts holds Odin's system prompts as embedded text/template
// files, one per agent and mode, and renders them from explicit data (no
// clock or environment is read here, so output is deterministic and pinned
// by golden tests). It imports no other Odin package.
package prompts
