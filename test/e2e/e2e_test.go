package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// binDir holds the odin binary built for this test run.
var binDir string

func TestMain(m *testing.M) {
	// Started as a helper program (by a script or by odin): be it, without
	// building odin first.
	if f, ok := helperCommands[filepath.Base(os.Args[0])]; ok {
		os.Exit(f())
	}
	// ODIN_TEST_BIN_DIR names a directory holding an already built odin
	// (`make bench` measures its stripped release build this way).
	if dir := os.Getenv("ODIN_TEST_BIN_DIR"); dir != "" {
		binDir = dir
		os.Exit(testscript.RunMain(m, helperCommands))
	}
	// Not under /tmp where possible: the sandbox gives MCP servers a
	// private /tmp, so the npm servers installed beside odin
	// (mcp_npm_test.go) must live elsewhere to be seen, as a user's do.
	dir, err := os.MkdirTemp("/var/tmp", "odin-test-bin")
	if err != nil {
		dir, err = os.MkdirTemp("", "odin-test-bin")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// odin-sitter, odin-fetch and odin-browser beside odin, where odin
	// looks for them (the repo map's tree-sitter parser, WebFetch's page
	// process, WebBrowser's browser process).
	build := exec.Command("go", "build", "-o", dir+"/", "github.com/odin-code/odin/cmd/odin", "github.com/odin-code/odin/cmd/odin-sitter", "github.com/odin-code/odin/cmd/odin-fetch", "github.com/odin-code/odin/cmd/odin-browser")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building odin:", err)
		os.Exit(1)
	}
	binDir = dir
	// RunMain exits itself: the directory is removed when the tests end,
	// inside Run, or it would be left behind (95 MB a run).
	os.Exit(testscript.RunMain(removeAfter{m, dir}, helperCommands))
}

// removeAfter runs the tests, then removes dir.
type removeAfter struct {
	m   *testing.M
	dir string
}

func (r removeAfter) Run() int {
	defer os.RemoveAll(r.dir)
	return r.m.Run()
}

