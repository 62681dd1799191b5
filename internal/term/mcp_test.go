package term

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/odin-code/odin/messages"
)

// fakeCatalog is one MCP server "docs" with a resource and a prompt.
type fakeCatalog struct{}

func (fakeCatalog) IsServer(name string) bool { return name == "docs" }
func (fakeCatalog) Resources() []MCPResource {
	return []MCPResource{{Server: "docs", URI: "doc://guide", Name: "guide"}}
}
func (fakeCatalog) Prompts() []MCPPrompt {
	return []MCPPrompt{{Command: "mcp__docs__explain", Server: "docs", Name: "explain", Description: "Explain a topic.", ArgHint: "topic"}}
}
func (fakeCatalog) ReadResource(_ context.Context, server, uri string) (string, []messages.Image, error) {
	if uri != "doc://guide" {
		return "", nil, errors.New("no such resource")
	}
	return "GUIDE-CONTENT", []messages.Image{{Name: "fig", MIME: "image/png", Data: []byte("x")}}, nil
}
func (fakeCatalog) GetPrompt(_ context.Context, server, name string, args []string) (string, error) {
	return "Explain " + strings.Join(args, " ") + " simply.", nil
}
func (fakeCatalog) WaitPrompts(context.Context, string) error { return nil }

// lateCatalog is fakeCatalog whose prompts are listed only once
// WaitPrompts was called: a server that became ready a moment ago.
type lateCatalog struct {
	fakeCatalog
	listed *atomic.Bool
}

func (c lateCatalog) Prompts() []MCPPrompt {
	if !c.listed.Load() {
		return nil
	}
	return c.fakeCatalog.Prompts()
}
func (c lateCatalog) WaitPrompts(context.Context, string) error { c.listed.Store(true); return nil }

// A prompt typed before its server's prompts are listed waits for them
// instead of being an unknown command; a prompt the server does not have
// is an error naming it.
func TestMCPPromptBeforeItsListArrives(t *testing.T) {
	f := newFake("s1", answerAt("answer to"))
	in := strings.NewReader("/mcp__docs__explain actor systems\n/mcp__docs__nope x\n")
	var out syncBuffer
	no := false
	cat := lateCatalog{listed: new(atomic.Bool)}
	if _, err := Run(t.Context(), Options{In: in, Out: &out, Session: f, Root: t.TempDir(), Interactive: &no, MCP: cat}); err != nil {
		t.Fatal(err)
	}
	sub, _, _, _ := f.snapshot()
	if len(sub) != 1 || sub[0].Body != "Explain actor systems simply." {
		t.Fatalf("inputs = %+v, want the rendered prompt only", sub)
	}
	if !strings.Contains(out.String(), "MCP server docs has no prompt nope") || strings.Contains(out.String(), "unknown command") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestLineModeMCPResourcesAndPrompts: @server:uri attaches the resource's
// text and images, an unknown resource is a note, and an MCP prompt runs
// as a slash command whose text becomes the input.
func TestLineModeMCPResourcesAndPrompts(t *testing.T) {
	f := newFake("s1", answerAt("answer to"))
	in := strings.NewReader("read @docs:doc://guide, and @docs:doc://nope and mail @bob:x\n/mcp__docs__explain actor systems\n")
	var out syncBuffer
	no := false
	if _, err := Run(t.Context(), Options{In: in, Out: &out, Session: f, Root: t.TempDir(), Interactive: &no, MCP: fakeCatalog{}}); err != nil {
		t.Fatal(err)
	}
	sub, _, _, _ := f.snapshot()
	if len(sub) != 2 {
		t.Fatalf("%d inputs submitted, want 2", len(sub))
	}
	if !strings.Contains(sub[0].Body, `<resource server="docs" uri="doc://guide">`+"\nGUIDE-CONTENT") || len(sub[0].Images) != 1 {
		t.Errorf("resource not attached: %q, %d images", sub[0].Body, len(sub[0].Images))
	}
	if sub[1].Body != "Explain actor systems simply." {
		t.Errorf("prompt input = %q", sub[1].Body)
	}
	for _, w := range []string{"attached @docs:doc://guide", "! @docs:doc://nope not attached: no such resource"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	if strings.Contains(out.String(), "@bob:x not attached") || strings.Contains(out.String(), "attached @bob") {
		t.Errorf("a mention of no server was treated as a resource:\n%s", out.String())
	}
}

func TestMCPCompletions(t *testing.T) {
	cmds := commandCompletions("mcp", mcpCommands(fakeCatalog{}), nil)
	if len(cmds) != 1 || cmds[0].Text != "/mcp__docs__explain" || !strings.Contains(cmds[0].Desc, "topic — Explain a topic.") {
		t.Errorf("slash menu = %+v", cmds)
	}
	items := mentionCompletions("guide", slices.Concat(resourceMentions(fakeCatalog{}), []string{"src/main.go"}))
	if len(items) == 0 || items[0].Text != "@docs:doc://guide" {
		t.Errorf("mention menu = %+v", items)
	}
}
