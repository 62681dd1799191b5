package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// relPathsScript reads a file in the workspace, lists the workspace itself
// and reads a file outside it, in one model turn.
func relPathsScript(root, outside string) *llmtest.Script {
	return llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "show me the paths", ToolCalls: []llmtest.ToolCall{
			llmtest.Call("ReadFile", map[string]any{"file_path": root + "/main.go"}),
			llmtest.Call("LS", map[string]any{"path": root}),
			llmtest.Call("ReadFile", map[string]any{"file_path": outside + "/notes.txt"}),
		}},
		llmtest.Step{When: "package main", Text: "Done."},
	)
}

// TestServeToolLinesShowWorkspacePaths: the line odin serve adds to a
// tool_started event (what the viewer and other clients show) names files
// of the workspace relative to it, as the CLI does, and files outside it by
// their absolute path; the event's input keeps the path the model sent.
func TestServeToolLinesShowWorkspacePaths(t *testing.T) {
	env, root := acpEnv(t)
	outside := t.TempDir()
	writeFile(t, outside, "notes.txt", "outside\n")
	srv, err := llmtest.Serve("127.0.0.1:0", relPathsScript(root, outside))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	writeFile(t, root, "main.go", "package main\n")
	_, c := startServe(t, env, root)
	id := c.do("POST", "/v1/sessions", map[string]string{"project": root}, http.StatusCreated)["id"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	evs := c.stream(ctx, id, "")
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "show me the paths", "mode": "ask"}, http.StatusAccepted)
	var got []string
	for len(got) < 3 {
		seen := until(t, evs, "tool_started")
		ev := seen[len(seen)-1]
		line, _ := ev.Data["line"].(map[string]any)
		var text string
		spans, _ := line["spans"].([]any)
		for _, s := range spans {
			text += s.(map[string]any)["text"].(string)
		}
		got = append(got, text[strings.Index(text, " ")+1:]) // after the mark
	}
	// The tools run side by side: their order is not the script's.
	slices.Sort(got)
	abs := outside + "/notes.txt"
	if r := []rune(abs); len(r) > 60 {
		abs = string(r[:60]) + "…" // a long argument is cut, as everywhere
	}
	want := []string{"LS .", "ReadFile " + abs, "ReadFile main.go"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tool_started lines (-want +got):\n%s", d)
	}
}

// TestACPToolTitlesShowWorkspacePaths: an ACP tool call's title names files
// of the session's workspace relative to it, files outside it absolutely;
// its locations stay absolute, as the protocol requires.
func TestACPToolTitlesShowWorkspacePaths(t *testing.T) {
	env, root := acpEnv(t)
	outside := t.TempDir()
	writeFile(t, outside, "notes.txt", "outside\n")
	srv, err := llmtest.Serve("127.0.0.1:0", relPathsScript(root, outside))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	writeFile(t, root, "main.go", "package main\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &acpClient{answer: "once"}
	p, _, sid := wiredSession(ctx, t, env, root, c, false)
	if _, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: prompt("show me the paths")}); err != nil {
		t.Fatal(err)
	}
	_, _, tools, _ := updatesText(c.take())
	type call struct{ Title, Location string }
	var got []call
	for _, tc := range tools {
		cl := call{Title: tc.Title}
		if len(tc.Locations) > 0 {
			cl.Location = tc.Locations[0].Path
		}
		got = append(got, cl)
	}
	slices.SortFunc(got, func(a, b call) int { return strings.Compare(a.Title, b.Title) })
	want := []call{
		{"LS .", root},
		{"ReadFile " + outside + "/notes.txt", outside + "/notes.txt"},
		{"ReadFile main.go", root + "/main.go"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tool calls (-want +got):\n%s", d)
	}
}
