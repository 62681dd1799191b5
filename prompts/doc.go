// Package prompts holds Odin's system prompts as embedded files in
// text/template syntax, one per agent and mode, and renders them from
// explicit data (no clock or environment is read here, so output is
// deterministic and pinned by golden tests). They are parsed by
// text/template/parse and executed by a small executor of the actions they
// use (render.go says why not by text/template). It imports no other Odin
// package.
package prompts