func TestScripts(t *testing.T) {
	goEnv := map[string]string{}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		out, err := exec.Command("go", "env", k).Output()
		if err == nil {
			goEnv[k] = strings.TrimSpace(string(out))
		}
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			work, err := filepath.EvalSymlinks(env.WorkDir)
			if err != nil {
				return err
			}
			env.Setenv("WORK", work)
			env.Setenv("PATH", binDir+string(os.PathListSeparator)+filepath.Join(goEnv["GOROOT"], "bin")+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("HOME", filepath.Join(work, ".home"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(work, ".state"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(work, ".config"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("GOFLAGS", "-mod=mod")
			env.Setenv("GOTOOLCHAIN", "local")
			for k, v := range goEnv {
				env.Setenv(k, v)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"model":       cmdModel,
			"exitcode":    cmdExitCode,
			"requests":    cmdRequests,
			"sent":        cmdSent,
			"serve":       cmdServe,
			"attacker":    cmdAttacker,
			"attacked":    cmdAttacked,
			"ratelimited": cmdRateLimited,
			"mkimage":     cmdMkImage,
			"reqsize":     cmdReqSize,
			"leaked":      cmdLeaked,
			"vartmp":      cmdVarTmp,
			"wiretools":   cmdWireTools,
		},
		RequireExplicitExec: true,
	})
}

// model [-quota N] SCRIPT starts the scripted model server with SCRIPT (a
// YAML file in the work dir; {{root}} is the work dir, {{serve_url}} the
// URL of a `serve` run before) and points odin at it. -quota N answers 429
// (Retry-After: 1) above N requests a second.
func cmdModel(ts *testscript.TestScript, neg bool, args []string) {
	opts := []llmtest.ServerOption{}
	if len(args) == 3 && args[0] == "-quota" {
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		opts = append(opts, llmtest.WithRateLimit(n, time.Second))
		args = args[2:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: model [-quota N] SCRIPT")
	}
	script, err := llmtest.LoadScript(ts.MkAbs(args[0]))
	ts.Check(err)
	vars := map[string]string{"root": ts.Getenv("WORK"), "serve_url": ts.Getenv("SERVE_URL"), "home": ts.Getenv("HOME")}
	srv, err := llmtest.Serve("127.0.0.1:0", script, append(opts, llmtest.WithVars(vars))...)
	ts.Check(err)
	ts.Defer(func() { srv.Close() })
	servers.Store(ts, srv)
	ts.Setenv("OPENAI_BASE_URL", srv.URL())
}

func server(ts *testscript.TestScript) *llmtest.Server {
	v, ok := servers.Load(ts)
	if !ok {
		ts.Fatalf("no model server: run `model SCRIPT` first")
	}
	return v.(*llmtest.Server)
}

// ratelimited MAX logs how many requests the model server answered 429
// (model -quota) and requires at most MAX (with !, more than MAX).
func cmdRateLimited(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: ratelimited MAX")
	}
	limit, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := server(ts).RateLimited()
	ts.Logf("the model server answered %d requests with 429", got)
	if (got <= limit) == neg {
		ts.Fatalf("%d requests answered 429, want at most %d (or more with !)", got, limit)
	}
}

// exitcode N PROG ARGS... runs PROG and requires exit status N; its
// output is kept for stdout/stderr checks.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// requests AGENT N requires the model server to have served N requests
// from AGENT.
func cmdRequests(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: requests AGENT N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	// A request answered 429 was never served: its retry is the request
	// that counts (ratelimited checks how many there were).
	got := 0
	for _, r := range server(ts).RequestsFor(args[0]) {
		if !r.RateLimited {
			got++
		}
	}
	if (got == want) == neg {
		ts.Fatalf("%s sent %d requests (not counting 429s), want %d", args[0], got, want)
	}
}

// sent AGENT I tools|tooldefs|text WORD... checks request I of AGENT: the
// tools it offered include (or with !, exclude) every WORD, or the JSON
// of its tool definitions, or its messages contain every WORD.
func cmdSent(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 4 {
		ts.Fatalf("usage: sent AGENT I tools|text WORD...")
	}
	reqs := server(ts).RequestsFor(args[0])
	i, err := strconv.Atoi(args[1])
	ts.Check(err)
	if i < 0 {
		i += len(reqs)
	}
	if i < 0 || i >= len(reqs) {
		ts.Fatalf("%s sent %d requests; no request %s", args[0], len(reqs), args[1])
	}
	req := reqs[i]
	var have string
	switch args[2] {
	case "tools":
		have = " " + strings.Join(req.Body.ToolNames(), " ") + " "
	case "tooldefs":
		b, err := json.Marshal(req.Body.Tools)
		ts.Check(err)
		have = string(b)
	case "text":
		var b strings.Builder
		for _, m := range req.Body.LLMMessages() {
			b.WriteString(m.Content)
			b.WriteString("\n")
		}
		have = b.String()
	case "images":
		// One line per image part: the data URL's prefix and the size the
		// decoded bytes have ("user data:image/png;base64 4x3").
		var b strings.Builder
		for _, m := range req.Body.Messages {
			for _, u := range m.ImageURLs() {
				prefix, b64, _ := strings.Cut(u, ",")
				data, err := base64.StdEncoding.DecodeString(b64)
				ts.Check(err)
				cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
				ts.Check(err)
				fmt.Fprintf(&b, "%s %s %dx%d\n", m.Role, prefix, cfg.Width, cfg.Height)
			}
		}
		have = b.String()
	default:
		ts.Fatalf("sent: want tools, tooldefs, text or images, got %q", args[2])
	}
	for _, w := range args[3:] {
		needle := w
		if args[2] == "tools" {
			needle = " " + w + " "
		}
		if strings.Contains(have, needle) == neg {
			ts.Fatalf("%s request %d: %s %q: have %s", args[0], i, map[bool]string{true: "unexpected", false: "missing"}[neg], w, strings.TrimSpace(have))
		}
	}
}

// wiretools AGENT I prints the tool names request I of AGENT offered, in
// the order of the request, comma-separated, for an exact stdout match.
func cmdWireTools(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: wiretools AGENT I")
	}
	reqs := server(ts).RequestsFor(args[0])
	i, err := strconv.Atoi(args[1])
	ts.Check(err)
	if i < 0 || i >= len(reqs) {
		ts.Fatalf("%s sent %d requests; no request %d", args[0], len(reqs), i)
	}
	fmt.Fprintln(ts.Stdout(), strings.Join(reqs[i].Body.ToolNames(), ","))
}

// leaked WORD requires some request the model server received, from any
// agent, to hold WORD in its raw body; ! leaked WORD that none does (a
// secret that must never reach the model).
func cmdLeaked(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: leaked WORD")
	}
	reqs := server(ts).Requests()
	found := -1
	for i, r := range reqs {
		if bytes.Contains(r.Raw, []byte(args[0])) {
			found = i
			break
		}
	}
	switch {
	case found >= 0 && neg:
		ts.Fatalf("request %d of %d holds %q:\n%s", found, len(reqs), args[0], reqs[found].Raw)
	case found < 0 && !neg:
		ts.Fatalf("none of the %d requests holds %q", len(reqs), args[0])
	}
}

// vartmp VAR makes a directory under /var/tmp, removed when the script
// ends, and sets VAR to it: a place outside /tmp, which bubblewrap
// replaces with a private one, so that sandboxed commands do see what the
// script puts there (a fake home).
func cmdVarTmp(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: vartmp VAR")
	}
	dir, err := os.MkdirTemp("/var/tmp", "odin-fakehome-")
	ts.Check(err)
	ts.Defer(func() { os.RemoveAll(dir) })
	dir, err = filepath.EvalSymlinks(dir)
	ts.Check(err)
	ts.Setenv(args[0], dir)
}

