package term

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// MCPCatalog is what the REPL uses of the session's MCP servers: their
// resources, attached with @server:uri, and their prompts, run as
// /mcp__server__prompt commands. cmd/odin adapts internal/mcp's Manager.
// Resources and Prompts never block; the others may start a server.
type MCPCatalog interface {
	// IsServer reports whether name is a configured MCP server.
	IsServer(name string) bool
	// Resources lists the resources of the servers that are running.
	Resources() []MCPResource
	// Prompts lists the prompts of the servers that are running.
	Prompts() []MCPPrompt
	// ReadResource reads one resource: its text and images.
	ReadResource(ctx context.Context, server, uri string) (string, []messages.Image, error)
	// GetPrompt renders a prompt with its arguments (words, in order).
	GetPrompt(ctx context.Context, server, name string, args []string) (string, error)
	// WaitPrompts starts server if need be and waits until its prompts
	// are listed (just after it is ready).
	WaitPrompts(ctx context.Context, server string) error
}

// MCPResource is a resource offered for @server:uri.
type MCPResource struct {
	Server, URI, Name string
}

// MCPPrompt is a prompt offered as /Command.
type MCPPrompt struct {
	// Command is mcp__SERVER__PROMPT.
	Command, Server, Name, Description string
	// ArgHint names the arguments ("file [focus]").
	ArgHint string
}

// mcpCommands are the MCP prompts as slash commands: running one renders
// the prompt on its server and submits the text as the user's input.
func mcpCommands(cat MCPCatalog) []Command {
	if cat == nil {
		return nil
	}
	var out []Command
	for _, p := range cat.Prompts() {
		usage := "/" + p.Command
		if p.ArgHint != "" {
			usage += " " + p.ArgHint
		}
		desc := strings.TrimSpace(firstLine(p.Description))
		if desc == "" {
			desc = "MCP prompt " + p.Name + " of " + p.Server
		}
		out = append(out, Command{Name: p.Command, Usage: usage, Description: termsafe.Line(desc),
			Run: func(ctx context.Context, args string) (Result, error) {
				text, err := cat.GetPrompt(ctx, p.Server, p.Name, strings.Fields(args))
				return Result{Prompt: text}, err
			}})
	}
	return out
}

// mcpCommand finds the MCP prompt command named name. A name of a
// configured server whose prompts are not listed yet (it is starting, or
// ready a moment ago) is a command that waits for the list, then runs the
// prompt or says the server has none of that name: a prompt typed right
// after start-up is not "unknown".
func mcpCommand(cat MCPCatalog, name string) (Command, bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok || cat == nil {
		return Command{}, false
	}
	find := func() (Command, bool) {
		for _, c := range mcpCommands(cat) {
			if c.Name == name {
				return c, true
			}
		}
		return Command{}, false
	}
	if c, ok := find(); ok {
		return c, true
	}
	for i := strings.Index(rest, "__"); i > 0; {
		server := rest[:i]
		if cat.IsServer(server) {
			return Command{Name: name, Run: func(ctx context.Context, args string) (Result, error) {
				if err := cat.WaitPrompts(ctx, server); err != nil {
					return Result{}, err
				}
				c, ok := find()
				if !ok {
					return Result{}, fmt.Errorf("MCP server %s has no prompt %s", server, rest[i+2:])
				}
				return c.Run(ctx, args)
			}}, true
		}
		next := strings.Index(rest[i+2:], "__")
		if next < 0 {
			break
		}
		i += 2 + next
	}
	return Command{}, false
}

// reResource finds @server:uri words; the server name is checked against
// the catalogue, so "@a.go:12" or a mail handle is left alone.
var reResource = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@([A-Za-z0-9_-]+):(\S+)`) })

// hasResourceMention reports whether body mentions a resource of one of
// cat's servers (attaching it may wait for the server).
func hasResourceMention(cat MCPCatalog, body string) bool {
	if cat == nil {
		return false
	}
	for _, m := range reResource().FindAllStringSubmatch(body, -1) {
		if cat.IsServer(m[1]) {
			return true
		}
	}
	return false
}

// attachResources returns the MCP resources text mentions (@server:uri)
// as a block to append to the message, their images, and a note per
// mention: what was attached or why not.
func attachResources(ctx context.Context, cat MCPCatalog, text string) (string, []messages.Image, []string) {
	if cat == nil {
		return "", nil, nil
	}
	var (
		block  strings.Builder
		images []messages.Image
		notes  []string
		seen   = map[string]bool{}
	)
	for _, m := range reResource().FindAllStringSubmatch(text, -1) {
		server, uri := m[1], strings.TrimRight(m[2], ".,;!?)]}'\"")
		key := server + ":" + uri
		if !cat.IsServer(server) || seen[key] {
			continue
		}
		seen[key] = true
		text, ims, err := cat.ReadResource(ctx, server, uri)
		if err != nil {
			notes = append(notes, fmt.Sprintf("! @%s not attached: %v", key, err))
			continue
		}
		images = append(images, ims...)
		notes = append(notes, fmt.Sprintf("attached @%s (%s)", key, byteSize(int64(len(text)))))
		fmt.Fprintf(&block, "<resource server=%q uri=%q>\n%s\n</resource>\n", server, uri, strings.TrimRight(text, "\n"))
	}
	if block.Len() == 0 {
		return "", images, notes
	}
	return attachedFilesTag + "\n" + block.String() + "</attached_files>", images, notes
}

// resourceMentions are the completion candidates of MCP resources:
// "server:uri", ranked with the files.
func resourceMentions(cat MCPCatalog) []string {
	if cat == nil {
		return nil
	}
	rs := cat.Resources()
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Server+":"+r.URI)
	}
	return out
}

// ExpandMCP turns a headless task (odin run) into what the REPL would
// submit for the same input: "/mcp__SERVER__PROMPT args" becomes the
// prompt the server renders, and @server:uri mentions in any other text
// attach those resources. notes say what was attached or why not; err is
// an MCP prompt that could not be rendered.
func ExpandMCP(ctx context.Context, cat MCPCatalog, text string) (string, []messages.Image, []string, error) {
	if cat == nil {
		return text, nil, nil, nil
	}
	if line, ok := strings.CutPrefix(strings.TrimSpace(text), "/"); ok && strings.HasPrefix(line, "mcp__") {
		name, args, _ := strings.Cut(line, " ")
		if c, ok := mcpCommand(cat, name); ok {
			res, err := c.Run(ctx, strings.TrimSpace(args))
			if err != nil {
				return "", nil, nil, fmt.Errorf("/%s: %w", name, err)
			}
			return res.Prompt, nil, nil, nil
		}
	}
	if !hasResourceMention(cat, text) {
		return text, nil, nil, nil
	}
	block, images, notes := attachResources(ctx, cat, text)
	return text + block, images, notes, nil
}
