package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// helperCommands are programs the scripts can run (and odin can start):
// they are this test binary under another name (testscript.RunMain).
var helperCommands = map[string]func() int{
	"mcp-fixture": mcpFixture,
}

type lookupIn struct {
	Key string `json:"key" jsonschema:"the key to look up"`
}

type probeIn struct {
	Write []string `json:"write,omitempty" jsonschema:"files to try to create"`
	Env   []string `json:"env,omitempty" jsonschema:"variables to report"`
}

// mcpFixture is an MCP server on stdio built with the SDK: lookup answers,
// crash kills the process in the middle of the call, probe reports what
// the server may do (write files, see variables). --canary FILE gets a
// line per start, so scripts can count starts (and see that none
// happened); $VARs in FILE are the server's own environment's (the
// sandbox leaves it only its private cache, $XDG_CACHE_HOME, writable).
func mcpFixture() int {
	canary := flag.String("canary", "", "file to append a line to on every start")
	say := flag.String("stderr", "", "a line to write to stderr on start, followed by a terminal title escape")
	waitFor := flag.String("wait-for", "", "file whose appearance the server waits for before it answers (a slow start)")
	listed := flag.String("listed", "", "file to create once the server has answered tools/list ($VARs expand)")
	asks := flag.Bool("asks", false, "offer ask (elicitation) and sample (sampling), which ask the client")
	flag.Parse()
	if *waitFor != "" {
		for {
			if _, err := os.Stat(*waitFor); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if *say != "" {
		fmt.Fprintf(os.Stderr, "%s \x1b]0;pwned\x07\n", *say)
	}
	if *canary != "" {
		f, err := os.OpenFile(os.ExpandEnv(*canary), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(f, "started")
		f.Close()
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "fixture", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "lookup", Description: "Look a key up in the fixture's table.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in lookupIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the value of " + in.Key + " is 42"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Crash the server."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "probe", Description: "Report what this server may do."},
		func(_ context.Context, _ *sdk.CallToolRequest, in probeIn) (*sdk.CallToolResult, any, error) {
			var b strings.Builder
			failed := false
			for _, p := range in.Write {
				if err := os.WriteFile(p, []byte("written by an MCP server\n"), 0o644); err != nil {
					failed = true
					fmt.Fprintf(&b, "write %s: failed (%v)\n", p, err)
				} else {
					fmt.Fprintf(&b, "write %s: ok\n", p)
				}
			}
			for _, k := range in.Env {
				if v, ok := os.LookupEnv(k); ok {
					fmt.Fprintf(&b, "env %s=%s\n", k, v)
				} else {
					fmt.Fprintf(&b, "env %s unset\n", k)
				}
			}
			// As server-filesystem does, a refused write is the call's error.
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}, IsError: failed}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "roots", Description: "List the client's roots."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			// From protocol 2026-07-28 on, a server asks for the roots
			// inside the call (a multi round-trip request) and the client
			// calls again with the answer.
			res, ok := req.Params.InputResponses["roots"].(*sdk.ListRootsResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}, nil, nil
			}
			var b strings.Builder
			for _, r := range res.Roots {
				fmt.Fprintf(&b, "root %s %s\n", r.URI, r.Name)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}, nil, nil
		})
	s.AddResource(&sdk.Resource{URI: "fixture://notes", Name: "notes", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "fixture://notes", MIMEType: "text/plain", Text: "the fixture's notes say 7"}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greet someone.", Arguments: []*sdk.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say hello to " + req.Params.Arguments["name"]}}}}, nil
		})
	if *asks {
		addAskingTools(s)
	}
	if *listed != "" {
		s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				res, err := next(ctx, method, req)
				if method == "tools/list" {
					_ = os.WriteFile(os.ExpandEnv(*listed), []byte("listed\n"), 0o644)
				}
				return res, err
			}
		})
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 0 // stdin closed: the client went away
	}
	return 0
}

// addAskingTools adds ask, whose call asks the user a form (elicitation),
// and sample, whose call asks the client's model (sampling); each reports
// the client's answer, or its refusal, as its result.
func addAskingTools(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Ask the user for their name."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			params := &sdk.ElicitParams{Message: "What is your name?", RequestedSchema: map[string]any{"type": "object",
				"properties": map[string]any{"name": map[string]any{"type": "string"}}}}
			res, ok := req.Params.InputResponses["ask"].(*sdk.ElicitResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"ask": params}}, nil, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the user answered " + res.Action}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "sample", Description: "Ask the client's model."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			params := &sdk.CreateMessageParams{MaxTokens: 50, SystemPrompt: "Be brief.",
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Name a colour."}}}}
			res, ok := req.Params.InputResponses["sample"].(*sdk.CreateMessageWithToolsResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"sample": params}}, nil, nil
			}
			var b strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					b.WriteString(tc.Text)
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the model (" + res.Model + ") said: " + b.String()}}}, nil, nil
		})
}
