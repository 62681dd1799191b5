package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// odinProject is a project directory with its own state and config
// directories, and a way to run the built odin binary in it.
type odinProject struct {
	t    *testing.T
	work string // holds proj/, outside/, .state/, .config/
	proj string
	env  []string
}

func newOdinProject(t *testing.T) *odinProject {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := &odinProject{t: t, work: work, proj: filepath.Join(work, "proj")}
	for _, d := range []string{p.proj, filepath.Join(work, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.env = append(os.Environ(), "OPENAI_API_KEY=", "NO_COLOR=1", "HOME="+filepath.Join(work, ".home"),
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	return p
}

// withModel points odin at a scripted model server.
func (p *odinProject) withModel(srv *llmtest.Server) *odinProject {
	q := *p
	q.env = append(append([]string(nil), p.env...), "OPENAI_BASE_URL="+srv.URL())
	return &q
}

// odinBinary is the binary under test: the one built for this run, or
// $ODIN_E2E_BIN, to show that an attack test fails against another build
// (e.g. one without the fix).
func odinBinary() string {
	if b := os.Getenv("ODIN_E2E_BIN"); b != "" {
		return b
	}
	return filepath.Join(binDir, "odin")
}

func (p *odinProject) cmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, odinBinary(), args...)
	cmd.Dir, cmd.Env = p.proj, p.env
	return cmd
}

// odin runs odin to completion and returns its combined output.
func (p *odinProject) odin(args ...string) (string, error) {
	out, err := p.cmd(p.t.Context(), args...).CombinedOutput()
	return string(out), err
}

func (p *odinProject) path(rel string) string { return filepath.Join(p.work, rel) }

func (p *odinProject) write(rel, content string) {
	p.t.Helper()
	path := p.path(rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// snapshotDir maps every file under dir to its content (symlinks to their
// target), so a test can assert that nothing there changed.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			out[rel] = "-> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[rel] = string(data)
		case info.IsDir():
			out[rel+"/"] = ""
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func assertSameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("%s changed:\nbefore %v\nafter  %v", what, before, after)
	}
}

func toolJSON(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Attack: a background process flips a project directory between a real
// directory and a symlink to a directory outside the project while odin
// writes into it. No write may ever land outside the project.
func TestFilesSymlinkSwapRaceCannotRedirectWrites(t *testing.T) {
	p := newOdinProject(t)
	p.write("outside/f", "canary")
	outside := snapshotDir(t, p.path("outside"))
	dir := filepath.Join(p.proj, "dir")
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Each state holds for up to a millisecond: about the time
		// between odin's check of the path and its write.
		rng := rand.New(rand.NewPCG(3, 4))
		for i := 0; ctx.Err() == nil; i++ {
			os.RemoveAll(dir)
			if i%2 == 0 {
				os.Mkdir(dir, 0o755)
			} else {
				os.Symlink(p.path("outside"), dir)
			}
			time.Sleep(time.Duration(rng.IntN(1000)) * time.Microsecond)
		}
	}()
	wrote := 0
	for i := range 100 {
		in := toolJSON(map[string]any{"file_path": filepath.Join(dir, "f"), "content": fmt.Sprintf("write %d\n", i)})
		if _, err := p.odin("tool", "WriteFile", in); err == nil {
			wrote++
		}
	}
	cancel()
	wg.Wait()
	assertSameTree(t, "the directory outside the project", outside, snapshotDir(t, p.path("outside")))
	t.Logf("%d of 100 writes succeeded while the directory flipped", wrote)
}

// Attack: after a change set, a directory it wrote into is swapped for a
// symlink to a directory outside the project. `odin undo` must neither
// restore nor delete through it, with or without --force.
func TestFilesUndoRefusesSymlinkedDirectory(t *testing.T) {
	p := newOdinProject(t)
	p.write("proj/sub/edited.txt", "before\n")
	p.write("outside/edited.txt", "outside edited\n")
	p.write("outside/created.txt", "outside created\n")
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("ReadFile", map[string]any{"file_path": filepath.Join(p.proj, "sub", "edited.txt")})),
		llmtest.Calls(
			llmtest.Call("WriteFile", map[string]any{"file_path": filepath.Join(p.proj, "sub", "edited.txt"), "content": "odin\n"}),
			llmtest.Call("WriteFile", map[string]any{"file_path": filepath.Join(p.proj, "sub", "created.txt"), "content": "odin\n"}),
		),
		llmtest.Reply("Done."),
	)
	q := p.withModel(llmtest.NewServer(t, script))
	// The run exits non-zero: a two-file change needs a review this script
	// does not provide. The change set is written and checkpointed anyway.
	out, _ := q.odin("run", "change the files")
	if got, _ := os.ReadFile(filepath.Join(p.proj, "sub", "created.txt")); string(got) != "odin\n" {
		t.Fatalf("the change set did not run: created.txt = %q\n%s", got, out)
	}
	if err := os.Rename(filepath.Join(p.proj, "sub"), p.path("moved-sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p.path("outside"), filepath.Join(p.proj, "sub")); err != nil {
		t.Fatal(err)
	}
	outside := snapshotDir(t, p.path("outside"))
	for _, args := range [][]string{{"undo"}, {"undo", "--force"}} {
		out, err := p.odin(args...)
		if err == nil {
			t.Errorf("odin %s through a symlinked directory succeeded:\n%s", strings.Join(args, " "), out)
		}
		t.Logf("odin %s:\n%s", strings.Join(args, " "), out)
	}
	assertSameTree(t, "the directory outside the project", outside, snapshotDir(t, p.path("outside")))
}

