package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"sort"
)

// Claude Code's files holding MCP servers ("mcpServers"), read as they are.
const (
	// ClaudeProjectFile is the project's server list, in the project root.
	ClaudeProjectFile = ".mcp.json"
	// ClaudeUserFile is Claude Code's user file, in the home directory;
	// only its top-level "mcpServers" is read.
	ClaudeUserFile = ".claude.json"
)

// claudeServerKeys are the server keys Odin understands; Claude Code's
// other keys (oauth settings and the like) are ignored rather than
// refused, so a file written for Claude Code still loads.
var claudeServerKeys = []string{"type", "command", "args", "env", "url", "headers"}

// readClaudeMCP reads the "mcpServers" of a Claude Code file as an mcp
// config tree. found is false when the file does not exist or has no
// servers.
func readClaudeMCP(path, baseDir, home string) (tree map[string]any, found bool, problems []Problem) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, []Problem{{Source: path, Msg: "cannot read: " + err.Error()}}
	}
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, false, []Problem{{Source: path, Line: jsonErrorLine(data, err), Msg: "invalid JSON: " + err.Error()}}
	}
	if len(doc.MCPServers) == 0 {
		return nil, false, nil
	}
	servers := map[string]any{}
	names := make([]string, 0, len(doc.MCPServers))
	for name := range doc.MCPServers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		entry := map[string]any{}
		for _, k := range claudeServerKeys {
			if v, ok := doc.MCPServers[name][k]; ok && v != nil {
				entry[k] = v
			}
		}
		servers[name] = entry
	}
	n := &normalizer{source: path, baseDir: baseDir, home: home}
	out, ok := n.node("", "", map[string]any{"mcp": map[string]any{"servers": servers}}, configType)
	if !ok {
		return nil, false, n.problems
	}
	return out.(map[string]any), true, n.problems
}

// mergeMissing adds to dst the entries of src's mcp.servers that dst does
// not name, and returns their names.
func mergeMissing(dst, src map[string]any) (added []string) {
	srv, _ := at(src, "mcp", "servers").(map[string]any)
	if len(srv) == 0 {
		return nil
	}
	m, _ := dst["mcp"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		dst["mcp"] = m
	}
	d, _ := m["servers"].(map[string]any)
	if d == nil {
		d = map[string]any{}
		m["servers"] = d
	}
	for name, v := range srv {
		if _, ok := d[name]; !ok {
			d[name] = v
			added = append(added, name)
		}
	}
	return added
}
