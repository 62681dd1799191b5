package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMCPServersFromClaudeFilesAndTrust(t *testing.T) {
	f := newFixture(t, "", "mcp:\n\tservers:\n\t\tdocs:\n\t\t\turl: https://docs.example.com/mcp\n")
	writeFile(t, filepath.Join(f.root, ClaudeProjectFile), `{"mcpServers": {
		"fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs"], "env": {"K": "v"}, "oauth": {"x": 1}},
		"docs": {"command": "ignored: odin.yaml wins"}}}`)
	writeFile(t, filepath.Join(f.home, ClaudeUserFile), `{"numStartups": 9, "mcpServers": {"mine": {"command": "my-server"}}}`)

	cfg, src := f.load(t, nil, nil)
	if diff := cmp.Diff([]string{"mcp.servers.docs", "mcp.servers.fs"}, src.ProjectWidens()); diff != "" {
		t.Errorf("project servers must wait for trust (-want +got):\n%s", diff)
	}
	want := map[string]MCPServer{
		"docs": {URL: "https://docs.example.com/mcp"},
		"fs":   {Type: "stdio", Command: "npx", Args: []string{"-y", "server-fs"}, Env: map[string]string{"K": "v"}},
		"mine": {Command: "my-server"},
	}
	if diff := cmp.Diff(want, cfg.MCP.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}

	// Untrusted: only the user's server remains.
	opts := f.options(nil, nil)
	opts.IgnoreProjectWidening = true
	cfg, src, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mine"}, sortedKeys(cfg.MCP.Servers)); diff != "" {
		t.Errorf("untrusted servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"mcp.servers.docs", "mcp.servers.fs"}, src.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}

	// The fingerprint covers the command line.
	_, before := f.load(t, nil, nil)
	writeFile(t, filepath.Join(f.root, ClaudeProjectFile), `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "evil"]}}}`)
	_, after := f.load(t, nil, nil)
	if before.WideningFingerprint() == after.WideningFingerprint() {
		t.Error("changing a project server's args kept the trust fingerprint")
	}
}

func TestMCPServerValidation(t *testing.T) {
	f := newFixture(t, "", `mcp:
	servers:
		both: {command: x, url: "https://a/b"}
		none: {type: http}
		"bad.name": {command: x}
		wrong: {command: x, type: sse}
		lazy: {command: x, startup: sometimes}
		stdiooauth: {command: x, oauth: {client_id: c}}
		secretonly: {url: "https://a/b", oauth: {client_secret: s}}
`)
	_, _, err := Load(f.options(nil, nil))
	got := strings.Join(problems(t, err), "\n")
	for _, want := range []string{
		"mcp.servers.both: sets both command and url",
		"mcp.servers.none: needs command",
		"mcp.servers.bad.name: a server name may hold only",
		"mcp.servers.wrong.type: is \"sse\" but the server has a command",
		"mcp.servers.lazy.startup: must be lazy or eager",
		"mcp.servers.stdiooauth.oauth: is for http servers",
		"mcp.servers.secretonly.oauth.client_secret: needs oauth.client_id",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing problem %q in:\n%s", want, got)
		}
	}
	writeFile(t, filepath.Join(f.root, FileName), "")
	writeFile(t, filepath.Join(f.root, ClaudeProjectFile), `{"mcpServers": `)
	_, _, err = Load(f.options(nil, nil))
	if got := strings.Join(problems(t, err), "\n"); !strings.Contains(got, ".mcp.json:1: invalid JSON") {
		t.Errorf("broken .mcp.json: %s", got)
	}
	// The line of the fault, as for odin.yaml.
	writeFile(t, filepath.Join(f.root, ClaudeProjectFile), "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"a\",}\n  }\n}\n")
	_, _, err = Load(f.options(nil, nil))
	if got := strings.Join(problems(t, err), "\n"); !strings.Contains(got, ".mcp.json:3: invalid JSON") {
		t.Errorf("broken .mcp.json: %s, want its line 3 named", got)
	}
}

func TestSetAndRemoveMCPServerKeepTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odin", FileName)
	writeFile(t, path, "# my settings\nmodels:\n\tmain: gpt-4o # the best\n")
	if replaced, err := SetMCPServer(path, "fs", MCPServer{Command: "npx", Args: []string{"-y", "old"}}); err != nil || replaced {
		t.Fatalf("first fs: replaced %v, %v", replaced, err)
	}
	// The same name again replaces the entry, and says so.
	if replaced, err := SetMCPServer(path, "fs", MCPServer{Command: "npx", Args: []string{"-y", "fs"}}); err != nil || !replaced {
		t.Fatalf("second fs: replaced %v, %v; want replaced", replaced, err)
	}
	if replaced, err := SetMCPServer(path, "web", MCPServer{URL: "https://example.com/mcp", BearerTokenEnv: "TOKEN"}); err != nil || replaced {
		t.Fatalf("web: replaced %v, %v", replaced, err)
	}
	if _, err := SetMCPServer(path, "bad", MCPServer{}); err == nil {
		t.Error("a server without command or url was written")
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "# the best") {
		t.Errorf("comments lost:\n%s", data)
	}
	cfg, _, err := Load(LoadOptions{UserDir: filepath.Dir(path), LookupEnv: envOf(map[string]string{"HOME": t.TempDir()})})
	if err != nil {
		t.Fatalf("written file does not load: %v\n%s", err, data)
	}
	want := map[string]MCPServer{"fs": {Command: "npx", Args: []string{"-y", "fs"}}, "web": {URL: "https://example.com/mcp", BearerTokenEnv: "TOKEN"}}
	if diff := cmp.Diff(want, cfg.MCP.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if found, err := RemoveMCPServer(path, "fs"); err != nil || !found {
		t.Fatalf("remove fs = %v, %v", found, err)
	}
	if found, _ := RemoveMCPServer(path, "fs"); found {
		t.Error("fs removed twice")
	}
	cfg, _, err = Load(LoadOptions{UserDir: filepath.Dir(path), LookupEnv: envOf(map[string]string{"HOME": t.TempDir()})})
	if err != nil || len(cfg.MCP.Servers) != 1 {
		t.Errorf("after remove: %v, %v", cfg.MCP.Servers, err)
	}
}

func TestMCPJSONProblemsNameTheFile(t *testing.T) {
	f := newFixture(t, "", "")
	t.Chdir(f.root) // in the project, where its file is "odin.yaml"
	writeFile(t, filepath.Join(f.root, ClaudeProjectFile), `{"mcpServers": {"fs": {"command": "x", "url": "https://a/b"}}}`)
	_, _, err := Load(f.options(nil, nil))
	got := strings.Join(problems(t, err), "\n")
	if !strings.HasPrefix(got, ".mcp.json: mcp.servers.fs: sets both command and url") {
		t.Errorf("problem = %q; want it to name .mcp.json", got)
	}
}