// Attack: a project ships .odin/plans as a symlink to a directory outside
// it; plan mode must not write the plan there.
func TestFilesPlanModeDoesNotFollowSymlinkedPlansDir(t *testing.T) {
	p := newOdinProject(t)
	p.write("outside/keep", "canary")
	if err := os.MkdirAll(filepath.Join(p.proj, ".odin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p.path("outside"), filepath.Join(p.proj, ".odin", "plans")); err != nil {
		t.Fatal(err)
	}
	outside := snapshotDir(t, p.path("outside"))
	script := llmtest.NewScript().Add("orchestrator", llmtest.Reply("1. Add the flag.\n2. Test it."))
	q := p.withModel(llmtest.NewServer(t, script))
	out, _ := q.odin("run", "--mode", "plan", "plan the flag")
	assertSameTree(t, "the directory outside the project", outside, snapshotDir(t, p.path("outside")))
	t.Logf("odin run --mode plan:\n%s", out)
}

// The test binary doubles as a measuring wrapper. A child's ru_maxrss
// carries over the memory of the process that forked it (Go forks with
// CLONE_VM, and Linux keeps the high-water mark across exec), so the test
// process, which holds the big inputs, cannot measure odin directly; a
// fresh, small copy of the test binary starts odin instead and writes
// odin's own peak RSS to the file named by rssOutEnv.
const rssOutEnv = "ODIN_E2E_RSS_OUT"

func init() {
	out := os.Getenv(rssOutEnv)
	if out == "" {
		return
	}
	args := os.Args[len(os.Args)-1:]
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
			break
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	err := cmd.Run()
	code := 0
	if err != nil {
		code = 1
	}
	var kb int64 = -1
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		kb = ru.Maxrss // Linux reports kilobytes
	}
	os.WriteFile(out, fmt.Appendf(nil, "%d", kb), 0o600)
	os.Exit(code)
}

// maxRSS runs odin with args through the measuring wrapper and returns its
// peak resident set size in bytes and its combined output.
func maxRSS(t *testing.T, p *odinProject, stdin string, args ...string) (int64, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rssFile := filepath.Join(t.TempDir(), "rss")
	cmd := exec.CommandContext(ctx, self, append([]string{"-test.run=^$", "--", odinBinary()}, args...)...)
	cmd.Dir, cmd.Env = p.proj, append(append([]string(nil), p.env...), rssOutEnv+"="+rssFile)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	var kb int64
	data, err := os.ReadFile(rssFile)
	if _, serr := fmt.Sscan(string(data), &kb); err != nil || serr != nil || kb < 0 {
		t.Fatalf("the wrapper measured nothing (%v):\n%s", err, out.String())
	}
	return kb << 10, out.String()
}

// memoryBudget is the most one tool call may make odin's process hold.
const memoryBudget = 256 << 20

