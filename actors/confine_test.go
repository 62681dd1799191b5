package actors

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// A brief that names files confines Code's writes to them: the write tool
// refuses any other file, which stays unchanged.
func TestCodeConfinedToNamedFiles(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	other := filepath.Join(root, "other.go")
	if err := os.WriteFile(other, []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := policy.NewGuard(root, policy.GuardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var def *AgentDefinition
	for _, a := range Builtins() {
		if a.Name == "code" {
			def = a
		}
	}
	d := &messages.Delegate{TaskID: "t1", Agent: "code", Mode: messages.ModeEdit}
	namedFiles([]string{filepath.Join(root, "named.go"), "pkg/*.go", " "})(d)
	guard := confinedGuard(root, def, d, g.ForAgent("code", "t1"))
	env := &tool.Env{Root: root, Agent: "code", AgentID: "t1", Mode: "edit", Reads: tool.NewReadState(), Guard: guard}
	write := tools.NewWriteFile()
	for _, tc := range []struct {
		path string
		ok   bool
	}{{filepath.Join(root, "named.go"), true}, {filepath.Join(root, "pkg", "a.go"), true}, {other, false}} {
		res, err := write.Run(t.Context(), env, []byte(`{"file_path":"`+tc.path+`","content":"package p\n// changed\n"}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError == tc.ok {
			t.Errorf("WriteFile %s: IsError=%v, want %v (%s)", tc.path, res.IsError, !tc.ok, res.Output)
		}
	}
	if b, _ := os.ReadFile(other); string(b) != "package p\n" {
		t.Errorf("other.go was changed: %q", b)
	}
	// Without named files, Code writes what the session allows.
	if g2 := confinedGuard(root, def, &messages.Delegate{}, g); g2 != tool.PathGuard(g) {
		t.Error("a brief without files must leave the guard alone")
	}
}
