package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/tools/tool"
)

// samplingServer's tool "summarise" asks the client's model to complete
// a prompt and returns what the model said, or the client's refusal.
func samplingServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "sm", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "summarise", Description: "Summarise with the client's model."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			params := &sdk.CreateMessageParams{SystemPrompt: "Be brief.", MaxTokens: 50,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Summarise: the sky is blue."}}}}
			var res *sdk.CreateMessageResult
			if r, ok := req.Params.InputResponses["sample"].(*sdk.CreateMessageWithToolsResult); ok && len(r.Content) == 1 {
				res = &sdk.CreateMessageResult{Model: r.Model, Content: r.Content[0]}
			} else if req.Session.InitializeParams().ProtocolVersion >= "2026-07-28" {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"sample": params}}, nil, nil
			} else {
				var err error
				if res, err = req.Session.CreateMessage(ctx, params); err != nil {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "refused: " + err.Error()}}}, nil, nil
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("model %s said %q", res.Model, res.Content.(*sdk.TextContent).Text)}}}, nil, nil
		})
	return srv
}

type echoSmall struct{ calls []string }

func (e *echoSmall) Complete(_ context.Context, system, user string) (string, error) {
	e.calls = append(e.calls, system+"|"+user)
	return "blue sky", nil
}

// TestSamplingThroughTheCallersSmallModel: the server's request reaches
// Options.Sample with the call's env (whose metered small model answers)
// and the prompt; a refusal reaches the server as the protocol's
// rejection.
func TestSamplingThroughTheCallersSmallModel(t *testing.T) {
	var got []Sampling
	allow := true
	m := liveServer(t, samplingServer(), Options{Sample: func(ctx context.Context, s Sampling) (string, string, error) {
		got = append(got, s)
		if !allow {
			return "", "", fmt.Errorf("%w: not approved", ErrSamplingRefused)
		}
		text, err := s.Env.Small.Complete(ctx, s.System, s.Prompt)
		return text, "small-model", err
	}})
	small := &echoSmall{}
	env := &tool.Env{Agent: "code", Small: small}
	res, err := find(t, m.Tools(), "mcp__lv__summarise").Run(t.Context(), env, []byte(`{}`))
	if err != nil || res.Output != `model small-model said "blue sky"` {
		t.Fatalf("summarise: %v %+v", err, res)
	}
	if len(got) != 1 || got[0].Server != "lv" || got[0].Env != env || got[0].Prompt != "Summarise: the sky is blue." || got[0].System != "Be brief." || got[0].MaxTokens != 50 {
		t.Errorf("Sample got %+v", got)
	}
	if len(small.calls) != 1 || small.calls[0] != "Be brief.|Summarise: the sky is blue." {
		t.Errorf("the calling agent's small model got %q", small.calls)
	}

	allow = false
	res, err = find(t, m.Tools(), "mcp__lv__summarise").Run(t.Context(), env, []byte(`{}`))
	if err != nil || !strings.Contains(res.Output, "rejected") || len(small.calls) != 1 {
		t.Fatalf("refused sampling: %v %+v (model calls %d)", err, res, len(small.calls))
	}
}
