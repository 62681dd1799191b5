package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

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
	flag.Parse()
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
			for _, p := range in.Write {
				if err := os.WriteFile(p, []byte("written by an MCP server\n"), 0o644); err != nil {
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
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 0 // stdin closed: the client went away
	}
	return 0
}
