package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestConfigFlagValueIsAUsageLine runs commands whose flag sets a config
// key to a value the configuration refuses: the problem names the flag
// and the value as typed, the command once and its --help, exit 2, in
// place of config's "odin: flags: mode: ..." (the key, not the flag).
func TestConfigFlagValueIsAUsageLine(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, dir)
	}
	t.Setenv("ODIN_MODE", "")
	t.Setenv("ODIN_MAX_TURNS", "")
	tests := []struct {
		args []string
		path string
		want string
	}{
		{[]string{"run", "--mode", "bogus", "x"}, "odin run", `--mode "bogus": must be one of ask, plan, edit`},
		{[]string{"--mode", "bogus"}, "odin", `--mode "bogus": must be one of ask, plan, edit`},
		{[]string{"sessions", "--log-level", "loud"}, "odin sessions", `--log-level "loud": must be one of debug, info, warn, error`},
		{[]string{"agents", "--model", " "}, "odin agents", `--model " ": must be set: a model id, e.g. gpt-4o`},
		{[]string{"run", "--max-turns", "-2", "--mode", "bogus", "x"}, "odin run",
			`--mode "bogus": must be one of ask, plan, edit; --max-turns "-2": must be positive`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(append([]string{"-C", dir}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr.String())
			}
			checkUsageLine(t, tt.path, stderr.String())
			want := tt.path + ": " + tt.want + " (see " + tt.path + " --help)\n"
			if stderr.String() != want {
				t.Errorf("stderr = %q, want %q", stderr.String(), want)
			}
			if strings.Contains(stderr.String(), "flags:") || strings.Contains(stderr.String(), "(got ") {
				t.Errorf("still config's wording: %q", stderr.String())
			}
		})
	}
}

// TestEveryConfigFlagIsNamed sets every flag that sets a config key: each
// key has its flag in configFlags, and that flag exists, so a problem
// with its value is never told by the key alone.
func TestEveryConfigFlagIsNamed(t *testing.T) {
	g := &globalFlags{model: "m", small: "s", mode: "ask", maxTurns: 3, maxUSD: 1,
		logFile: "f", logLevel: "info", store: "odin.db"}
	known := map[string]bool{}
	for _, c := range allCommands(newRootCmd(nil, nil, nil, false)) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { known["--"+f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { known["--"+f.Name] = true })
	}
	typed := g.typedFlags()
	if len(typed) != len(configFlags) {
		t.Errorf("typedFlags sets %d keys, configFlags names %d", len(typed), len(configFlags))
	}
	for key := range typed {
		name, ok := configFlags[key]
		if !ok {
			t.Errorf("%s: no flag in configFlags", key)
		} else if !known[name] {
			t.Errorf("%s: configFlags names %s, which no command has", key, name)
		}
	}
}
