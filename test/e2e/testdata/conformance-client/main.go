// Command conformance-client is the MCP client the conformance suite
// (npm @modelcontextprotocol/conformance) drives: Odin's own MCP client
// (internal/mcp's Manager, as `odin` wires it) connected to the suite's
// server at the URL it appends, calling each tool the server offers with
// arguments built from the tool's schema. A server's request for input is
// answered as a user pressing Enter on every field would: through the
// session's bus elicitor, accepted with no typed values, so the form's
// defaults apply. The scenario's name is in MCP_CONFORMANCE_SCENARIO.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-client SERVER_URL")
		os.Exit(2)
	}
	if err := run(os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-client:", err)
		os.Exit(1)
	}
}

func run(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	bus := events.New("conformance", nil)
	el := mcp.NewBusElicitor(bus, nil)
	answers := bus.Subscribe(ctx, 16, true)
	go func() {
		for env := range answers {
			if req, ok := env.Event.(messages.ElicitationRequested); ok {
				fmt.Printf("elicitation from %s: %q; accepting the defaults\n", req.Server, req.Message)
				if err := el.Answer(req.ID, mcp.ActionAccept, nil); err != nil {
					fmt.Fprintln(os.Stderr, "answer:", err)
				}
			}
		}
	}()
	m := mcp.New(mcp.Options{
		Servers:        map[string]config.MCPServer{"conf": {Type: "http", URL: url}},
		Elicit:         el.Elicit,
		ConnectTimeout: 15 * time.Second,
		MaxRestarts:    1,
		Version:        "conformance",
		Log:            zerolog.New(os.Stderr).Level(zerolog.WarnLevel),
	})
	defer m.Close()
	if err := m.Connect(ctx, "conf"); err != nil {
		return err
	}
	env := &tool.Env{Agent: "orchestrator", Publish: func(ev any) {
		if n, ok := ev.(messages.Notice); ok {
			fmt.Println("notice:", n.Text)
		}
	}}
	for _, t := range m.Tools() {
		args := argsFor(t.Info().Schema)
		res, err := t.Run(ctx, env, args)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Info().Name, err)
		}
		fmt.Printf("%s %s -> error=%v %s\n", t.Info().Name, args, res.IsError, res.Output)
	}
	return nil
}

// argsFor fills every property of an input schema with a plain value of
// its type (numbers 1, text "x", true).
func argsFor(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{}
	for name, p := range s.Properties {
		switch p.Type {
		case "number", "integer":
			args[name] = 1
		case "boolean":
			args[name] = true
		case "string":
			args[name] = "x"
		}
	}
	b, _ := json.Marshal(args)
	return b
}
