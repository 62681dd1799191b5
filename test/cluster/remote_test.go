package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store/pgtest"
)

// fanOut is how many Search tasks the Orchestrator's model delegates at
// once.
const fanOut = 8

// remoteScript: the Orchestrator fans out fanOut Search tasks, task k
// greps for NEEDLE_k and reports the file it found. Each specialist step
// is there three times, in the order the test consumes them: the
// all-local run, the remote run (whose grep is held until the test lets
// it go, so every task is mid-flight when a worker dies), and the re-run
// of a task whose worker was lost.
func remoteScript(project string) *llmtest.Script {
	script := llmtest.NewScript()
	var calls []llmtest.ToolCall
	for k := 1; k <= fanOut; k++ {
		calls = append(calls, llmtest.Call("agent", map[string]any{"agent": "search", "description": fmt.Sprintf("find marker %d", k),
			"prompt": fmt.Sprintf("Look for marker number %d in the project.", k)}))
	}
	for range 2 {
		script.Add("orchestrator",
			llmtest.Step{When: "fan out", ToolCalls: calls},
			llmtest.Step{When: "search specialist finished", Text: "all markers found"})
	}
	for copy := range 3 {
		for k := 1; k <= fanOut; k++ {
			grep := llmtest.Step{When: fmt.Sprintf("marker number %d ", k),
				ToolCalls: []llmtest.ToolCall{llmtest.Call("Grep", map[string]any{"pattern": fmt.Sprintf("NEEDLE_%d\\b", k), "output_mode": "content"})}}
			if copy == 1 {
				grep.Hold = fmt.Sprintf("grep-%d", k)
			}
			report := llmtest.Step{When: fmt.Sprintf("marker-%d-found", k), ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{
				"query":      fmt.Sprintf("marker %d", k),
				"findings":   []map[string]any{{"file": fmt.Sprintf("f%d.go", k), "line": 2, "relevance": 1}},
				"summary":    fmt.Sprintf("marker %d is in f%d.go", k, k),
				"confidence": 1,
			})}}
			if k == fanOut {
				// The untracked file is read too, by the session's path as
				// the Orchestrator would name it: on a worker that path is
				// the tree's, which the worker's policy lets it read.
				read := llmtest.Step{When: fmt.Sprintf("marker-%d-found", k), ToolCalls: []llmtest.ToolCall{llmtest.Call("ReadFile", map[string]any{"file_path": filepath.Join(project, fmt.Sprintf("f%d.go", k))})}}
				script.Add("search", grep, read, report)
				continue
			}
			script.Add("search", grep, report)
		}
	}
	return script
}

// TestRemoteSpecialists: serve and two workers; a session's Orchestrator
// (on one worker) fans out 8 Search tasks placed remote. They spread over
// both workers' specialist hosts, run in worktrees of the session's
// commit with its uncommitted changes (two markers exist only there: a
// modified tracked file and an untracked one), and every report reaches
// the Orchestrator with the session's paths. The worker not hosting the
// session is SIGKILLed while its tasks wait for the model: each of them
// is delegated again once, and the turn finishes with the same reports
// as an all-local run of the same script.
func TestRemoteSpecialists(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three odin processes")
	}
	remoteSpecialists(t, "")
}

// TestRemoteSpecialistsPostgres is TestRemoteSpecialists on a PostgreSQL
// store.
func TestRemoteSpecialistsPostgres(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts three odin processes and PostgreSQL")
	}
	remoteSpecialists(t, pgtest.New(t).Database(t))
}

