package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrintAlias(t *testing.T) {
	subs := map[string]bool{"run": true, "sessions": true, "tool": true}
	tests := []struct{ in, want string }{
		{"-p task", "run task"},
		{"--print task -o json", "run task -o json"},
		{"--model m -p task", "run --model m task"},
		{"-c -p go on", "run -c go on"},
		{"task", "task"},
		{"sessions -p", "sessions -p"},
		{"tool X -p", "tool X -p"},
		{"-- -p", "-- -p"},
	}
	for _, tt := range tests {
		got := strings.Join(printAlias(strings.Fields(tt.in), subs), " ")
		if got != tt.want {
			t.Errorf("printAlias(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTaskInput(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
		err   string
	}{
		{"args only, empty pipe", []string{"fix", "it"}, "", "fix it", ""},
		{"args and context", []string{"why?"}, "panic: x\n", "why?\n\nInput piped to odin on stdin:\n```\npanic: x\n```", ""},
		{"stdin is the task", nil, "  do this\n", "do this", ""},
		{"dash reads stdin", []string{"-"}, "do that", "do that", ""},
		{"empty stdin, no args", nil, " \n", "", "stdin was empty"},
		{"blank args", []string{" "}, "", "", "no task given"},
	}
	for _, tt := range tests {
		got, err := taskInput(tt.args, strings.NewReader(tt.stdin))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	// A terminal or /dev/null is no input: the args alone are the task,
	// and nothing at all is a usage error that does not wait.
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	if got, err := taskInput([]string{"task"}, devnull); err != nil || got != "task" {
		t.Errorf("with /dev/null: %q, %v", got, err)
	}
	if _, err := taskInput(nil, devnull); err == nil || !strings.Contains(err.Error(), "no task given") {
		t.Errorf("nothing at all: err = %v", err)
	}
	// A redirected file is input.
	f := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(f, []byte("line"), 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if got, _ := taskInput([]string{"look"}, file); !strings.Contains(got, "line") {
		t.Errorf("a redirected file was not read: %q", got)
	}
}

func TestFenced(t *testing.T) {
	if got := fenced("a ``` b\n````\n"); !strings.HasPrefix(got, "`````\n") || !strings.HasSuffix(got, "\n`````") {
		t.Errorf("fenced = %q", got)
	}
}

func TestAbsolutePaths(t *testing.T) {
	wd, _ := os.Getwd()
	got, err := absolutePaths(`{"file_path":"a/b.go","limit":3,"path":"/abs"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `"file_path":"`+filepath.Join(wd, "a/b.go")+`"`) || !strings.Contains(got, `"path":"/abs"`) || !strings.Contains(got, `"limit":3`) {
		t.Errorf("absolutePaths = %s", got)
	}
	for _, in := range []string{`{"command":"ls"}`, `not json`, `[1]`} {
		if got, _ := absolutePaths(in); got != in {
			t.Errorf("absolutePaths(%s) changed it to %s", in, got)
		}
	}
}
