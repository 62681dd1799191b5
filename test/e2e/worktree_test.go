package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// wtGit runs git in dir for the test's own setup and checks.
func wtGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// tree maps every file of root but .git to its mode and content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".state" || d.Name() == ".config") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			fi, _ := d.Info()
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel] = fi.Mode().String() + " " + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const shopGo = `package shop

// Total returns the sum of the prices.
func Total(prices []int) int {
	sum := 0
	for _, p := range prices {
		sum += p
	}
	return sum
}

// Count returns how many prices there are.
func Count(prices []int) int {
	return len(prices)
}
`

// edit is one isolated Code task of the script: it reads shop.go, then
// replaces old with new in it.
func editTask(root, marker, old, new string, last llmtest.Step) []llmtest.Step {
	todo := func(status string) llmtest.ToolCall {
		return llmtest.Call("TodoWrite", map[string]any{"todos": []map[string]any{{"id": "1", "content": marker, "status": status}}})
	}
	last.When = marker
	return []llmtest.Step{
		{When: marker, ToolCalls: []llmtest.ToolCall{llmtest.Call("ReadFile", map[string]any{"file_path": root + "/shop.go"}), todo("in_progress")}},
		{When: marker, ToolCalls: []llmtest.ToolCall{llmtest.Call("EditTool", map[string]any{"file_path": root + "/shop.go", "old_string": old, "new_string": new}), todo("in_progress")}},
		last,
	}
}

func report(summary string) llmtest.Step {
	return llmtest.Calls(llmtest.Call("Report", map[string]any{"task": summary, "summary": summary}))
}