// Each attack used to exhaust memory: a Grep over a 1 GiB file, a GitDiff
// of an untracked symlink to /dev/zero, a 50 MB WriteFile. The peak RSS of
// the odin process stays under the budget, and each still answers.
func TestFilesToolMemoryBounds(t *testing.T) {
	p := newOdinProject(t)
	huge := filepath.Join(p.proj, "huge.log")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The biggest file Grep still searches: one 15 MiB line that matches.
	p.write("proj/long.txt", "needle"+strings.Repeat("x", 15<<20)+"\n")
	if out, err := exec.Command("git", "-C", p.proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(p.proj, "zero")); err != nil {
		t.Fatal(err)
	}
	// Lines of "a": JSON doubles each newline ("\\n"), so the input is 1.5
	// times the content.
	writeOf := func(name string, size int) string {
		return toolJSON(map[string]any{"file_path": filepath.Join(p.proj, name), "content": strings.Repeat("a\n", size/2)})
	}

	cases := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"Grep 1 GiB file", []string{"tool", "Grep", toolJSON(map[string]any{"pattern": "needle", "path": huge, "output_mode": "content"})}, "", ""},
		{"Grep tree", []string{"tool", "Grep", toolJSON(map[string]any{"pattern": "needle", "path": p.proj, "output_mode": "content"})}, "", "long.txt"},
		{"GitDiff /dev/zero stat", []string{"tool", "GitDiff", `{"include_untracked":true,"stat_only":true}`}, "", "zero (symlink to /dev/zero)"},
		{"GitDiff /dev/zero", []string{"tool", "GitDiff", `{"include_untracked":true}`}, "", "+/dev/zero"},
		{"WriteFile 50 MB", []string{"tool", "WriteFile", "-"}, writeOf("big.txt", 50<<20), "16 MiB"},
		{"WriteFile 10 MiB + 2", []string{"tool", "WriteFile", "-"}, writeOf("over.txt", 10<<20+2), "more than the 10.0 MiB"},
		{"WriteFile 9 MiB", []string{"tool", "WriteFile", "-"}, writeOf("ok.txt", 9<<20), "Created"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rss, out := maxRSS(t, p, c.stdin, c.args...)
			t.Logf("%s: peak RSS %d MiB", c.name, rss>>20)
			if rss > memoryBudget {
				t.Errorf("peak RSS %d MiB, over the %d MiB budget", rss>>20, memoryBudget>>20)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("output lacks %q:\n%.2000s", c.want, out)
			}
		})
	}
	for _, name := range []string{"big.txt", "over.txt"} {
		if _, err := os.Stat(filepath.Join(p.proj, name)); !os.IsNotExist(err) {
			t.Errorf("an oversized WriteFile created %s: %v", name, err)
		}
	}
}

// Transcripts, logs and the database are private to their user, also
// when an older version left them readable by others.
func TestFilesStateModes(t *testing.T) {
	p := newOdinProject(t)
	state := p.path(".state/odin")
	if out, err := p.odin("sessions"); err != nil {
		t.Fatalf("odin sessions: %v\n%s", err, out)
	}
	check := func(when string) {
		t.Helper()
		want := map[string]os.FileMode{state: 0o700, filepath.Join(state, "odin.db"): 0o600, filepath.Join(state, "odin.log"): 0o600}
		for _, suffix := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(filepath.Join(state, "odin.db"+suffix)); err == nil {
				want[filepath.Join(state, "odin.db"+suffix)] = 0o600
			}
		}
		for path, mode := range want {
			fi, err := os.Stat(path)
			if err != nil {
				t.Errorf("%s: %v", when, err)
				continue
			}
			if fi.Mode().Perm() != mode {
				t.Errorf("%s: %s has mode %v, want %v", when, path, fi.Mode().Perm(), mode)
			}
		}
	}
	check("fresh state")
	for _, path := range []string{filepath.Join(state, "odin.db"), filepath.Join(state, "odin.log")} {
		os.Chmod(path, 0o644)
	}
	os.Chmod(state, 0o755)
	if out, err := p.odin("sessions"); err != nil {
		t.Fatalf("odin sessions: %v\n%s", err, out)
	}
	check("state left world-readable by an older version")
}

