package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/messages"
)

// Resource is a resource a server offers, for @server:uri attachments.
type Resource struct {
	Server, URI, Name, Description, MIME string
}

// Prompt is a prompt a server offers, for /mcp__server__prompt commands.
type Prompt struct {
	Server, Name, Description string
	// Args are the prompt's arguments in the server's order.
	Args []PromptArg
}

// PromptArg is one argument of a prompt.
type PromptArg struct {
	Name, Description string
	Required          bool
}

// CommandName is the slash command of a prompt, as in Claude Code:
// mcp__SERVER__PROMPT.
func (p Prompt) CommandName() string { return ToolName(p.Server, p.Name) }

// maxCatalog bounds the resources and prompts remembered per server.
const maxCatalog = 1000

// Resources lists the resources of every ready server, as listed when it
// connected or last said its list changed. It never blocks on a server:
// a lazy server that has not started has none yet.
func (m *Manager) Resources() []Resource {
	var out []Resource
	for _, s := range m.servers {
		s.mu.Lock()
		out = append(out, s.resources...)
		s.mu.Unlock()
	}
	return out
}

// Prompts lists the prompts of every ready server, like Resources.
func (m *Manager) Prompts() []Prompt {
	var out []Prompt
	for _, s := range m.servers {
		s.mu.Lock()
		out = append(out, s.prompts...)
		s.mu.Unlock()
	}
	return out
}

func (m *Manager) server(name string) (*server, error) {
	for _, s := range m.servers {
		if s.name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no MCP server %q", name)
}

// ReadResource reads uri from server (starting it if need be): text
// contents as text, image blobs as images (checked like tool images),
// other blobs as a line describing them.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (string, []messages.Image, error) {
	s, err := m.server(server)
	if err != nil {
		return "", nil, err
	}
	cs, err := s.session(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("MCP server %s: %w", server, err)
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", nil, fmt.Errorf("MCP server %s: read %s: %w", server, uri, err)
	}
	var content []sdk.Content
	for _, c := range res.Contents {
		content = append(content, &sdk.EmbeddedResource{Resource: c})
	}
	r := convert(server+":"+uri, &sdk.CallToolResult{Content: content}, m.opts.OutputCap)
	return r.Output, r.Images, nil
}

// GetPrompt renders server's prompt name with args (matched to the
// prompt's arguments in order; the last one takes the rest of the words)
// into the text of one user message: each of the prompt's messages, the
// assistant's marked as such.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args []string) (string, error) {
	s, err := m.server(server)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.prompts, func(p Prompt) bool { return p.Name == name })
	var p Prompt
	if i >= 0 {
		p = s.prompts[i]
	}
	s.mu.Unlock()
	if i < 0 {
		return "", fmt.Errorf("MCP server %s has no prompt %q", server, name)
	}
	named := map[string]string{}
	for j, a := range p.Args {
		switch {
		case j < len(args) && j == len(p.Args)-1:
			named[a.Name] = strings.Join(args[j:], " ")
		case j < len(args):
			named[a.Name] = args[j]
		case a.Required:
			return "", fmt.Errorf("/%s needs the argument %s%s (arguments: %s)", p.CommandName(), a.Name, describe(a.Description), argNames(p.Args))
		}
	}
	cs, err := s.session(ctx)
	if err != nil {
		return "", fmt.Errorf("MCP server %s: %w", server, err)
	}
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: named})
	if err != nil {
		return "", fmt.Errorf("MCP server %s: prompt %s: %w", server, name, err)
	}
	var b strings.Builder
	for _, msg := range res.Messages {
		r := convert(name, &sdk.CallToolResult{Content: []sdk.Content{msg.Content}}, m.opts.OutputCap)
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if msg.Role == "assistant" {
			b.WriteString("(assistant) ")
		}
		b.WriteString(r.Output)
	}
	if b.Len() == 0 {
		return "", errors.New("the prompt is empty")
	}
	return b.String(), nil
}

func describe(d string) string {
	if d == "" {
		return ""
	}
	return " (" + d + ")"
}

func argNames(args []PromptArg) string {
	var names []string
	for _, a := range args {
		n := a.Name
		if !a.Required {
			n = "[" + n + "]"
		}
		names = append(names, n)
	}
	return strings.Join(names, " ")
}

// listCatalog lists cs's resources and prompts, when it offers them, and
// keeps them if cs is still the server's session. Failures leave the old
// lists: completion is a convenience, never a reason to fail.
func (s *server) listCatalog(ctx context.Context, cs *sdk.ClientSession) {
	caps := cs.InitializeResult()
	var resources []Resource
	var prompts []Prompt
	if caps != nil && caps.Capabilities != nil && caps.Capabilities.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil || len(resources) >= maxCatalog {
				break
			}
			resources = append(resources, Resource{Server: s.name, URI: r.URI, Name: r.Name, Description: r.Description, MIME: r.MIMEType})
		}
	}
	if caps != nil && caps.Capabilities != nil && caps.Capabilities.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil || len(prompts) >= maxCatalog {
				break
			}
			pr := Prompt{Server: s.name, Name: p.Name, Description: p.Description}
			for _, a := range p.Arguments {
				if a != nil {
					pr.Args = append(pr.Args, PromptArg{Name: a.Name, Description: a.Description, Required: a.Required})
				}
			}
			prompts = append(prompts, pr)
		}
	}
	sort.Slice(resources, func(i, j int) bool { return resources[i].URI < resources[j].URI })
	sort.Slice(prompts, func(i, j int) bool { return prompts[i].Name < prompts[j].Name })
	s.mu.Lock()
	if s.cs == cs {
		s.resources, s.prompts, s.listed = resources, prompts, true
		s.notify()
	}
	s.mu.Unlock()
}

// WaitCatalog starts server if need be and waits until its resources and
// prompts are listed (they are listed just after it is ready), or until
// ctx ends: what a /mcp__server__prompt typed at once needs.
func (m *Manager) WaitCatalog(ctx context.Context, server string) error {
	s, err := m.server(server)
	if err != nil {
		return err
	}
	if _, err := s.session(ctx); err != nil {
		return fmt.Errorf("MCP server %s: %w", server, err)
	}
	for {
		s.mu.Lock()
		done, ch := s.listed || s.state != StateReady, s.changed
		s.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
