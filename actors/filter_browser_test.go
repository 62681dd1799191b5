package actors

import (
	"slices"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

// WebBrowser is opt-in: an agent gets it only when its tools name it ("*"
// does not, nor does the Orchestrator, nor a deny list naming it), and it
// stays in ask and plan mode (it is a web tool, writing nothing).
func TestWebBrowserIsOptIn(t *testing.T) {
	pool, err := browser.NewPool(config.Web{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	all := tools.Builtin(tools.BuiltinOptions{Browsers: pool})
	named := &AgentDefinition{Name: "ui", Tools: []string{"ReadFile", tools.NameWebBrowser}}
	cases := []struct {
		name string
		def  *AgentDefinition
		mode messages.Mode
		want bool
	}{
		{"named", named, messages.ModeEdit, true},
		{"named, ask mode", named, messages.ModeAsk, true},
		{"named, plan mode", named, messages.ModePlan, true},
		{"every tool (*)", &AgentDefinition{Name: "all", Tools: []string{"*"}}, messages.ModeEdit, false},
		{"named and denied", &AgentDefinition{Name: "no", Tools: []string{tools.NameWebBrowser}, DisallowedTools: []string{tools.NameWebBrowser}}, messages.ModeEdit, false},
		{"the Orchestrator", nil, messages.ModeEdit, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := slices.Contains(FilterTools(all, c.def, c.mode, c.def != nil).Names(), tools.NameWebBrowser)
			if got != c.want {
				t.Errorf("offered WebBrowser = %v, want %v", got, c.want)
			}
		})
	}
	if !ReadOnlyAgent(all, named) {
		t.Error("an agent with ReadFile and WebBrowser is not read-only, so ask and plan mode could not start it")
	}
}
