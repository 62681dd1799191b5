// Package elicit turns an MCP server's request for input (a form-mode
// elicitation's requested schema) into a form a front end can ask field by
// field: each field's type, choices, bounds and default, the parsing of
// what a person types, and the validation of a whole answer (defaults
// applied) before it goes back to the server. It imports no other Odin
// package, so the terminal UI, odin serve and the MCP client share it.
package elicit
