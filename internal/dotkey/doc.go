// Package dotkey walks the dotted keys ("agents.code.tools[2]") by which
// config problems, roster errors and notes on other agents' settings name
// a place in a file. It imports nothing but the standard library, so that
// the CLI, config/agents and internal/compat can all share it.
package dotkey
