package prompts

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"
)

//go:embed templates/*.tmpl
var files embed.FS

// templates are parsed on first use: most commands (odin --version,
// sessions, stats) render no prompt.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"trim": strings.TrimSpace,
	}).ParseFS(files, "templates/*.tmpl"))
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
	t := templates().Lookup(name + ".tmpl")
	if t == nil {
		return "", fmt.Errorf("prompts: no template %q", name)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", name, err)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}

// Names lists the available templates.
func Names() []string {
	var out []string
	for _, t := range templates().Templates() {
		if n, ok := strings.CutSuffix(t.Name(), ".tmpl"); ok && !strings.HasPrefix(n, "_") {
			out = append(out, n)
		}
	}
	return out
}
