package actors

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

func TestBuiltinRoles(t *testing.T) {
	r, err := LoadRoster(RosterOptions{Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	for role, name := range map[Role]string{RoleReviewer: "review", RoleTester: "test", RoleFixer: "code", RoleDiagnostician: "qa"} {
		a, ok := r.ByRole(role)
		if !ok || a.Name != name {
			t.Errorf("ByRole(%s) = %v, %v; want %s", role, a, ok, name)
		}
	}
}

func TestCustomAgentTakesARole(t *testing.T) {
	cfg := config.Default()
	cfg.Agents = map[string]config.Agent{
		"auditor": {Description: "audits", Prompt: "Audit.", Role: "reviewer"},
	}
	r, err := LoadRoster(RosterOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	a, ok := r.ByRole(RoleReviewer)
	if !ok || a.Name != "auditor" {
		t.Fatalf("reviewer = %v", a)
	}
	if a.Report != "review" || a.ReportTool().Info().Name != "Report" {
		t.Errorf("the reviewer's schema = %q", a.Report)
	}
	if !strings.Contains(string(a.ReportTool().Info().Schema), "approved") {
		t.Errorf("the reviewer's Report schema is not ReviewResult: %s", a.ReportTool().Info().Schema)
	}
	review, _ := r.Get("review")
	if review.Role != RoleNone {
		t.Errorf("the built-in review kept its role %q", review.Role)
	}
	if w := strings.Join(r.Warnings(), "\n"); !strings.Contains(w, "agent auditor takes the reviewer role from the built-in review agent") {
		t.Errorf("warnings = %q", w)
	}
}

func TestRoleErrorsNameTheKeyAndFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		agents map[string]config.Agent
		file   string
		want   string
	}{
		{"two user agents, one role", map[string]config.Agent{
			"a1": {Description: "d", Prompt: "p", Role: "reviewer"},
			"a2": {Description: "d", Prompt: "p", Role: "reviewer"},
		}, "", "odin.yaml: agents.a2.role: the reviewer role is also declared by agent a1 (odin.yaml)"},
		{"role and schema disagree", map[string]config.Agent{
			"a1": {Description: "d", Prompt: "p", Role: "tester", Report: "review"},
		}, "", "odin.yaml: agents.a1.report: the tester role reports with the test schema"},
		{"unknown role", map[string]config.Agent{
			"a1": {Description: "d", Prompt: "p", Role: "boss"},
		}, "", `odin.yaml: agents.a1.role: unknown role "boss"`},
		{"bad permission mode", map[string]config.Agent{
			"a1": {Description: "d", Prompt: "p", PermissionMode: "yolo"},
		}, "", `odin.yaml: agents.a1.permission_mode: invalid mode "yolo"`},
		{"bad colour", map[string]config.Agent{
			"a1": {Description: "d", Prompt: "p", Color: "ultraviolet"},
		}, "", `odin.yaml: agents.a1.color: unknown colour "ultraviolet"`},
		{"bad network", map[string]config.Agent{
			"a1": {Description: "d", Prompt: "p", Sandbox: config.AgentSandbox{Network: "maybe"}},
		}, "", `odin.yaml: agents.a1.sandbox.network: want on or off`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Agents = tc.agents
			_, err := LoadRoster(RosterOptions{Config: cfg})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestAgentFileDefinitionFields(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".odin", "agents")
	writeAgent(t, filepath.Join(dir, "scout.md"), `---
description: looks around
permission_mode: plan
critical_reminder: READ-ONLY task.
color: Cyan
skills: [go-style]
sandbox: {network: "off"}
---
Look around.
`)
	r, err := LoadRoster(RosterOptions{Config: config.Default(), ConfigDir: root, AgentDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Get("scout")
	if a.PermissionMode != messages.ModePlan || a.CriticalReminder != "READ-ONLY task." || a.Color != "cyan" ||
		len(a.Skills) != 1 || a.Sandbox.Network != "off" {
		t.Errorf("scout = %+v", a)
	}
	writeAgent(t, filepath.Join(dir, "bad.md"), "---\ndescription: d\npermission_mode: sudo\n---\nX.\n")
	_, err = LoadRoster(RosterOptions{Config: config.Default(), ConfigDir: root, AgentDirs: []string{dir}})
	// Checked by the roster after the file parsed, placed at the key's line.
	if want := filepath.Join(".odin", "agents", "bad.md") + `:3: bad: permission_mode: invalid mode "sudo"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestEffectiveMode(t *testing.T) {
	plan := &AgentDefinition{PermissionMode: messages.ModePlan}
	for _, tc := range []struct {
		def  *AgentDefinition
		in   messages.Mode
		want messages.Mode
	}{
		{plan, messages.ModeEdit, messages.ModePlan},
		{plan, messages.ModeAsk, messages.ModeAsk},
		{&AgentDefinition{}, messages.ModeEdit, messages.ModeEdit},
		{&AgentDefinition{PermissionMode: messages.ModeEdit}, messages.ModePlan, messages.ModePlan},
	} {
		if got := EffectiveMode(tc.def, tc.in); got != tc.want {
			t.Errorf("EffectiveMode(%q, %q) = %q, want %q", tc.def.PermissionMode, tc.in, got, tc.want)
		}
	}
}
