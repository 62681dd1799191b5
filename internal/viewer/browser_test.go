package viewer_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"

	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestViewerInChromium drives the real page in headless Chromium against
// `odin view` serving the demo's multi-agent gated run (demo/script.yaml
// on demo/sample, scripted model): the page is opened before the run
// starts, so the lanes it then shows arrived live over SSE; after the run
// it must show the lanes, the review's failure and both fix rounds, a
// transcript, and a diff. Screenshots go to $ODIN_ARTIFACTS (or a temp
// dir).
func TestViewerInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("builds odin and starts a browser")
	}
	browser := findChromium()
	if browser == "" {
		t.Skip("no chromium on PATH: install Debian's chromium (apt-get install chromium) to run the browser tests")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the demo's QA checks need the go command")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, c := range []string{"odin", "scripted-model"} {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, c), "./cmd/"+c)
		build.Dir = repo
		out, err := build.CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", c, err, out)
		}
	}
	work := t.TempDir()
	project := filepath.Join(work, "project")
	if out, err := exec.Command("cp", "-R", filepath.Join(repo, "demo", "sample"), project).CombinedOutput(); err != nil {
		t.Fatalf("copy demo/sample: %v %s", err, out)
	}
	if project, err = filepath.EvalSymlinks(project); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(work, "state"), "XDG_CONFIG_HOME="+filepath.Join(work, "config"), "OPENAI_API_KEY=", "NO_COLOR=1")

	model := start(t, exec.Command(filepath.Join(bin, "scripted-model"), "--script", filepath.Join(repo, "demo", "script.yaml"), "--var", "root="+project), env)
	modelURL := firstLine(t, model, func(l string) bool { return strings.HasPrefix(l, "http") })
	view := start(t, exec.Command(filepath.Join(bin, "odin"), "-C", project, "--model", "scripted-main", "--small-model", "scripted-small", "view", "--no-browser"),
		append(env, "OPENAI_BASE_URL="+modelURL))
	pageURL := firstLine(t, view, func(l string) bool { return strings.HasPrefix(l, "http://127.0.0.1:") })
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	frag, _ := url.ParseQuery(u.Fragment)
	token := frag.Get("token")
	if token == "" || strings.Contains(u.RawQuery, token) {
		t.Fatalf("odin view's URL %q must carry the token in the fragment only", pageURL)
	}
	base := u.Scheme + "://" + u.Host
	c := &client{base: base, token: token}

	var sess struct {
		ID string `json:"id"`
	}
	c.do(t, "POST", "/v1/sessions", map[string]string{"project": project}, &sess)

	artifacts := os.Getenv("ODIN_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1440, 1000))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 12*time.Minute)
	defer cancel()

	// Open the page on the new session before anything ran.
	var runLanes int
	must(t, "open the page", chromedp.Run(ctx,
		chromedp.Navigate(base+"/#token="+url.QueryEscape(token)+"&session="+url.QueryEscape(sess.ID)),
		chromedp.WaitVisible("#live-badge"),
		chromedp.Evaluate(`window.__notReloaded = true; document.querySelectorAll('[data-lane=run]').length`, &runLanes),
	))
	if runLanes != 0 {
		t.Fatalf("before the run the page shows %d specialist lanes, want 0", runLanes)
	}
	var hash string
	must(t, "read the address", chromedp.Run(ctx, chromedp.Evaluate(`location.href`, &hash)))
	if strings.Contains(hash, token) {
		t.Errorf("the token stayed in the address bar: %s", hash)
	}

	c.do(t, "POST", "/v1/sessions/"+sess.ID+"/messages", map[string]string{"body": "add rate limiting to the API"}, nil)

	// Live: a specialist lane appears without a reload, while the turn runs.
	var live struct {
		NotReloaded bool
		Events      string
	}
	must(t, "see a lane arrive live", chromedp.Run(ctx,
		chromedp.WaitVisible(`[data-lane=run] .bar`),
		chromedp.Evaluate(`({NotReloaded: window.__notReloaded === true, Events: document.getElementById('live-badge').dataset.events || ""})`, &live),
	))
	if !live.NotReloaded || live.Events == "" {
		t.Fatalf("the lane did not arrive through the event stream: %+v", live)
	}
	if inFlight := c.inFlight(t, sess.ID); inFlight == 0 {
		t.Log("the run had already finished when the first lane was drawn (the assertion above still saw it arrive without a reload)")
	}

	// Wait for the run to end, then for the page to show the verdict.
	// Writes ask for approval in a served session: answer them from the
	// page, as a user would. The QA checks compile the project with the
	// sandbox's own (cold) Go cache, which takes minutes on a busy machine.
	deadline := time.Now().Add(10 * time.Minute)
	answered := 0
	for c.inFlight(t, sess.ID) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the scripted run did not finish (%d approvals answered)", answered)
		}
		var pending int
		must(t, "look for approvals", chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#approvals button[data-decision=session]').length`, &pending)))
		if pending > 0 {
			must(t, "answer an approval", chromedp.Run(ctx, chromedp.Click(`#approvals button[data-decision=session]`, chromedp.ByQuery), chromedp.WaitNotPresent(`#approvals button[data-decision=session]`, chromedp.ByQuery)))
			answered++
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("approvals answered from the page: %d", answered)
	var got struct {
		Lanes    []string
		Outcomes []string
		Fixes    []string
		QA       []string
		Verdict  string
		Stages   []string
		Findings []string
		Reasons  []string
		Meta     string
	}
	must(t, "read the finished timeline", chromedp.Run(ctx,
		chromedp.WaitVisible(`.gate .verdict-passed`),
		chromedp.Evaluate(`({
			Lanes: [...document.querySelectorAll('.lane-name')].map(e => e.textContent),
			Outcomes: [...document.querySelectorAll('[data-run]')].map(e => e.dataset.gate + ':' + e.dataset.outcome),
			Fixes: [...document.querySelectorAll('.fixmark')].filter(e => e.closest('#timeline')).map(e => e.textContent),
			QA: [...document.querySelectorAll('[data-lane=qa] [data-qa]')].map(e => e.textContent),
			Verdict: document.querySelector('.gate .verdict-passed').textContent,
			Stages: [...document.querySelectorAll('.stage')].map(e => e.dataset.stage + ':' + e.dataset.mark),
			Findings: [...document.querySelectorAll('.finding')].map(e => e.dataset.severity + ' ' + e.textContent),
			Reasons: [...document.querySelectorAll('.gate-reasons li')].map(e => e.textContent),
			Meta: document.getElementById('session-meta').textContent,
		})`, &got),
	))
	t.Logf("page: %+v", got)
	for _, want := range []string{"Orchestrator", "search #1", "code #2", "review #3", "QA checks", "Gates"} {
		if !containsPrefix(got.Lanes, want) {
			t.Errorf("no lane %q in %q", want, got.Lanes)
		}
	}
	for _, want := range []string{"review:findings", "fix:ok", "review:ok", "qa:findings"} {
		if !contains(got.Outcomes, want) {
			t.Errorf("no run %q in %q", want, got.Outcomes)
		}
	}
	// Of the most the session's gate note kept (max_fix_rounds 2).
	if !contains(got.Fixes, "fix round 1 of 2") || !contains(got.Fixes, "fix round 2 of 2") {
		t.Errorf("fix rounds marked: %q, want rounds 1 and 2 of 2", got.Fixes)
	}
	if !contains(got.Stages, "review:failed") || !contains(got.Stages, "fix:applied") || !contains(got.Stages, "qa:failed") || !contains(got.Stages, "qa:passed") {
		t.Errorf("gate stages: %q", got.Stages)
	}
	if !containsSub(got.QA, "failed") || !containsSub(got.QA, "passed") {
		t.Errorf("QA checks lane: %q", got.QA)
	}
	// Why the gates ran, from the stored session (not only the live event).
	if !containsSub(got.Reasons, "files changed") {
		t.Errorf("stored gate reasons: %q", got.Reasons)
	}
	if !containsPrefix(got.Findings, "major api/ratelimit.go:46") {
		t.Errorf("review findings by severity: %q", got.Findings)
	}
	// The scripted models have no price: their cost is unknown, not $0.
	if !strings.Contains(got.Meta, "cost unknown") || strings.Contains(got.Meta, "$0.0000") {
		t.Errorf("session cost: %q, want \"cost unknown\" for unpriced models", got.Meta)
	}
	shot(t, ctx, artifacts, "timeline.png", "#session")

	// Scrubbing back to the start hides every run; forward again shows them.
	var shown []int
	count := `[...document.querySelectorAll('#timeline [data-run]')].filter(e => getComputedStyle(e).display !== 'none').length`
	for _, v := range []string{"0", "1000"} {
		var n int
		must(t, "scrub to "+v, chromedp.Run(ctx,
			chromedp.SetValue(`#scrub`, v, chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById('scrub').dispatchEvent(new Event('input'))`, nil),
			chromedp.Evaluate(count, &n)))
		shown = append(shown, n)
	}
	if shown[0] != 0 || shown[1] != len(got.Outcomes) {
		t.Errorf("runs shown at the start and the end: %v, want [0 %d]", shown, len(got.Outcomes))
	}

	// A bar opens its transcript: the first fix round's edit, as a diff.
	var tr struct {
		Heading string
		Brief   string
		Added   []string
		Removed []string
		Usage   string
		Report  string
		Caption string
	}
	must(t, "open a transcript", chromedp.Run(ctx,
		chromedp.Click(`[data-gate=fix][data-run]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#transcript table.diff`),
		chromedp.Evaluate(`({
			Heading: document.getElementById('transcript-h').textContent,
			Brief: (document.querySelector('#transcript details pre') || {}).textContent || "",
			Added: [...document.querySelectorAll('#transcript td.add')].map(e => e.textContent),
			Removed: [...document.querySelectorAll('#transcript td.del')].map(e => e.textContent),
			Usage: [...document.querySelectorAll('#transcript .entry-head')].map(e => e.textContent).join('\n'),
			Report: (document.querySelector('#transcript .report pre') || {}).textContent || "",
			Caption: (document.querySelector('#transcript table.diff caption') || {}).textContent || "",
		})`, &tr),
	))
	if !strings.Contains(tr.Heading, "code") || !strings.Contains(tr.Heading, "fix review findings") {
		t.Errorf("transcript heading %q, want the code run fixing the review findings", tr.Heading)
	}
	if !strings.Contains(tr.Brief, "fix round 1") {
		t.Errorf("the brief is not shown: %q", tr.Brief)
	}
	if !containsSub(tr.Added, `w.Header().Set("Retry-After", "1")`) {
		t.Errorf("diff added lines %q, want the Retry-After header", tr.Added)
	}
	// The edited file is named relative to the project, as the terminal
	// names it.
	if !strings.HasPrefix(tr.Caption, "api/") || !strings.Contains(tr.Caption, ".go") {
		t.Errorf("diff caption %q, want the project-relative api/... file", tr.Caption)
	}
	if !strings.Contains(tr.Usage, "prompt tokens") {
		t.Errorf("no model-call usage in the transcript: %q", tr.Usage)
	}
	if !strings.Contains(tr.Report, "Retry-After") {
		t.Errorf("no typed Report: %q", tr.Report)
	}
	var colored int
	must(t, "syntax colour", chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#transcript table.diff .tk-k, #transcript table.diff .tk-s').length`, &colored)))
	if colored == 0 {
		t.Error("the diff has no syntax colour")
	}
	shot(t, ctx, artifacts, "transcript.png", "#transcript")

	// The token is in no log, no stored file but its own, and nothing odin
	// view wrote to stderr.
	state := filepath.Join(work, "state")
	err = filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || path == filepath.Join(state, "odin", "serve", "token") {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(token)) {
			t.Errorf("the token is in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(view.out.String(), token) {
		t.Errorf("odin view wrote the token to stderr")
	}
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

type proc struct {
	lines chan string
	out   *syncBuffer
}

// syncBuffer is a process's stderr, read while the process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs cmd until the test ends and streams its stdout lines.
func start(t *testing.T, cmd *exec.Cmd, env []string) *proc {
	t.Helper()
	cmd.Env = env
	errb := &syncBuffer{}
	cmd.Stderr = errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{lines: make(chan string, 100), out: errb}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return p
}

func firstLine(t *testing.T, p *proc, ok func(string) bool) string {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case l, open := <-p.lines:
			if !open {
				t.Fatalf("the process ended without the line; stderr:\n%s", p.out)
			}
			if ok(strings.TrimSpace(l)) {
				return strings.TrimSpace(l)
			}
		case <-timeout:
			t.Fatalf("no line in time; stderr:\n%s", p.out)
		}
	}
}

type client struct{ base, token string }

func (c *client) do(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, r)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

func (c *client) inFlight(t *testing.T, id string) int {
	var info struct {
		InFlight int `json:"in_flight"`
	}
	c.do(t, "GET", "/v1/sessions/"+id, nil, &info)
	return info.InFlight
}

func shot(t *testing.T, ctx context.Context, dir, name, sel string) {
	t.Helper()
	var png []byte
	must(t, "screenshot "+name, chromedp.Run(ctx, chromedp.Screenshot(sel, &png, chromedp.ByQuery)))
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", filepath.Join(dir, name))
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsPrefix(list []string, p string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	return false
}

func containsSub(list []string, s string) bool {
	for _, x := range list {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}
