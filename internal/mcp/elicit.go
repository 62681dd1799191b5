package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Elicitation is a server's request for input from the user
// (elicitation/create): a message and, in form mode, the schema of the
// answer; in URL mode a URL to open.
type Elicitation struct {
	Server  string
	Message string
	// Schema is the requested form's JSON schema (form mode).
	Schema any
	// URL is the page to open (URL mode).
	URL string
	// Publish, when set, shows a notice to whoever watches the call that
	// triggered the request (nil for a request outside a call).
	Publish func(event any)
}

// ElicitFunc answers an Elicitation: Action "accept" with Content, or
// "decline" or "cancel".
type ElicitFunc func(ctx context.Context, e Elicitation) (*sdk.ElicitResult, error)

type elicitEnvKey struct{}

// withElicitEnv lets an elicitation made inside a call (a multi
// round-trip request arrives on the call's context) reach that call's
// session.
func withElicitEnv(ctx context.Context, env *tool.Env) context.Context {
	return context.WithValue(ctx, elicitEnvKey{}, env)
}

// elicit is the client's elicitation handler: Options.Elicit answers;
// without it the request is declined, and the user told why.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	e := Elicitation{Server: s.name}
	if req != nil && req.Params != nil {
		e.Message, e.Schema, e.URL = req.Params.Message, req.Params.RequestedSchema, req.Params.URL
	}
	var meta map[string]any
	if req != nil && req.Params != nil {
		meta = req.Params.Meta
	}
	if env := s.callEnv(ctx, meta); env != nil {
		e.Publish = env.Publish
	}
	if s.m.opts.Elicit != nil {
		return s.m.opts.Elicit(ctx, e)
	}
	DeclineNotice(e, "nothing in this Odin can answer it")
	return &sdk.ElicitResult{Action: "decline"}, nil
}

// DeclineNotice tells the user that a server's request for input was
// declined, and why.
func DeclineNotice(e Elicitation, why string) {
	if e.Publish == nil {
		return
	}
	e.Publish(messages.Notice{Level: "warn", Text: fmt.Sprintf("MCP server %s asked for input (%q); declined: %s", e.Server, oneLine(e.Message), why)})
}

func oneLine(s string) string {
	r := []rune(s)
	for i, c := range r {
		if c == '\n' || c == '\r' {
			r[i] = ' '
		}
	}
	if len(r) > 160 {
		r = append(r[:157], []rune("...")...)
	}
	return string(r)
}
