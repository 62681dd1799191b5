package versionflag_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/versionflag"
)

func TestAsked(t *testing.T) {
	cases := []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, true},
		{[]string{"-v"}, true},
		{[]string{"version"}, true},
		{nil, false},
		{[]string{"--version", "x"}, false},
		{[]string{"run", "--version"}, false},
		{[]string{"--versions"}, false},
		{[]string{"-version"}, false},
	}
	for _, c := range cases {
		if got := versionflag.Asked(c.args); got != c.want {
			t.Errorf("Asked(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

func TestLine(t *testing.T) {
	want := "odin v1.2.3 (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if got := versionflag.Line("v1.2.3"); got != want {
		t.Fatalf("Line = %q, want %q", got, want)
	}
}

// TestVersionBeforeInit builds odin with and without a version set at
// link time and runs `odin --version` with Go's init trace: with one, the
// binary answers before openai-go, protobuf and SQLite initialise; without
// one, main answers (the version then comes from the build information)
// and every package has initialised. Both print the line `odin version`
// prints.
func TestVersionBeforeInit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds odin twice")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build odin with")
	}
	dir := t.TempDir()
	build := func(name string, ldflags string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command(goCmd, "build", "-ldflags", ldflags, "-o", out, "github.com/odin-code/odin/cmd/odin")
		cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		return out
	}
	lateInits := []string{"init github.com/openai/openai-go/v3 ", "init google.golang.org/protobuf/", "init modernc.org/sqlite/lib ", "init github.com/asynkron/protoactor-go/actor "}
	run := func(bin string, args ...string) (stdout, trace string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(cmd.Environ(), "GODEBUG=inittrace=1")
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %v: %v\n%s", bin, args, err, e.String())
		}
		return o.String(), e.String()
	}

	stamped := build("odin-stamped", "-X github.com/odin-code/odin/internal/versionflag.Version=v9.8.7-test")
	for _, arg := range []string{"--version", "-v", "version"} {
		out, trace := run(stamped, arg)
		if want := versionflag.Line("v9.8.7-test"); out != want {
			t.Errorf("odin %s printed %q, want %q", arg, out, want)
		}
		for _, late := range lateInits {
			if strings.Contains(trace, late) {
				t.Errorf("odin %s initialised %q before answering", arg, strings.TrimSpace(late))
			}
		}
	}
	// The other path prints the same line: the cobra command.
	if out, _ := run(stamped, "version", "--help"); !strings.Contains(out, "Print Odin's version") {
		t.Errorf("odin version --help: %q", out)
	}

	plain := build("odin-plain", "")
	out, trace := run(plain, "--version")
	if !strings.HasPrefix(out, "odin ") || !strings.HasSuffix(out, " ("+runtime.Version()+", "+runtime.GOOS+"/"+runtime.GOARCH+")\n") {
		t.Errorf("odin --version without a stamped version printed %q", out)
	}
	if !strings.Contains(trace, lateInits[0]) {
		t.Errorf("without a stamped version main answered before openai-go initialised: the fast path guessed the version")
	}
}
