package main

import (
	"context"

	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/term"
	"github.com/odin-code/odin/messages"
)

// mcpCatalog adapts the session's MCP manager to the REPL: resources for
// @server:uri, prompts for /mcp__server__prompt.
type mcpCatalog struct{ m *mcp.Manager }

func (c mcpCatalog) IsServer(name string) bool {
	for _, st := range c.m.Status() {
		if st.Name == name {
			return st.State != mcp.StateDisabled
		}
	}
	return false
}

func (c mcpCatalog) Resources() []term.MCPResource {
	rs := c.m.Resources()
	out := make([]term.MCPResource, len(rs))
	for i, r := range rs {
		out[i] = term.MCPResource{Server: r.Server, URI: r.URI, Name: r.Name}
	}
	return out
}

func (c mcpCatalog) Prompts() []term.MCPPrompt {
	ps := c.m.Prompts()
	out := make([]term.MCPPrompt, len(ps))
	for i, p := range ps {
		hint := ""
		for j, a := range p.Args {
			if j > 0 {
				hint += " "
			}
			if a.Required {
				hint += a.Name
			} else {
				hint += "[" + a.Name + "]"
			}
		}
		out[i] = term.MCPPrompt{Command: p.CommandName(), Server: p.Server, Name: p.Name, Description: p.Description, ArgHint: hint}
	}
	return out
}

func (c mcpCatalog) ReadResource(ctx context.Context, server, uri string) (string, []messages.Image, error) {
	return c.m.ReadResource(ctx, server, uri)
}

func (c mcpCatalog) GetPrompt(ctx context.Context, server, name string, args []string) (string, error) {
	return c.m.GetPrompt(ctx, server, name, args)
}

func (c mcpCatalog) WaitPrompts(ctx context.Context, server string) error {
	return c.m.WaitCatalog(ctx, server)
}