// Two processes edit one file at once, each appending its own line after
// reading the file; every edit reported successful must be in the file
// (a stale one must fail and say so, never overwrite the other's).
func TestFilesNoLostEditsAcrossProcesses(t *testing.T) {
	p := newOdinProject(t)
	target := filepath.Join(p.proj, "shared.txt")
	p.write("proj/shared.txt", "START\nEND\n")
	const workers, edits = 3, 12
	var mu sync.Mutex
	var succeeded []string
	failed := 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range edits {
				line := fmt.Sprintf("worker %d edit %d", w, i)
				in := toolJSON(map[string]any{"file_path": target, "old_string": "END", "new_string": line + "\nEND"})
				out, err := p.odin("tool", "EditTool", in)
				mu.Lock()
				if err == nil {
					succeeded = append(succeeded, line)
				} else {
					failed++
					if !strings.Contains(out, "changed on disk since you read it") {
						t.Errorf("edit failed for another reason: %s", out)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range succeeded {
		if !bytes.Contains(data, []byte(line+"\n")) {
			t.Errorf("edit %q was reported successful but is not in the file", line)
		}
	}
	if n := bytes.Count(data, []byte("\n")); n != len(succeeded)+2 {
		t.Errorf("the file has %d lines, want %d (2 + one per successful edit)", n, len(succeeded)+2)
	}
	if len(succeeded) == 0 {
		t.Error("no edit succeeded")
	}
	t.Logf("%d edits succeeded, %d were refused as stale", len(succeeded), failed)
}

// An odin run is killed with SIGKILL at random moments of a change set.
// Each time, `odin undo` without --force restores the state from before
// the change (or finds nothing to undo when the kill came before the first
// checkpoint), and never calls Odin's own interrupted change a conflict.
func TestFilesUndoAfterKill(t *testing.T) {
	p := newOdinProject(t)
	const nfiles = 6
	before := map[string]string{}
	var calls []llmtest.ToolCall
	for i := range nfiles {
		rel := fmt.Sprintf("f%d.txt", i)
		path := filepath.Join(p.proj, rel)
		if i%2 == 0 { // even files exist before, odd ones are created
			before[path] = fmt.Sprintf("before %d\n", i)
			p.write("proj/"+rel, before[path])
		}
		calls = append(calls, llmtest.Call("WriteFile", map[string]any{"file_path": path,
			"content": strings.Repeat(fmt.Sprintf("odin %d\n", i), 20_000)}))
	}
	var reads []llmtest.ToolCall
	for path := range before {
		reads = append(reads, llmtest.Call("ReadFile", map[string]any{"file_path": path, "limit": 5}))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	undone, nothing, midway := 0, 0, 0
	for round := range 20 {
		writes := llmtest.Calls(calls...)
		writes.ChunkSize = 1 << 20 // stream the arguments in one piece
		script := llmtest.NewScript().Add("orchestrator",
			llmtest.Calls(reads...),
			writes,
			llmtest.Step{Hold: "never"}, // parked until the kill
		)
		q := p.withModel(llmtest.NewServer(t, script))
		run := q.cmd(t.Context(), "run", "-o", "odin-stream", "rewrite the files")
		stdout, err := run.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, stdout, `"name":"WriteFile"`)
		// The writes take a few milliseconds each (they are synced):
		// kill anywhere from before the first to after the last.
		time.Sleep(time.Duration(rng.IntN(40_000)) * time.Microsecond)
		run.Process.Signal(syscall.SIGKILL)
		_ = run.Wait()

		out, err := p.odin("undo")
		switch {
		case err == nil:
			undone++
			if strings.Contains(out, "interrupted") {
				if midway == 0 {
					t.Logf("undo after a kill between writes:\n%s", out)
				}
				midway++
			}
		case strings.Contains(out, "nothing to undo"):
			nothing++
		default:
			t.Fatalf("round %d: odin undo after kill -9 failed:\n%s", round, out)
		}
		for i := range nfiles {
			path := filepath.Join(p.proj, fmt.Sprintf("f%d.txt", i))
			got, err := os.ReadFile(path)
			want, existed := before[path]
			switch {
			case existed && string(got) != want:
				t.Fatalf("round %d: %s = %.40q after undo, want %q\nundo said:\n%s", round, path, got, want, out)
			case !existed && err == nil:
				t.Fatalf("round %d: %s exists after undo, but the change set created it\nundo said:\n%s", round, path, out)
			}
		}
	}
	t.Logf("%d rounds undone (%d of them killed between writes), %d killed before the first checkpoint", undone, midway, nothing)
	if undone == 0 {
		t.Error("no round was killed mid-change; the test did not test undo")
	}
}

// waitFor reads r until it has seen s.
func waitFor(t *testing.T, r io.Reader, s string) {
	t.Helper()
	var seen strings.Builder
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(seen.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s; output so far:\n%s", s, seen.String())
		}
		n, err := r.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("reading odin's output: %v\n%s", err, seen.String())
		}
	}
}

// A writer killed between creating its temporary file and renaming it
// leaves .NAME.odin-PID-*.tmp behind; the next write in that directory
// removes it.
func TestFilesStaleTempCleanedUp(t *testing.T) {
	p := newOdinProject(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(p.proj, fmt.Sprintf(".a.txt.odin-%d-0badf00d.tmp", dead.Process.Pid))
	p.write("proj/"+filepath.Base(stale), "half a write")
	in := toolJSON(map[string]any{"file_path": filepath.Join(p.proj, "b.txt"), "content": "b\n"})
	if out, err := p.odin("tool", "WriteFile", in); err != nil {
		t.Fatalf("odin tool WriteFile: %v\n%s", err, out)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead writer's temporary file is still there: %v", err)
	}
}
