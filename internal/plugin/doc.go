// Package plugin reads plugins in Claude Code's format — a folder with
// .claude-plugin/plugin.json, agents/, commands/, hooks/hooks.json and
// .mcp.json — and turns them into what Odin already has: agent files for
// the roster, command files for the REPL, hooks and MCP servers for the
// configuration. What Odin cannot use (skills, output styles, LSP servers,
// hook events and hook types it lacks) is listed on the plugin, never
// fatal. It also installs plugins into the user's data dir (copied from a
// folder or cloned with git, running nothing from the plugin) and keeps
// which ones are disabled. Loading reads files only; nothing here runs a
// plugin's code.
package plugin
