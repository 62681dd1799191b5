package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGrantedWritable: Spec.Writable makes a directory writable for one
// process that otherwise gets a read-only disk (an MCP server): a write
// lands there, in a data directory under the protected state directory,
// and under the private /tmp, but nowhere else — not in the read-only
// root, not beside the granted directory, not in .git inside a granted
// parent of the root.
func TestGrantedWritable(t *testing.T) {
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			l := p.launcher(mode, baseEnv())
			granted := filepath.Join(p.outside, "granted")
			data := filepath.Join(p.state, "mcp-data", "memory")
			tmpDir, err := os.MkdirTemp("/tmp", "odin-granted-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(tmpDir) })
			// Granted beneath a directory only kept visible (an MCP
			// server's program dir under /tmp): still writable.
			tmpSub := filepath.Join(tmpDir, "sub")
			for _, d := range []string{granted, data, tmpSub} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			try := func(writable []string, file string) error {
				t.Helper()
				proc, err := l.Command(t.Context(), Spec{Args: []string{"bash", "-c", `echo landed > "$1"`, "sh", file},
					Writable: writable, Visible: []string{tmpDir}})
				if err != nil {
					t.Fatal(err)
				}
				defer proc.Release()
				var out bytes.Buffer
				proc.Stdout, proc.Stderr = &out, &out
				err = proc.Run()
				if err != nil {
					t.Logf("write %s: %v: %s", file, err, out.String())
				}
				return err
			}
			grants := []string{granted, data, tmpSub}
			for _, f := range []string{filepath.Join(granted, "a.txt"), filepath.Join(data, "memory.jsonl"), filepath.Join(tmpSub, "t.txt")} {
				if err := try(grants, f); err != nil {
					t.Errorf("write to %s in a granted directory failed", f)
				}
				if b, _ := os.ReadFile(f); string(b) != "landed\n" {
					t.Errorf("%s holds %q on the host, want the write", f, b)
				}
			}
			denied := []string{
				filepath.Join(p.outside, "beside.txt"),   // next to the granted directory
				filepath.Join(p.root, "src", "root.txt"), // the read-only root
				filepath.Join(p.state, "planted"),        // the state directory around the data directory
			}
			for _, f := range denied {
				if err := try(grants, f); err == nil {
					t.Errorf("write to %s succeeded", f)
				}
			}
			// A granted parent of the root leaves the root's protected
			// paths read-only.
			if err := try([]string{filepath.Dir(p.root)}, filepath.Join(p.root, ".git", "config")); err == nil {
				t.Errorf("a granted parent of the root made .git/config writable")
			}
			if b, _ := os.ReadFile(filepath.Join(p.root, ".git", "config")); string(b) != "[core]\n" {
				t.Errorf(".git/config changed: %q", b)
			}
			for _, f := range denied {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%s was created", f)
				}
			}
		})
	}
}

// TestVisibleSymlinkInVisibleDir: a program reached through a symlink
// under /tmp, whose directory is kept visible too (an MCP server started
// as /tmp/x/server -> the real binary), runs: binding onto the symlink
// the directory's bind already shows would make bubblewrap fail.
func TestVisibleSymlinkInVisibleDir(t *testing.T) {
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			l := p.launcher(mode, baseEnv())
			dir, err := os.MkdirTemp("/tmp", "odin-visible-link-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			real, err := filepath.EvalSymlinks("/bin/echo")
			if err != nil {
				t.Skip("no /bin/echo")
			}
			link := filepath.Join(dir, "server")
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			proc, err := l.Command(t.Context(), Spec{Args: []string{link, "started"}, Visible: []string{link, real, dir}})
			if err != nil {
				t.Fatal(err)
			}
			defer proc.Release()
			out, err := proc.CombinedOutput()
			if err != nil || string(out) != "started\n" {
				t.Errorf("%s: %v %q", link, err, out)
			}
		})
	}
}
