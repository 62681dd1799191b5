package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"

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

// mcpFixture is an MCP server on stdio built with the SDK: lookup answers,
// crash kills the process in the middle of the call. --canary FILE gets a
// line per start, so scripts can count starts (and see that none
// happened).
func mcpFixture() int {
	canary := flag.String("canary", "", "file to append a line to on every start")
	flag.Parse()
	if *canary != "" {
		f, err := os.OpenFile(*canary, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
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
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 0 // stdin closed: the client went away
	}
	return 0
}
