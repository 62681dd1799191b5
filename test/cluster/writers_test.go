package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// codeTask is one remote Code task of the writers' script: it reads the
// files it edits, makes its change, and reports. Each step keeps marker
// in progress through TodoWrite (whose result names the item in progress,
// not a completed one), so the next step of the same task is found by it;
// hold, when set, parks the report at the model until the test releases
// it.
func codeTask(marker string, reads []string, changes []llmtest.ToolCall, report llmtest.Step, hold string) []llmtest.Step {
	todo := func(status string) llmtest.ToolCall {
		return llmtest.Call("TodoWrite", map[string]any{"todos": []map[string]any{{"id": "1", "content": marker, "status": status}}})
	}
	var first []llmtest.ToolCall
	for _, r := range reads {
		first = append(first, llmtest.Call("ReadFile", map[string]any{"file_path": r}))
	}
	report.When, report.Hold = marker, hold
	return []llmtest.Step{
		{When: marker, ToolCalls: append(first, todo("in_progress"))},
		{When: marker, ToolCalls: append(changes, todo("in_progress"))},
		report,
	}
}

func codeReport(summary string) llmtest.Step {
	return llmtest.Calls(llmtest.Call("Report", map[string]any{"task": summary, "summary": summary}))
}

// TestRemoteWriters: serve and two workers; the Code agent is placed
// remote with isolation: worktree. In one turn two Code tasks edit the
// same line of a.txt on the workers, in worktrees of the session's tree
// (its uncommitted b.txt included); the first patch lands in the
// session's project byte for byte (CRLF kept), the second comes back as
// the typed conflict naming a.txt, the gates decide over the files that
// landed, no worktree is left on the workers, and odin undo restores the
// project. In a second turn the worker that does not host the session
// is SIGKILLed while its task holds an edited worktree: nothing of that
// task reaches the project until it is delegated again, once, and its
// patch lands whole.
func TestRemoteWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three odin processes")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(base, "proj")
	at := func(name string) string { return filepath.Join(project, name) }
	agent := func(marker string) llmtest.ToolCall {
		return llmtest.Call("agent", map[string]any{"agent": "code", "description": marker, "prompt": marker + ": change the files in " + project + " as instructed"})
	}
	edit := func(file, old, new string) llmtest.ToolCall {
		return llmtest.Call("EditTool", map[string]any{"file_path": at(file), "old_string": old, "new_string": new})
	}
	// The attack: a remote writer's command writes in its worktree, then
	// tries the session's project, the worker's home and state
	// directory, its mirror and its shared tree. Only the worktree takes
	// the write (D's patch conflicts, so even that never lands).
	escape := "echo ok-inside > wrote-here.txt && cat wrote-here.txt; " +
		"for p in " + at("canary-project") + " \"$HOME/canary-home\" ../../../canary-state ../../../remote-specialists/nodes/*/trees/*/*/canary-tree " +
		"\"$(git rev-parse --git-common-dir 2>/dev/null)/canary-mirror\"; do echo pwned 2>/dev/null > \"$p\" && echo \"wrote $p\"; done; true"
	script := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Step{When: "make the remote changes", ToolCalls: []llmtest.ToolCall{agent("TASK-A"), agent("TASK-D")}},
			llmtest.Step{When: "status conflict", Text: "TASK-A landed; TASK-D conflicted."},
			llmtest.Step{When: "change two files while a worker dies", ToolCalls: []llmtest.ToolCall{agent("TASK-K1"), agent("TASK-K2")}},
			llmtest.Step{When: "K2 done", Text: "both changes landed"}).
		Add("code", codeTask("TASK-A", []string{at("a.txt")}, []llmtest.ToolCall{edit("a.txt", "beta", "BETA"),
			llmtest.Call("WriteFile", map[string]any{"file_path": at("c.txt"), "content": "charlie\n"})}, codeReport("A done"), "")...).
		// D changes A's line; its report comes later, so its patch meets
		// A's change already in the project.
		Add("code", codeTask("TASK-D", []string{at("a.txt")}, []llmtest.ToolCall{edit("a.txt", "beta", "Beta"), llmtest.Call("ShellSession", map[string]any{"command": escape})},
			llmtest.Step{Latency: llmtest.Duration(3 * time.Second), ToolCalls: codeReport("D done").ToolCalls}, "")...).
		Add("review", llmtest.Calls(llmtest.Call("Report", map[string]any{"files_reviewed": []string{"a.txt", "c.txt"}, "issues": []any{},
			"overall_score": 8, "summary": "Fine.", "approved": true}))).
		Add("synthesis", llmtest.Reply("TASK-A landed; TASK-D conflicted on a.txt."))
	// The second turn's tasks, twice: the first copy holds each report
	// until the test has killed a worker, the second serves the task
	// delegated again.
	for copy := range 2 {
		hold := func(name string) string {
			if copy == 0 {
				return name
			}
			return ""
		}
		script.Add("code", codeTask("TASK-K1", []string{at("b.txt")}, []llmtest.ToolCall{edit("b.txt", "uncommitted", "edited remotely")}, codeReport("K1 done"), hold("k1"))...)
		script.Add("code", codeTask("TASK-K2", []string{at("a.txt")}, []llmtest.ToolCall{llmtest.Call("WriteFile", map[string]any{"file_path": at("d.txt"), "content": "delta\r\n"})},
			codeReport("K2 done"), hold("k2"))...)
	}
	script.Add("review", llmtest.Calls(llmtest.Call("Report", map[string]any{"files_reviewed": []string{"b.txt", "d.txt"}, "issues": []any{},
		"overall_score": 8, "summary": "Fine.", "approved": true})))
	script.Add("synthesis", llmtest.Reply("both changes landed"))

	f := newFleet(t, script, "")
	f.project = project
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	gitEnv := append(slices.Clone(f.env), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = project, gitEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	put := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(at(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("a.txt", "alpha\r\nbeta\r\ngamma")
	put("b.txt", "bravo\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	// Uncommitted: the workers start from it, and the patch's base is it.
	put("b.txt", "bravo, uncommitted\n")
	files := func() map[string]string {
		out := map[string]string{}
		for _, name := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
			if b, err := os.ReadFile(at(name)); err == nil {
				out[name] = string(b)
			}
		}
		return out
	}
	before := files()

	cfgDir := filepath.Join(f.dir, "config", "odin")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "odin.yaml"), []byte("agents:\n  code:\n    placement: remote\n    isolation: worktree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	workers := []*proc{f.worker("worker-1"), f.worker("worker-2")}
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": project})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session: %d %v %v", code, s, err)
	}
	id := s["id"].(string)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	evs, err := fr.events(sctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// turn sends body and collects its events until its turn_finished.
	type outcome struct {
		status, answer string
		gateFiles      []string
		finished       map[string]string // task → report status
		restarted      map[string]int
	}
	turn := func(body string, during func()) outcome {
		t.Helper()
		if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": body}); err != nil || code != http.StatusAccepted {
			t.Fatalf("message: %d %v %v", code, out, err)
		}
		if during != nil {
			during()
		}
		o := outcome{finished: map[string]string{}, restarted: map[string]int{}}
		for {
			select {
			case ev, ok := <-evs:
				if !ok {
					t.Fatal("the event stream ended")
				}
				switch ev.typ {
				case "agent_restarted":
					task, _ := ev.data["task_id"].(string)
					o.restarted[task]++
				case "agent_finished":
					rep, _ := ev.data["report"].(map[string]any)
					if rep["agent"] != "code" {
						continue // the gates' reviewer
					}
					task, _ := rep["task_id"].(string)
					o.finished[task], _ = rep["status"].(string)
					if o.finished[task] != "ok" {
						t.Logf("task %s: %s: %v %v", task, o.finished[task], rep["summary"], rep["error"])
					}
				case "turn_finished":
					res, _ := ev.data["result"].(map[string]any)
					if in, _ := res["input"].(map[string]any); in["body"] != body {
						continue
					}
					o.status, _ = res["status"].(string)
					o.answer, _ = res["answer"].(string)
					if o.status != "done" {
						t.Logf("turn %q: %s: %v", body, o.status, res["error"])
					}
					gates, _ := res["gates"].(map[string]any)
					dec, _ := gates["decision"].(map[string]any)
					fs, _ := dec["files"].([]any)
					for _, f := range fs {
						o.gateFiles = append(o.gateFiles, fmt.Sprint(f))
					}
					slices.Sort(o.gateFiles)
					return o
				}
			case <-ctx.Done():
				t.Fatalf("no turn_finished for %q: %v", body, ctx.Err())
			}
		}
	}
	worktrees := filepath.Join(f.dir, "state", "odin", "worktrees")
	noWorktrees := func(when string) {
		t.Helper()
		// A worker removes a writer's worktree before it sends the
		// patch, and a killed worker's when its next task starts.
		entries, _ := os.ReadDir(worktrees)
		if len(entries) > 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%s: worktrees left on the workers: %v", when, names)
		}
		trees, _ := filepath.Glob(filepath.Join(f.dir, "state", "odin", "remote-specialists", "nodes", "*", "mirrors", "*.git", "worktrees", "*"))
		for _, tr := range trees {
			// The workers' own trees of the session's commit are kept
			// for the next task; a writer's worktree is not among them.
			if strings.HasPrefix(filepath.Base(tr), "tree") {
				t.Errorf("%s: git still records a writer's worktree: %s", when, tr)
			}
		}
		if list := git("worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
			t.Errorf("%s: git worktree list shows more than the project:\n%s", when, list)
		}
	}

	// Turn 1: two remote writers, one conflict.
	o := turn("make the remote changes", nil)
	if o.status != "done" || o.answer != "TASK-A landed; TASK-D conflicted on a.txt." {
		t.Errorf("turn 1: %s %q", o.status, o.answer)
	}
	want := map[string]string{"a.txt": "alpha\r\nBETA\r\ngamma", "b.txt": "bravo, uncommitted\n", "c.txt": "charlie\n"}
	if d := cmp.Diff(want, files()); d != "" {
		t.Errorf("the project after the remote patches (-want +got):\n%s", d)
	}
	statuses := slices.Sorted(func(yield func(string) bool) {
		for _, st := range o.finished {
			if !yield(st) {
				return
			}
		}
	})
	if !slices.Equal(statuses, []string{"conflict", "ok"}) {
		t.Errorf("reports: %v, want one ok and one conflict", o.finished)
		for _, r := range f.model.RequestsFor("code") {
			for _, m := range r.Body.LLMMessages() {
				if m.Role == "tool" && !strings.HasPrefix(m.Content, "Todo") {
					t.Logf("a code task's tool result: %.400s", m.Content)
				}
			}
		}
	}
	reqs := f.model.RequestsFor("orchestrator")
	var conflict string
	for _, r := range reqs {
		for _, m := range r.Body.LLMMessages() {
			if strings.Contains(m.Content, "status conflict") {
				conflict = m.Content
			}
		}
	}
	if !strings.Contains(conflict, "a.txt") || !strings.Contains(conflict, "nothing of it was applied") {
		t.Errorf("the conflicting remote run's result does not name a.txt:\n%s", conflict)
	}
	if !slices.Equal(o.gateFiles, []string{"a.txt", "c.txt"}) {
		t.Errorf("the gates decided over %v, want the files the remote patch changed", o.gateFiles)
	}
	ran := 0.0
	for _, w := range workers {
		ran += w.metric(t, "odin_specialist_tasks_total", "")
	}
	if ran != 2 {
		t.Errorf("the workers' specialist hosts ran %v tasks, want the 2 Code tasks", ran)
	}
	noWorktrees("after turn 1")
	inside := false
	for _, r := range f.model.RequestsFor("code") {
		for _, m := range r.Body.LLMMessages() {
			inside = inside || m.Role == "tool" && strings.Contains(m.Content, "ok-inside")
		}
	}
	if !inside {
		t.Error("the remote writer's command could not write in its own worktree")
		for _, r := range f.model.RequestsFor("code") {
			for _, m := range r.Body.LLMMessages() {
				if m.Role == "tool" && !strings.HasPrefix(m.Content, "Todo") {
					t.Logf("a code task's tool result: %.600s", m.Content)
				}
			}
		}
	}
	_ = filepath.WalkDir(f.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "canary-") {
			t.Errorf("the remote writer's command wrote outside its worktree: %s", p)
		}
		return nil
	})

	// odin undo restores the project as it was before the turn.
	undo := exec.Command(filepath.Join(binDir, "odin"), "undo")
	undo.Dir, undo.Env = project, append(slices.Clone(f.env), "ODIN_STORE_URL="+f.store)
	if out, err := undo.CombinedOutput(); err != nil {
		t.Fatalf("odin undo: %v\n%s", err, out)
	}
	if d := cmp.Diff(before, files()); d != "" {
		t.Errorf("odin undo did not restore the project byte for byte (-before +after):\n%s", d)
	}

	// Turn 2: the worker not hosting the session dies while its task
	// holds an edited worktree.
	owner := ""
	var victim, survivor *proc
	o = turn("change two files while a worker dies", func() {
		for _, h := range []string{"k1", "k2"} {
			if err := f.model.WaitHeld(ctx, h); err != nil {
				t.Fatal(err)
			}
		}
		owner = f.owners(ctx, []string{id})[id].Owner
		for _, w := range workers {
			if w.member == owner {
				survivor = w
			} else {
				victim = w
			}
		}
		if survivor == nil {
			t.Fatalf("the session is on %q, not on a worker", owner)
		}
		// Both worktrees hold their edits, and none has reached the
		// project.
		copies, _ := filepath.Glob(filepath.Join(worktrees, "*", "tree", "b.txt"))
		edited := 0
		for _, c := range copies {
			if b, _ := os.ReadFile(c); string(b) == "bravo, edited remotely\n" {
				edited++
			}
		}
		written, _ := filepath.Glob(filepath.Join(worktrees, "*", "tree", "d.txt"))
		if len(copies) != 2 || edited != 1 || len(written) != 1 {
			t.Errorf("the held tasks' worktrees: %d copies of b.txt, %d edited; d.txt in %v", len(copies), edited, written)
		}
		if d := cmp.Diff(before, files()); d != "" {
			t.Errorf("the project changed before the reports (-before +after):\n%s", d)
		}
		if err := victim.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-victim.exited
		if d := cmp.Diff(before, files()); d != "" {
			t.Errorf("the killed worker's task changed the project (-before +after):\n%s", d)
		}
		f.model.Release("k1")
		f.model.Release("k2")
	})
	if o.status != "done" || o.answer != "both changes landed" {
		t.Errorf("turn 2: %s %q", o.status, o.answer)
	}
	if len(o.restarted) != 1 {
		t.Errorf("%d tasks delegated again, want the killed worker's one: %v", len(o.restarted), o.restarted)
	}
	for task, n := range o.restarted {
		if n != 1 {
			t.Errorf("task %s delegated again %d times, want once", task, n)
		}
	}
	for task, st := range o.finished {
		if st != "ok" {
			t.Errorf("turn 2: task %s %s", task, st)
		}
	}
	want = map[string]string{"a.txt": before["a.txt"], "b.txt": "bravo, edited remotely\n", "d.txt": "delta\r\n"}
	if d := cmp.Diff(want, files()); d != "" {
		t.Errorf("the project after the re-delegated patch (-want +got):\n%s", d)
	}
	if !slices.Equal(o.gateFiles, []string{"b.txt", "d.txt"}) {
		t.Errorf("turn 2's gates decided over %v", o.gateFiles)
	}
	noWorktrees("after the kill")
}