func remoteSpecialists(t *testing.T, storeURL string) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// The project lives where the script can name it.
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(base, "proj")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFleet(t, remoteScript(project), storeURL)
	f.project = project
	gitEnv := append(slices.Clone(f.env), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = f.project, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	put := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(f.project, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for k := 1; k <= fanOut; k++ {
		text := fmt.Sprintf("package main\n// NEEDLE_%d marker-%d-found\n", k, k)
		if k >= fanOut-1 {
			text = "package main\n"
		}
		if k < fanOut {
			put(fmt.Sprintf("f%d.go", k), text)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	// Only in the uncommitted diff: a change to a tracked file and a new
	// untracked one.
	put(fmt.Sprintf("f%d.go", fanOut-1), fmt.Sprintf("package main\n// NEEDLE_%d marker-%d-found\n", fanOut-1, fanOut-1))
	put(fmt.Sprintf("f%d.go", fanOut), fmt.Sprintf("package main\n// NEEDLE_%d marker-%d-found\n", fanOut, fanOut))

	// The all-local run: odin run without the placement.
	localCfg := filepath.Join(f.dir, "config-local")
	run := exec.Command(filepath.Join(binDir, "odin"), "run", "-q", "fan out over the markers")
	run.Dir = f.project
	run.Env = append(slices.Clone(f.env), "XDG_CONFIG_HOME="+localCfg, "XDG_STATE_HOME="+filepath.Join(f.dir, "state-local"))
	if out, err := run.CombinedOutput(); err != nil || !strings.Contains(string(out), "all markers found") {
		t.Fatalf("the all-local run: %v\n%s", err, out)
	}
	localReports := finalReports(t, f.model)

	// The cluster's nodes place Search remote.
	cfgDir := filepath.Join(f.dir, "config", "odin")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "odin.yaml"), []byte("agents:\n  search:\n    placement: remote\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	workers := []*proc{f.worker("worker-1"), f.worker("worker-2")}
	fr := f.front()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
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
	body := "fan out over the markers, remotely"
	if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": body}); err != nil || code != http.StatusAccepted {
		t.Fatalf("message: %d %v %v", code, out, err)
	}
	// Every task is mid-flight: its grep waits at the model.
	for k := 1; k <= fanOut; k++ {
		if err := f.model.WaitHeld(ctx, fmt.Sprintf("grep-%d", k)); err != nil {
			t.Fatal(err)
		}
	}
	perWorker := map[string]float64{}
	for _, w := range workers {
		perWorker[w.name] = w.metric(t, "odin_specialist_tasks_total", "")
	}
	t.Logf("tasks per worker: %v", perWorker)
	if perWorker["worker-1"]+perWorker["worker-2"] != fanOut {
		t.Errorf("the workers started %v tasks, want %d", perWorker, fanOut)
	}
	for name, n := range perWorker {
		if n < fanOut/2-2 || n > fanOut/2+2 {
			t.Errorf("%s ran %v of %d tasks, want %d ± 2", name, n, fanOut, fanOut/2)
		}
	}
	// Kill the worker that does not host the session.
	owner := f.owners(ctx, []string{id})[id].Owner
	var victim, survivor *proc
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
	lost := int(perWorker[victim.name])
	killed := time.Now()
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.exited
	// The dead worker's held greps answer into closed connections; the
	// survivor's go on.
	for k := 1; k <= fanOut; k++ {
		f.model.Release(fmt.Sprintf("grep-%d", k))
	}

	restarted := map[string]int{}
	var firstRestart time.Duration
	finished := map[string]string{}
	var answer, status string
	for status == "" {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatal("the event stream ended")
			}
			switch ev.typ {
			case "agent_restarted":
				if firstRestart == 0 {
					firstRestart = time.Since(killed)
				}
				task, _ := ev.data["task_id"].(string)
				restarted[task]++
			case "agent_finished":
				rep, _ := ev.data["report"].(map[string]any)
				task, _ := rep["task_id"].(string)
				st, _ := rep["status"].(string)
				finished[task] = st
			case "turn_finished":
				res, _ := ev.data["result"].(map[string]any)
				in, _ := res["input"].(map[string]any)
				if in["body"] == body {
					status, _ = res["status"].(string)
					answer, _ = res["answer"].(string)
				}
			}
		case <-ctx.Done():
			t.Fatalf("no turn_finished: %v (finished %v, restarted %v)", ctx.Err(), finished, restarted)
		}
	}
	t.Logf("kill → first re-delegation %s; %d tasks re-delegated", firstRestart, len(restarted))
	if status != "done" || answer != "all markers found" {
		t.Errorf("turn: %s %q", status, answer)
	}
	if len(finished) != fanOut {
		t.Errorf("%d reports, want %d: %v", len(finished), fanOut, finished)
	}
	for task, st := range finished {
		if st != "ok" {
			t.Errorf("task %s: status %s", task, st)
		}
	}
	if len(restarted) != lost {
		t.Errorf("%d tasks re-delegated, want the %d the killed worker ran: %v", len(restarted), lost, restarted)
	}
	for task, n := range restarted {
		if n != 1 {
			t.Errorf("task %s re-delegated %d times, want once", task, n)
		}
	}
	if got := survivor.metric(t, "odin_specialist_redelegations_total", ""); int(got) != lost {
		t.Errorf("the session's node counts %v re-delegations, want %d", got, lost)
	}

	// The remote greps ran in the workers' trees (the dirty markers were
	// found there), and none of those paths reached the Orchestrator.
	trees := regexp.MustCompile(`[^\s"']*remote-specialists/nodes/[^\s"':]*`)
	for k := fanOut - 1; k <= fanOut; k++ {
		marker, foundRemote := fmt.Sprintf("marker-%d-found", k), false
		for _, r := range f.model.RequestsFor("search") {
			msgs := r.Body.Messages
			if last := msgs[len(msgs)-1]; last.Role == "tool" && strings.Contains(last.Text(), marker) && trees.MatchString(last.Text()) {
				foundRemote = true
			}
		}
		if !foundRemote {
			t.Errorf("%s (only in the uncommitted diff) was not found by a remote grep", marker)
		}
	}
	remoteReports := finalReports(t, f.model)
	for _, r := range remoteReports {
		if trees.MatchString(r) {
			t.Errorf("a worker's path reached the Orchestrator: %s", r)
		}
	}
	if d := cmp.Diff(localReports, remoteReports); d != "" {
		t.Errorf("reports (-all local +remote):\n%s", d)
	}
}

// runFacts are the parts of a report that differ between runs of the same
// script: the run's handle, its model calls and tokens (the prompts name
// different roots), and its elapsed time.
var runFacts = regexp.MustCompile(`\(run [^)]*\)`)

// finalReports returns the reports the Orchestrator's model read in its
// latest request, normalised and sorted.
func finalReports(t *testing.T, model *llmtest.Server) []string {
	t.Helper()
	reqs := model.RequestsFor("orchestrator")
	for i := len(reqs) - 1; i >= 0; i-- {
		var out []string
		for _, m := range reqs[i].Body.Messages {
			if m.Role == "tool" && strings.Contains(m.Text(), "search specialist finished") {
				out = append(out, runFacts.ReplaceAllString(m.Text(), "(run)"))
			}
		}
		if len(out) > 0 {
			if len(out) != fanOut {
				t.Fatalf("the Orchestrator read %d reports, want %d:\n%s", len(out), fanOut, strings.Join(out, "\n"))
			}
			slices.Sort(out)
			return out
		}
	}
	t.Fatal("the Orchestrator's model never read a report")
	return nil
}
