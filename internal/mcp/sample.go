package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/tools/tool"
)

// Sampling is a server's request to use the model
// (sampling/createMessage), text only.
type Sampling struct {
	Server string
	// System is the server's system prompt; Prompt its messages as one
	// text (a lone user message as it is, a conversation with each turn
	// labelled). Both are the server's, untrusted.
	System, Prompt string
	// MaxTokens is the server's cap on the answer.
	MaxTokens int64
	// Env is the environment of the tool call during which the server
	// asked (nil outside a call): its Small model is the calling agent's,
	// metered, so the tokens count against that agent's budgets, and its
	// Publish reaches whoever watches the call.
	Env *tool.Env
}

// SampleFunc answers a Sampling with the model's text, or an error
// (ErrSamplingRefused when the user or the configuration refused it).
type SampleFunc func(ctx context.Context, s Sampling) (text, model string, err error)

// ErrSamplingRefused marks a sampling request nobody allowed; the server
// gets the protocol's "rejected" error.
var ErrSamplingRefused = errors.New("sampling request refused")

// codeUserRejected is the error code MCP's specification gives a client's
// refusal of a sampling request.
const codeUserRejected = -1

// sample is the client's sampling handler: text messages only, answered
// through Options.Sample.
func (s *server) sample(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	if req == nil || req.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sampling/createMessage without params"}
	}
	p := req.Params
	sm := Sampling{Server: s.name, System: p.SystemPrompt, MaxTokens: p.MaxTokens}
	var b strings.Builder
	for i, m := range p.Messages {
		if m == nil {
			continue
		}
		tc, ok := m.Content.(*sdk.TextContent)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Odin samples text only (message %d is %T)", i, m.Content)}
		}
		if len(p.Messages) == 1 && m.Role == "user" {
			b.WriteString(tc.Text)
			break
		}
		fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, tc.Text)
	}
	sm.Prompt = strings.TrimRight(b.String(), "\n")
	sm.Env = s.callEnv(ctx, p.Meta)
	if s.m.opts.Sample == nil {
		return nil, &jsonrpc.Error{Code: codeUserRejected, Message: "User rejected sampling request: this Odin answers none"}
	}
	text, model, err := s.m.opts.Sample(ctx, sm)
	if errors.Is(err, ErrSamplingRefused) {
		return nil, &jsonrpc.Error{Code: codeUserRejected, Message: "User rejected sampling request: " + err.Error()}
	}
	if err != nil {
		return nil, fmt.Errorf("sampling: %w", err)
	}
	return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: text}, Model: model, Role: "assistant", StopReason: "endTurn"}, nil
}
