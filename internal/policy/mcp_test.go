package policy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/tools/tool"
)

func TestMCPToolCallsAskUnlessAllowedByPattern(t *testing.T) {
	root := t.TempDir()
	env := &tool.Env{Root: root, Agent: "orchestrator", Mode: "edit"}
	get := tool.Info{Name: "mcp__github__get_issue", Class: tool.ClassMCP}
	del := tool.Info{Name: "mcp__github__delete_repo", Class: tool.ClassMCP}
	in := json.RawMessage(`{}`)

	headless, err := New(Options{Root: root, Permissions: config.Permissions{AllowedCommands: []string{"mcp__github__get_*", "go test *"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := headless.Authorize(t.Context(), env, get, in); err != nil {
		t.Errorf("allowed by pattern: %v", err)
	}
	err = headless.Authorize(t.Context(), env, del, in)
	if !tool.IsDenied(err) || !strings.Contains(err.Error(), "--allow 'mcp__github__delete_repo'") {
		t.Errorf("headless call not allowed by a pattern = %v; want a denial advising --allow", err)
	}

	var asked []Request
	repl, err := New(Options{Root: root, Approver: approverFunc(func(_ context.Context, r Request) (Decision, error) {
		asked = append(asked, r)
		return AllowSession, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := repl.Authorize(t.Context(), env, del, json.RawMessage(`{"force":true}`)); err != nil {
			t.Fatalf("approved call refused: %v", err)
		}
	}
	if len(asked) != 1 || asked[0].Kind != KindMCP || asked[0].Subject != del.Name+` {"force":true}` {
		t.Errorf("approvals asked = %+v; want one mcp request (the session remembers)", asked)
	}
}

type approverFunc func(context.Context, Request) (Decision, error)

func (f approverFunc) Approve(ctx context.Context, r Request) (Decision, error) { return f(ctx, r) }