// mkimage FILE WxH writes a W×H PNG to FILE (txtar holds text only).
func cmdMkImage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkimage FILE WxH")
	}
	var w, h int
	_, err := fmt.Sscanf(args[1], "%dx%d", &w, &h)
	ts.Check(err)
	var b bytes.Buffer
	ts.Check(png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))))
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
}

// reqsize AGENT I [MAX] prints the size of request I of AGENT to stdout,
// for stdout checks and for the log: "bytes N tools N tooldefs N messages
// N" (the whole body, the number of tools, the bytes of their definitions,
// the bytes of the messages' text). With MAX it fails when the whole body
// is larger than MAX bytes.
func cmdReqSize(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: reqsize AGENT I [MAX]")
	}
	reqs := server(ts).RequestsFor(args[0])
	i, err := strconv.Atoi(args[1])
	ts.Check(err)
	if i < 0 {
		i += len(reqs)
	}
	if i < 0 || i >= len(reqs) {
		ts.Fatalf("%s sent %d requests; no request %s", args[0], len(reqs), args[1])
	}
	req := reqs[i]
	defs, err := json.Marshal(req.Body.Tools)
	ts.Check(err)
	text := 0
	for _, m := range req.Body.LLMMessages() {
		text += len(m.Content)
	}
	line := fmt.Sprintf("bytes %d tools %d tooldefs %d messages %d\n", len(req.Raw), len(req.Body.Tools), len(defs), text)
	ts.Logf("%s request %d: %s", args[0], i, line)
	fmt.Fprint(ts.Stdout(), line)
	if len(args) == 3 {
		limit, err := strconv.Atoi(args[2])
		ts.Check(err)
		if len(req.Raw) > limit {
			ts.Fatalf("%s request %d is %d bytes, over the %d-byte limit: %s", args[0], i, len(req.Raw), limit, line)
		}
	}
}

// serve DIR serves the files under DIR over HTTP on a loopback port for
// the rest of the script, and sets SERVE_URL (http://127.0.0.1:PORT) and
// SERVE_HOST (127.0.0.1:PORT), e.g. for web.allow_hosts.
func cmdServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: serve DIR")
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(ts.MkAbs(args[0]))))
	ts.Defer(srv.Close)
	ts.Setenv("SERVE_URL", srv.URL)
	ts.Setenv("SERVE_HOST", strings.TrimPrefix(srv.URL, "http://"))
}

// servers maps a running script to its model server.
var servers sync.Map

// attacker starts a recording HTTP server standing for a host the
// project's author controls, and sets ATTACKER_URL (http://127.0.0.1:PORT).
// It records every request whole (method, URL, headers, body) and answers
// 200 with {} (an empty search result or a broken model reply).
func cmdAttacker(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: attacker")
	}
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	ts.Defer(srv.Close)
	attackers.Store(ts, rec)
	ts.Setenv("ATTACKER_URL", srv.URL)
}

// attacked N requires the attacker server to have received N requests;
// attacked WORD requires some request to contain WORD, and ! attacked
// WORD that none does (a leaked key, say).
func cmdAttacked(ts *testscript.TestScript, neg bool, args []string) {
	v, ok := attackers.Load(ts)
	if !ok || len(args) != 1 {
		ts.Fatalf("usage: attacked N|WORD (after attacker)")
	}
	reqs := v.(*recorder).all()
	if n, err := strconv.Atoi(args[0]); err == nil {
		if (len(reqs) == n) == neg {
			ts.Fatalf("the attacker received %d requests, want %s%d:\n%s", len(reqs), map[bool]string{true: "not ", false: ""}[neg], n, strings.Join(reqs, "\n"))
		}
		return
	}
	found := false
	for _, r := range reqs {
		found = found || strings.Contains(r, args[0])
	}
	if found == neg {
		ts.Fatalf("attacker requests containing %q: %v, want %v:\n%s", args[0], found, !neg, strings.Join(reqs, "\n"))
	}
}

// recorder is an http.Handler that keeps a dump of every request.
type recorder struct {
	mu   sync.Mutex
	reqs []string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	dump, _ := httputil.DumpRequest(r, true)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, string(dump))
	rec.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

func (rec *recorder) all() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.reqs...)
}

// attackers maps a running script to its attacker server.
var attackers sync.Map
