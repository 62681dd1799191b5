package prompts

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
)

//go:embed templates/*.tmpl
var files embed.FS

// templates are parsed on first use: most commands (odin --version,
// sessions, stats) render no prompt.
var templates = sync.OnceValues(func() (set, error) {
	entries, err := fs.ReadDir(files, "templates")
	if err != nil {
		return nil, err
	}
	texts := map[string]string{}
	for _, e := range entries {
		b, err := fs.ReadFile(files, "templates/"+e.Name())
		if err != nil {
			return nil, err
		}
		texts[e.Name()] = string(b)
	}
	return parseSet(texts)
})

// Agent names a delegation target in the Orchestrator's prompt (what each
// does is in the agent tool's description).
type Agent struct {
	Name     string
	ReadOnly bool
}

// Data is everything a prompt may mention.
type Data struct {
	// Root is the project root.
	Root string
	// Date is today's date, formatted by the caller (YYYY-MM-DD).
	Date string
	// OS is the platform, e.g. "linux/amd64".
	OS string
	// Mode is ask, plan or edit.
	Mode string
	// Instructions are the project's custom instructions (ODIN.md or
	// equivalents), already assembled; empty when there are none.
	Instructions string
	// Agents are the specialists the Orchestrator may delegate to.
	Agents []Agent
	// Custom is a custom agent's own prompt.
	Custom string
	// AgentName is the specialist's roster name.
	AgentName string
	// WriteScope describes which files the agent may write, if limited.
	WriteScope string
	// WebSearch is true when a web search backend is configured.
	WebSearch bool
}

// Names of the templates.
const (
	Orchestrator = "orchestrator"
	Search       = "search"
	Research     = "research"
	Code         = "code"
	Review       = "review"
	Test         = "test"
	Docs         = "docs"
	QA           = "qa"
	Init         = "init"
	CustomAgent  = "custom"
	// Synthesis writes the final answer of a turn after its quality gates.
	Synthesis = "synthesis"
)

// Render renders the named template with d.
func Render(name string, d Data) (string, error) {
	ts, err := templates()
	if err != nil {
		return "", fmt.Errorf("prompts: %w", err)
	}
	if _, ok := ts[name+".tmpl"]; !ok {
		return "", fmt.Errorf("prompts: no template %q", name)
	}
	out, err := ts.execute(name+".tmpl", d)
	if err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", name, err)
	}
	return strings.TrimSpace(out) + "\n", nil
}

// roleHeading opens the role section of a specialist's prompt, which
// follows the preamble every specialist shares.
const roleHeading = "\n# Your role\n"

// SplitRole splits a rendered specialist prompt into the preamble every
// specialist of a session shares byte for byte and its own role section
// (from "# Your role" on). A prompt without a role section is all
// preamble. Odin sends the preamble as the system message and the role
// with the task: the tool definitions a provider lays out after the system
// message are then the same leading bytes for every specialist too, and
// its prefix cache serves them across agents.
func SplitRole(s string) (preamble, role string) {
	i := strings.Index(s, roleHeading)
	if i < 0 {
		return s, ""
	}
	return s[:i+1], strings.TrimSpace(s[i+1:]) + "\n"
}

// Names lists the available templates.
func Names() []string {
	ts, _ := templates()
	var out []string
	for t := range ts {
		if n, ok := strings.CutSuffix(t, ".tmpl"); ok && !strings.HasPrefix(n, "_") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
