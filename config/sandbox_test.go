package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSandboxSettings(t *testing.T) {
	tests := []struct {
		project string
		mode    SandboxMode
		widens  []string
		problem string
	}{
		{project: "mode: ask\n", mode: "auto"},
		{project: "permissions:\n\tsandbox: true\n", mode: "auto"},
		{project: "permissions:\n\tsandbox: false\n", mode: "off", widens: []string{"permissions.sandbox"}},
		{project: "permissions:\n\tsandbox: landlock\n", mode: "landlock", widens: []string{"permissions.sandbox"}},
		{project: "permissions:\n\tsandbox: required\n", mode: "required"},
		{project: "permissions:\n\tsandbox: sometimes\n", problem: "permissions.sandbox: must be one of auto, bubblewrap, landlock, required, off"},
		{project: "permissions:\n\tnetwork:\n\t\tallowed_domains: [proxy.golang.org]\n", mode: "auto",
			widens: []string{"permissions.network.allowed_domains"}},
		{project: "permissions:\n\tnetwork:\n\t\tagents:\n\t\t\ttest:\n\t\t\t\tallowed_domains: [\"*.npmjs.org\"]\n\t\t\tcode:\n\t\t\t\tallowed_domains: []\n", mode: "auto",
			widens: []string{"permissions.network.agents.test.allowed_domains"}},
		{project: "permissions:\n\tenv: [AWS_PROFILE, MY_*]\n", mode: "auto", widens: []string{"permissions.env"}},
		{project: "permissions:\n\tnetwork:\n\t\tallowed_domains: [\"https://x.org/\"]\n", problem: "permissions.network.allowed_domains[0]: must be a host name"},
		{project: "permissions:\n\tenv: [\"A=B\"]\n", problem: "permissions.env[0]: must be a variable name"},
	}
	for _, tt := range tests {
		f := newFixture(t, "", tt.project)
		cfg, src, err := Load(f.options(map[string]string{"OPENAI_API_KEY": "sk-x"}, nil))
		if tt.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("%q: err %v, want %q", tt.project, err, tt.problem)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.project, err)
			continue
		}
		if cfg.Permissions.Sandbox != tt.mode {
			t.Errorf("%q: sandbox %q, want %q", tt.project, cfg.Permissions.Sandbox, tt.mode)
		}
		if diff := cmp.Diff(tt.widens, src.ProjectWidens()); diff != "" {
			t.Errorf("%q: widens (-want +got):\n%s", tt.project, diff)
		}
	}
}

// TestSandboxLimits: sizes in the units users write, a share of the
// machine's memory, off, and errors naming the key.
func TestSandboxLimits(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{{"4GiB", 4 << 30}, {"512MiB", 512 << 20}, {"1.5G", 3 << 29}, {"100", 100}, {"50%", 1 << 29}, {"off", 0}, {"0", 0}, {"", 0}} {
		got, err := SizeBytes(c.in, 1<<30)
		if err != nil || got != c.want {
			t.Errorf("SizeBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"lots", "-1G", "150%", "4 parsecs", "1e30T"} {
		if _, err := SizeBytes(bad, 1<<30); err == nil {
			t.Errorf("SizeBytes(%q) took it", bad)
		}
	}
	v := &validator{}
	v.sandboxLimits(SandboxLimits{Processes: -1, Memory: "lots", CPUTime: -time.Second})
	var got []string
	for _, p := range v.problems {
		got = append(got, p.Key)
	}
	want := []string{"permissions.sandbox_limits.processes", "permissions.sandbox_limits.memory", "permissions.sandbox_limits.cpu_time"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if DefaultSandboxLimits().Processes < 4096 {
		t.Errorf("default processes %d: a normal build must never reach it", DefaultSandboxLimits().Processes)
	}
}
