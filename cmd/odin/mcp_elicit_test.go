package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/acp"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/messages"
)

// TestMCPElicitFollowsTheFrontEnd: an ACP session's app declines a
// server's form with the editor's reason (and says so to the call's
// watcher); a session whose front end shows forms asks on its bus.
func TestMCPElicitFollowsTheFrontEnd(t *testing.T) {
	fo := frontOf(acp.OpenOptions{})
	if fo.NoElicit == "" {
		t.Fatal("ACP sessions do not say why they decline elicitation")
	}
	a := &app{log: zerolog.Nop(), elicitNoWhy: fo.NoElicit}
	var notices []string
	e := mcp.Elicitation{Server: "srv", Message: "Your name?", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		Publish: func(ev any) {
			if n, ok := ev.(messages.Notice); ok {
				notices = append(notices, n.Text)
			}
		}}
	res, err := a.mcpElicit(t.Context(), e)
	if err != nil || res.Action != mcp.ActionDecline {
		t.Fatalf("ACP: %+v %v, want decline", res, err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "MCP server srv asked for input") || !strings.Contains(notices[0], "ACP") {
		t.Errorf("notices = %q", notices)
	}

	// A front end with forms: the request is published and answered.
	bus := events.New("s", nil)
	ch := bus.Subscribe(t.Context(), 8, true)
	a = &app{log: zerolog.Nop(), elicitor: mcp.NewBusElicitor(bus, func() string { return "q1" })}
	go func() {
		for env := range ch {
			if _, ok := env.Event.(messages.ElicitationRequested); ok {
				_ = a.elicitor.Answer("q1", mcp.ActionAccept, map[string]any{"name": "Ada"})
				return
			}
		}
	}()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res, err = a.mcpElicit(ctx, e)
	if err != nil || res.Action != mcp.ActionAccept || res.Content["name"] != "Ada" {
		t.Fatalf("with a form front end: %+v %v", res, err)
	}
}
