package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClaudeFlagsApply(t *testing.T) {
	cases := []struct {
		name    string
		f       claudeFlags
		want    globalFlags
		wantErr string
	}{
		{name: "bash rules become patterns",
			f:    claudeFlags{inputFormat: "text", allowedTools: []string{"Bash(git diff:*)", "Read", "Bash(go test ./...)", "mcp__fs__read"}, disallowedTools: []string{"Bash(curl:*)"}},
			want: globalFlags{allow: []string{"git diff *", "go test ./..."}, forbid: []string{"curl *"}}},
		{name: "plan", f: claudeFlags{inputFormat: "text", permissionMode: "plan"}, want: globalFlags{mode: "plan"}},
		{name: "bypass is yolo", f: claudeFlags{inputFormat: "text", permissionMode: "bypassPermissions"}, want: globalFlags{yolo: true}},
		{name: "acceptEdits", f: claudeFlags{inputFormat: "text", permissionMode: "acceptEdits"}, want: globalFlags{mode: "edit"}},
		{name: "append", f: claudeFlags{inputFormat: "text", appendSystem: "Be terse."}, want: globalFlags{appendSystem: "Be terse."}},
		{name: "unknown mode", f: claudeFlags{inputFormat: "text", permissionMode: "auto"}, wantErr: "--permission-mode must be"},
		{name: "unknown tool", f: claudeFlags{inputFormat: "text", allowedTools: []string{"Frobnicate"}}, wantErr: `--allowedTools "Frobnicate"`},
		{name: "everything", f: claudeFlags{inputFormat: "text", allowedTools: []string{"Bash"}}, wantErr: ""},
		{name: "bash(*) is not a quiet yolo", f: claudeFlags{inputFormat: "text", allowedTools: []string{"Bash()"}}, wantErr: "would allow every command"},
		{name: "a tool cannot be refused here", f: claudeFlags{inputFormat: "text", disallowedTools: []string{"WebFetch"}}, wantErr: "agents.NAME.disallowed_tools"},
		{name: "input format", f: claudeFlags{inputFormat: "yaml"}, wantErr: "--input-format must be"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g globalFlags
			err := c.f.apply(&g)
			if c.name == "everything" {
				// A bare "Bash" is no Claude rule Odin maps: refused, not widened.
				if err == nil || len(g.allow) != 0 {
					t.Fatalf("bare Bash: err %v, allow %v", err, g.allow)
				}
				return
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, g, cmp.AllowUnexported(globalFlags{})); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStreamInput(t *testing.T) {
	for line, want := range map[string]string{
		`{"type":"user","message":{"role":"user","content":"hi"}}`:                                                    "hi",
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}`: "a\nb",
	} {
		got, err := parseStreamInput([]byte(line))
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", line, got, err, want)
		}
	}
	for _, bad := range []string{
		`nope`,
		`{"type":"assistant","message":{"role":"assistant","content":"x"}}`,
		`{"type":"user","message":{"role":"user","content":""}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"image","source":{}}]}}`,
		`{"type":"user","message":{"role":"user","content":42}}`,
	} {
		if got, err := parseStreamInput([]byte(bad)); err == nil {
			t.Errorf("%s: accepted as %q", bad, got)
		}
	}
}
