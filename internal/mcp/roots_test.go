package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/config"
)

// rootsServer is an MCP server whose "roots" tool reports the client's
// roots (asked inside the call, as protocol 2026-07-28 requires) and
// which counts notifications/roots/list_changed.
func rootsServer(changed chan<- struct{}) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "roots", Version: "1"}, &sdk.ServerOptions{
		RootsListChangedHandler: func(context.Context, *sdk.RootsListChangedRequest) { changed <- struct{}{} },
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "roots", Description: "List the client's roots."},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, ok := req.Params.InputResponses["r"].(*sdk.ListRootsResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"r": &sdk.ListRootsParams{}}}, nil, nil
			}
			var lines []string
			for _, r := range res.Roots {
				lines = append(lines, r.URI+" "+r.Name)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(lines, "\n")}}}, nil, nil
		})
	return srv
}

// TestRootsAreOfferedAndChangesNotified: a server asking roots/list gets
// the project and the added directories (not []), and SetRoots sends
// notifications/roots/list_changed, after which it gets the new list.
func TestRootsAreOfferedAndChangesNotified(t *testing.T) {
	changed := make(chan struct{}, 10)
	srv := rootsServer(changed)
	m := New(Options{
		Servers: map[string]config.MCPServer{"rs": {Command: "unused"}},
		Roots:   []string{"/work/proj", "/data/shared dir", "/work/proj"},
		Transport: func(string, config.MCPServer) (sdk.Transport, error) {
			ct, st := sdk.NewInMemoryTransports()
			if _, err := srv.Connect(context.Background(), st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		},
	})
	t.Cleanup(func() { _ = m.Close() })
	if err := m.Connect(t.Context(), "rs"); err != nil {
		t.Fatal(err)
	}
	call := func() string {
		t.Helper()
		res, err := find(t, m.Tools(), "mcp__rs__roots").Run(t.Context(), nil, []byte(`{}`))
		if err != nil || res.IsError {
			t.Fatalf("roots: %v %+v", err, res)
		}
		return res.Output
	}
	if diff := cmp.Diff("file:///data/shared%20dir shared dir\nfile:///work/proj proj", call()); diff != "" {
		t.Errorf("roots (-want +got):\n%s", diff)
	}
	m.SetRoots([]string{"/work/proj", "/work/other"})
	<-changed // a test timeout, not a silent pass, if it never comes
	if diff := cmp.Diff("file:///work/other other\nfile:///work/proj proj", call()); diff != "" {
		t.Errorf("roots after SetRoots (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"file:///work/proj", "file:///work/other"}, m.Roots()); diff != "" {
		t.Errorf("Roots (-want +got):\n%s", diff)
	}
}

func TestPathProblems(t *testing.T) {
	for _, c := range []struct {
		line string
		want []PathProblem
	}{
		{"Error: EROFS: read-only file system, open '/usr/lib/node_modules/x/memory.jsonl'",
			[]PathProblem{{Path: "/usr/lib/node_modules/x/memory.jsonl", Write: true}}},
		{"OSError: [Errno 30] Read-only file system: '/home/u/.cache/srv'",
			[]PathProblem{{Path: "/home/u/.cache/srv", Write: true}}},
		{"open /home/u/data/db.sqlite: read-only file system",
			[]PathProblem{{Path: "/home/u/data/db.sqlite", Write: true}}},
		{"Error: Cannot find module '/tmp/srv/index.js'",
			[]PathProblem{{Path: "/tmp/srv/index.js"}}},
		{`python3: can't open file "/tmp/server.py": [Errno 2] No such file or directory`,
			[]PathProblem{{Path: "/tmp/server.py"}}},
		{"mkdir /var/lib/x: permission denied", []PathProblem{{Path: "/var/lib/x", Write: true}}},
		{"listening on stdio", nil},
		{"see https://example.com/docs/errors for help: not found", nil},
	} {
		got := PathProblems([]string{c.line})
		for i := range got {
			got[i].Line = ""
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.line, diff)
		}
	}
}

func TestDataEnv(t *testing.T) {
	for _, c := range []struct {
		argv   []string
		memory bool
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory"}, true},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31"}, true},
		{[]string{"/usr/local/bin/mcp-server-memory"}, true},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-everything"}, false},
		{[]string{"node", "/opt/mcp-server-memory-fork/index.js"}, false},
	} {
		env := strings.Join(DataEnv(c.argv, "/state/mcp-data/user/m"), " ")
		if !strings.Contains(env, "XDG_DATA_HOME=/state/mcp-data/user/m") {
			t.Errorf("%v: env %s lacks XDG_DATA_HOME", c.argv, env)
		}
		if got := strings.Contains(env, "MEMORY_FILE_PATH=/state/mcp-data/user/m/memory.jsonl"); got != c.memory {
			t.Errorf("%v: MEMORY_FILE_PATH set = %v, want %v (%s)", c.argv, got, c.memory, env)
		}
	}
}
