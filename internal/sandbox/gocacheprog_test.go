package sandbox

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeGoCacheLayers: a get finds an entry of the read-only lower
// cache in place, a put lands in the upper cache only, and a put whose body
// is not what its output ID says is refused without writing anything.
func TestServeGoCacheLayers(t *testing.T) {
	lower, upper := t.TempDir(), t.TempDir()
	action := sha256.Sum256([]byte("action one"))
	body := []byte("compiled package bytes")
	out := sha256.Sum256(body)
	if _, err := goCachePut(lower, action[:], out[:], body); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, lower)

	newAction := sha256.Sum256([]byte("action two"))
	newBody := []byte("new object")
	newOut := sha256.Sum256(newBody)
	badAction := sha256.Sum256([]byte("action three"))
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.Encode(goCacheRequest{ID: 1, Command: "get", ActionID: action[:]})
	enc.Encode(goCacheRequest{ID: 2, Command: "get", ActionID: newAction[:]})
	enc.Encode(goCacheRequest{ID: 3, Command: "put", ActionID: newAction[:], OutputID: newOut[:], BodySize: int64(len(newBody))})
	enc.Encode(newBody)
	enc.Encode(goCacheRequest{ID: 4, Command: "get", ActionID: newAction[:]})
	enc.Encode(goCacheRequest{ID: 5, Command: "put", ActionID: badAction[:], OutputID: out[:], BodySize: 4})
	enc.Encode([]byte("evil"))
	enc.Encode(goCacheRequest{ID: 6, Command: "close"})
	var outBuf bytes.Buffer
	if err := serveGoCache(lower, upper, &in, &outBuf); err != nil {
		t.Fatal(err)
	}
	res := map[int64]goCacheResponse{}
	sc := bufio.NewScanner(&outBuf)
	first := true
	for sc.Scan() {
		var r goCacheResponse
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if first {
			if fmt.Sprint(r.KnownCommands) != "[get put close]" {
				t.Errorf("first response %+v; want the known commands", r)
			}
			first = false
			continue
		}
		res[r.ID] = r
	}
	if r := res[1]; r.Miss || !bytes.Equal(r.OutputID, out[:]) || r.Size != int64(len(body)) || !strings.HasPrefix(r.DiskPath, lower) {
		t.Errorf("get of the lower entry = %+v; want a hit in %s", r, lower)
	} else if got, _ := os.ReadFile(r.DiskPath); !bytes.Equal(got, body) {
		t.Errorf("lower hit's file holds %q", got)
	}
	if !res[2].Miss {
		t.Errorf("get of an unknown action = %+v; want a miss", res[2])
	}
	if r := res[3]; r.Err != "" || !strings.HasPrefix(r.DiskPath, upper) {
		t.Errorf("put = %+v; want it stored under %s", r, upper)
	}
	if r := res[4]; r.Miss || !strings.HasPrefix(r.DiskPath, upper) {
		t.Errorf("get after put = %+v; want a hit in the upper cache", r)
	}
	if r := res[5]; r.Err == "" {
		t.Errorf("put of a body that is not its output ID = %+v; want an error", r)
	}
	if _, ok := res[6]; !ok {
		t.Error("close was not answered")
	}
	if after := snapshot(t, lower); after != before {
		t.Errorf("the lower cache changed:\nbefore %s\nafter  %s", before, after)
	}
	if _, _, _, _, ok := goCacheLookup(upper, badAction[:]); ok {
		t.Error("the refused put left an entry in the upper cache")
	}
}

func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		fmt.Fprintf(&b, "%s %d %d;", strings.TrimPrefix(p, dir), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	return b.String()
}

// TestSandboxedGoBuildStartsWarm: a go build in the sandbox reuses what the
// user's own build cache holds (the standard library), so its private cache
// gets only the project's own objects; and a command cannot write into the
// user's cache (the canary it tries to plant never appears).
func TestSandboxedGoBuildStartsWarm(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	gc, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil || strings.TrimSpace(string(gc)) == "off" {
		t.Skip("no Go build cache here")
	}
	userCache := strings.TrimSpace(string(gc))
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			write(t, filepath.Join(p.root, "go.mod"), "module example.com/warm\n\ngo 1.22\n")
			write(t, filepath.Join(p.root, "main.go"), "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n)\n\nfunc main() { fmt.Fprintln(os.Stdout, strings.ToUpper(\"warm\")) }\n")
			// The user's own build of the project fills their cache, as
			// working on it outside Odin would.
			warm := exec.Command(goBin, "build", "-o", os.DevNull, ".")
			warm.Dir, warm.Env = p.root, append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOCACHE="+userCache)
			if out, err := warm.CombinedOutput(); err != nil {
				t.Fatalf("warming the user's cache: %v\n%s", err, out)
			}
			env := append(baseEnv(), "GOCACHE="+userCache, "GOFLAGS=-mod=mod -buildvcs=false", "GOTOOLCHAIN=local")
			l := p.launcher(mode, env)
			canary := filepath.Join(userCache, fmt.Sprintf("odin-canary-%d", time.Now().UnixNano()))
			t.Cleanup(func() { os.Remove(canary) })
			out, err := run(t, l, true, fmt.Sprintf("echo planted > %q; go build -o %q . && echo built", canary, filepath.Join(p.root, "src", "warm")))
			if err != nil || !strings.Contains(out, "built") {
				t.Fatalf("sandboxed go build: %v\n%s", err, out)
			}
			if _, err := os.Stat(canary); err == nil {
				t.Fatalf("a sandboxed command wrote %s into the user's build cache", canary)
			}
			entries := 0
			filepath.WalkDir(filepath.Join(CacheDirFor(p.state, p.root), "go-build"), func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, "-a") {
					entries++
				}
				return nil
			})
			// fmt, os and strings pull in some 40 packages; started cold the
			// private cache would hold an entry for each.
			if entries > 10 {
				t.Errorf("the private cache got %d action entries: the build did not read the user's cache", entries)
			}
			t.Logf("%s: %d action entries written to the private cache", mode, entries)
		})
	}
}