// Four Code specialists with isolation: worktree edit overlapping files at
// once: the non-conflicting patches land (two edits of shop.go merged,
// one new file), the one that changes the line another already changed
// comes back as a conflict naming shop.go, the gates see one change set of
// both files, `odin undo` restores the project byte for byte, and no
// worktree is left. Then an odin killed with SIGKILL while specialists
// work in their worktrees leaves orphans, which the next start removes.
func TestIsolatedWritersWorktrees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "shop")
	for name, content := range map[string]string{
		"go.mod": "module shop\n\ngo 1.22\n", "shop.go": shopGo, ".gitignore": "*.log\n",
		"shop_test.go": "package shop\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n\tif Total([]int{1, 2}) != 3 {\n\t\tt.Fatal(\"Total\")\n\t}\n}\n",
	} {
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wtGit(t, root, "init", "-q", "-b", "main")
	wtGit(t, root, "add", "-A")
	wtGit(t, root, "commit", "-q", "-m", "init")
	// Uncommitted work the specialists must see: an untracked note.
	if err := os.WriteFile(filepath.Join(root, "NOTES.txt"), []byte("draft: not committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, root)

	agent := func(marker string) llmtest.ToolCall {
		return llmtest.Call("agent", map[string]any{"agent": "code", "description": marker, "isolation": "worktree",
			"prompt": marker + ": change " + root + "/shop.go as instructed"})
	}
	script := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(agent("TASK-A"), agent("TASK-B"), agent("TASK-C"), agent("TASK-D")),
			llmtest.Step{When: "status conflict", Text: "Three changes landed; TASK-D conflicted."}).
		Add("code", editTask(root, "TASK-A", "// Total returns the sum of the prices.", "// Total returns the sum of the prices, in cents.", report("A done"))...).
		Add("code", editTask(root, "TASK-B", "// Count returns how many prices there are.", "// Count returns the number of prices.", report("B done"))...).
		Add("code",
			llmtest.Step{When: "TASK-C", ToolCalls: []llmtest.ToolCall{llmtest.Call("WriteFile", map[string]any{"file_path": root + "/discount.go",
				"content": "package shop\n\n// Discount is a percentage.\ntype Discount int\n"}),
				llmtest.Call("TodoWrite", map[string]any{"todos": []map[string]any{{"id": "1", "content": "TASK-C", "status": "in_progress"}}})}},
			llmtest.Step{When: "TASK-C", ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{"task": "C", "summary": "C done"})}}).
		// D changes A's line; its report comes last, so it meets A's
		// change already in the project.
		Add("code", editTask(root, "TASK-D", "// Total returns the sum of the prices.", "// Total adds the prices up.",
			llmtest.Step{Latency: llmtest.Duration(3 * time.Second), ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{"task": "D", "summary": "D done"})}})...).
		Add("review", llmtest.Calls(llmtest.Call("Report", map[string]any{"files_reviewed": []string{"shop.go", "discount.go"}, "issues": []any{},
			"overall_score": 8, "summary": "Fine.", "approved": true}))).
		Add("synthesis", llmtest.Reply("Three changes landed; TASK-D conflicted on shop.go. The gates passed."))
	srv := llmtest.NewServer(t, script)
	state := filepath.Join(work, ".state")
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1",
		"XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+filepath.Join(work, ".config"), "HOME="+work,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	odin := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "odin"), args...)
		cmd.Dir, cmd.Env = root, env
		return cmd
	}
	out, err := odin(t.Context(), "run", "-o", "stream-json", "make the four changes").CombinedOutput()
	if err != nil {
		t.Fatalf("odin run: %v\n%s", err, out)
	}
	stream := string(out)
	got := tree(t, root)
	wantShop := strings.Replace(strings.Replace(shopGo, "prices.", "prices, in cents.", 1), "how many prices there are", "the number of prices", 1)
	if got["shop.go"] != "-rw-r--r-- "+wantShop {
		t.Errorf("shop.go after the run:\n%s\nwant A's and B's edits merged:\n%s", got["shop.go"], wantShop)
	}
	if !strings.HasSuffix(got["discount.go"], "type Discount int\n") {
		t.Errorf("discount.go = %q", got["discount.go"])
	}
	if got["NOTES.txt"] != before["NOTES.txt"] {
		t.Errorf("NOTES.txt changed: %q", got["NOTES.txt"])
	}
	// The model heard of the conflict, as a typed failure naming the file.
	reqs := srv.RequestsFor("orchestrator")
	var conflict string
	for _, m := range reqs[len(reqs)-1].Body.LLMMessages() {
		if strings.Contains(m.Content, "status conflict") {
			conflict = m.Content
		}
	}
	if !strings.Contains(conflict, "shop.go") || !strings.Contains(conflict, "nothing of it was applied") {
		t.Errorf("the conflicting run's result does not name shop.go:\n%s", conflict)
	}
	// One change set for the gates: both files in one decision.
	var result struct {
		Gates struct {
			Decision struct {
				ReviewRequired bool     `json:"review_required"`
				Files          []string `json:"files"`
			} `json:"decision"`
			Passed bool `json:"passed"`
		} `json:"gates"`
	}
	for _, line := range strings.Split(stream, "\n") {
		if strings.HasPrefix(line, `{"type":"result"`) {
			if err := json.Unmarshal([]byte(line), &result); err != nil {
				t.Fatal(err)
			}
		}
	}
	files := result.Gates.Decision.Files
	slices.Sort(files)
	if !result.Gates.Decision.ReviewRequired || !result.Gates.Passed || !slices.Equal(files, []string{"discount.go", "shop.go"}) {
		t.Errorf("the gates did not decide once over both files: %+v\n%s", result.Gates, stream)
	}
	assertNoWorktrees(t, root, state)

	if out, err := odin(t.Context(), "undo").CombinedOutput(); err != nil {
		t.Fatalf("odin undo: %v\n%s", err, out)
	}
	if diff := cmp.Diff(before, tree(t, root)); diff != "" {
		t.Errorf("odin undo did not restore the project byte for byte (-before +after):\n%s", diff)
	}

	// kill -9 while four specialists sit in their worktrees.
	hold := llmtest.NewScript().Add("orchestrator", llmtest.Calls(agent("TASK-A"), agent("TASK-B"))).
		Add("code", llmtest.Step{Latency: llmtest.Duration(time.Minute), Text: "never"}, llmtest.Step{Latency: llmtest.Duration(time.Minute), Text: "never"})
	srv2 := llmtest.NewServer(t, hold)
	env = append(env, "OPENAI_BASE_URL="+srv2.URL())
	killed := odin(t.Context(), "run", "make two changes")
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		markers, _ := filepath.Glob(filepath.Join(state, "odin", "worktrees", "*", "owner.json"))
		trees, _ := filepath.Glob(filepath.Join(state, "odin", "worktrees", "*", "tree", "shop.go"))
		if len(markers) == 2 && len(trees) == 2 && len(srv2.RequestsFor("code")) == 2 {
			break
		}
		if time.Now().After(deadline) {
			_ = killed.Process.Kill()
			t.Fatalf("the two worktrees never appeared: %v %v", markers, trees)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := killed.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	if list := wtGit(t, root, "worktree", "list"); strings.Count(list, "\n") != 3 {
		t.Fatalf("before the restart git should list the project and the 2 orphans:\n%s", list)
	}
	// Any start of odin in the project sweeps the orphans.
	srv3 := llmtest.NewServer(t, llmtest.NewScript().Add("orchestrator", llmtest.Reply("ok")))
	env = append(env, "OPENAI_BASE_URL="+srv3.URL())
	if out, err := odin(t.Context(), "run", "hello").CombinedOutput(); err != nil {
		t.Fatalf("odin run after the kill: %v\n%s", err, out)
	}
	assertNoWorktrees(t, root, state)
}

// assertNoWorktrees checks that git lists only the project and that the
// state directory holds no worktree.
func assertNoWorktrees(t *testing.T, root, state string) {
	t.Helper()
	if list := wtGit(t, root, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("git worktree list shows more than the project:\n%s", list)
	}
	entries, _ := os.ReadDir(filepath.Join(state, "odin", "worktrees"))
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) > 0 {
		t.Errorf("worktrees left in the state directory: %v", names)
	}
}
