package mcp

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/odin-code/odin/config"
)

// inherited are the only variables of Odin's environment a stdio server
// sees besides its own env: enough to find programs and a home, never a
// provider key.
var inherited = []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR"}

// ServerEnv is a stdio server's whole environment: the inherited
// variables that are set, then the server's env (expanded), which wins.
func ServerEnv(c config.MCPServer, look func(string) (string, bool)) []string {
	vals := map[string]string{}
	for _, k := range inherited {
		if v, ok := look(k); ok {
			vals[k] = v
		}
	}
	for k, v := range c.Env {
		vals[k] = Expand(v, look)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+vals[k])
	}
	return out
}

// Expand replaces ${VAR} and ${VAR:-default} as Claude Code does in
// .mcp.json; an unset VAR without a default becomes "". A bare $VAR is
// left alone: server arguments often hold a literal "$".
func Expand(s string, look func(string) (string, bool)) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return os.Expand(protectBare(s), func(name string) string {
		if name == "$" {
			return "$"
		}
		key, def, hasDef := strings.Cut(name, ":-")
		if v, ok := look(key); ok && v != "" {
			return v
		}
		if hasDef {
			return def
		}
		return ""
	})
}

// protectBare rewrites every "$" not followed by "{" as "${$}", which
// Expand's mapping turns back into "$".
func protectBare(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && (i+1 >= len(s) || s[i+1] != '{') {
			b.WriteString("${$}")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// knownData are the reference servers that keep their data in a file an
// environment variable names, and the file in the data directory it gets
// by default: server-memory writes beside its own script otherwise (in
// npx's cache, or read-only where it was installed).
var knownData = []struct{ pkg, bin, env, file string }{
	{"@modelcontextprotocol/server-memory", "mcp-server-memory", "MEMORY_FILE_PATH", "memory.jsonl"},
}

// DataEnv points a stdio server at its data directory dir: XDG_DATA_HOME
// and XDG_STATE_HOME (where well-behaved programs persist), ODIN_MCP_DATA,
// and the variable a known reference server reads its data file from.
// The server's own env, added after, wins over each.
func DataEnv(argv []string, dir string) []string {
	env := []string{"XDG_DATA_HOME=" + dir, "XDG_STATE_HOME=" + dir, "ODIN_MCP_DATA=" + dir}
	for _, k := range knownData {
		for i, a := range argv {
			name := strings.TrimPrefix(a, "npm:")
			if at := strings.LastIndexByte(name, '@'); at > 0 {
				name = name[:at] // @scope/pkg@version
			}
			if name == k.pkg || (i == 0 && filepath.Base(a) == k.bin) {
				env = append(env, k.env+"="+filepath.Join(dir, k.file))
				break
			}
		}
	}
	return env
}
