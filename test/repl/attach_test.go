package repl

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// served is an `odin serve` child process with its scripted model.
type served struct {
	t     *testing.T
	URL   string
	Token string
	Root  string
	State string
	Srv   *llmtest.Server
	hc    *http.Client // nil: http.DefaultClient
	// stop ends the server (SIGTERM) and reaps it.
	stop func()
}

// startServed runs `odin serve` on a free loopback port in a fresh
// project; the process is stopped (SIGTERM, then SIGKILL) and reaped at
// the end of the test.
func startServed(t *testing.T, script *llmtest.Script, args ...string) *served {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	srv := llmtest.NewServer(t, script, llmtest.WithVars(map[string]string{"root": root}))
	return serveIn(t, root, state, srv, "127.0.0.1:0", args...)
}

// serveIn runs `odin serve` on listen with the project, state and model
// given, and returns when it listens.
func serveIn(t *testing.T, root, state string, srv *llmtest.Server, listen string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(odinBin, append([]string{"serve", "--listen", listen}, args...)...)
	cmd.Dir = root
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + state,
		"XDG_STATE_HOME=" + filepath.Join(state, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(state, "config"),
		"OPENAI_BASE_URL=" + srv.URL(),
		"OPENAI_API_KEY=test",
		"ODIN_MODELS_MAIN=scripted-model",
		"ODIN_MODELS_SMALL=scripted-model",
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("odin serve stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("odin serve printed no address: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`listening on (https?://\S+) \(token in (\S+);`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("odin serve said %q", line)
	}
	tok, err := os.ReadFile(m[2])
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return &served{t: t, URL: m[1], Token: strings.TrimSpace(string(tok)), Root: root, State: state, Srv: srv, stop: func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
	}}
}

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

// api is a plain API call, as a second client (a script, the web viewer)
// makes it.
func (s *served) api(method, path string, hdr map[string]string, body any, want int) []byte {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.Token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	hc := s.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		s.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	return raw
}

func (s *served) create() string {
	s.t.Helper()
	var info struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(s.api("POST", "/v1/sessions", nil, map[string]string{"project": s.Root}, 201), &info); err != nil {
		s.t.Fatal(err)
	}
	return info.ID
}

// idle waits until the session has no input in flight.
func (s *served) idle(id string) {
	s.t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		var info struct {
			InFlight int `json:"in_flight"`
		}
		_ = json.Unmarshal(s.api("GET", "/v1/sessions/"+id, nil, nil, 200), &info)
		if info.InFlight == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("session %s still busy after %s", id, waitFor)
}

// attach runs `odin attach` in a pseudo-terminal, on the served machine
// (same state directory: the recorded address and token file).
func (s *served) attach(args ...string) *term {
	return start(s.t, &llmtest.Script{}, options{root: s.Root, state: s.State, args: append([]string{"attach"}, args...)})
}

// countedRun is a command the test can count (each run appends a line)
// that edit mode asks about (rm -r is destructive).
func countedRun() llmtest.Step {
	return llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "ExecuteCommand",
		Arguments: llmtest.Args(map[string]any{"command": "rm -rf build && echo ran >> ran.txt"})}}}
}

// afterRun is the model's step once the command's result is in.
const afterRun = "Exit code: 0"

func ranLines(t *testing.T, root string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "ran.txt"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "ran\n")
}

// TestAttach: attach to a session odin serve hosts, type, see the streamed
// answer, approve a command (it runs once), detach; the session goes on
// (a turn sent by another client while detached runs and is stored), and
// attaching again shows the history.
func TestAttach(t *testing.T) {
	s := startServed(t, steps(
		llmtest.Step{When: "say hello", Text: "hello from the served session", ChunkSize: 3},
		llmtest.Step{When: "run the command", ToolCalls: countedRun().ToolCalls},
		llmtest.Step{When: afterRun, Text: "the command ran"},
		llmtest.Step{When: "while away", Text: "done while you were away"},
	))
	id := s.create()
	tm := s.attach(id[:8])
	tm.Expect("odin attach")
	tm.Expect("session " + id[:8])
	tm.Expect("edit ❯")
	tm.Type("say hello" + enter)
	tm.Expect("❯ [edit] say hello")
	tm.Expect("hello from the served session")

	tm.Type("run the command" + enter)
	tm.Expect("approval needed: orchestrator asks to run ExecuteCommand")
	tm.Expect("1 allow once · 2 allow for this session · 3 deny")
	tm.Type("1" + enter)
	tm.Expect("allowed once: ExecuteCommand")
	tm.Expect("the command ran")
	if n := ranLines(t, s.Root); n != 1 {
		t.Fatalf("the approved command ran %d times, want 1", n)
	}

	tm.Type("/detach" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("detach: %v", err)
	}
	tm.Expect("detached from session " + id[:8]) // read after the exit: the pty may lag
	// The session is the server's: it takes input from another client.
	s.api("POST", "/v1/sessions/"+id+"/messages", map[string]string{"Idempotency-Key": "away-1"}, map[string]string{"body": "work while away"}, 202)
	s.idle(id)

	again := s.attach(id, "--history", "5")
	again.Expect("the last 3 of 3 turn(s)")
	again.Expect("❯ say hello")
	again.Expect("odin: hello from the served session")
	again.Expect("❯ run the command")
	again.Expect("odin: the command ran")
	again.Expect("❯ work while away")
	again.Expect("odin: done while you were away")
	again.Expect("edit ❯")
	again.Type(ctrlD)
	if err := again.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if n := ranLines(t, s.Root); n != 1 {
		t.Fatalf("the command ran %d times after reattaching, want 1", n)
	}
}

// TestAttachApprovalAnsweredElsewhere: another client answers the
// approval first; the attached REPL's prompt goes away with a note and the
// command runs once.
func TestAttachApprovalAnsweredElsewhere(t *testing.T) {
	s := startServed(t, steps(
		countedRun(),
		llmtest.Step{When: afterRun, Text: "finished after the other client's answer"},
	))
	id := s.create()
	tm := s.attach(id)
	tm.Expect("edit ❯")
	tm.Type("run the command" + enter)
	tm.Expect("approval needed: orchestrator asks to run ExecuteCommand")
	var pending []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(s.api("GET", "/v1/sessions/"+id+"/approvals", nil, nil, 200), &pending); err != nil || len(pending) != 1 {
		t.Fatalf("pending approvals: %v %v", pending, err)
	}
	s.api("POST", "/v1/sessions/"+id+"/approvals/"+pending[0].ID, nil, map[string]string{"decision": "once"}, 204)
	tm.Expect("allowed once elsewhere: ExecuteCommand")
	tm.Expect("finished after the other client's answer")
	screen := tm.screen()
	if after := screen[strings.LastIndex(screen, "allowed once elsewhere"):]; strings.Contains(after, "1 allow once") {
		t.Errorf("the approval prompt is still shown after the other client's answer:\n%s", after)
	}
	if n := ranLines(t, s.Root); n != 1 {
		t.Fatalf("the command ran %d times, want 1", n)
	}
	tm.Type(ctrlD)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// TestAttachResumesAfterADroppedConnection: the connection to odin serve
// drops (a proxy in between cuts it and refuses new ones); a turn another
// client sends meanwhile is shown once the REPL reconnects after the last
// event it saw: nothing lost, nothing shown twice. When the server no
// longer holds those events (the idle session was passivated, which drops
// its buffer), it says resync and the REPL tells the missed turn from the
// stored history instead.
func TestAttachResumesAfterADroppedConnection(t *testing.T) {
	tests := []struct {
		name      string
		serveArgs []string
		passivate bool
		missed    []string // what shows the missed turn, in order
	}{
		{"events still held", nil, false, []string{"reconnected to odin serve", "❯ [edit] second", "bravo answer line"}},
		{"session passivated: resync", []string{"--idle", "1s"}, true, []string{"reconnected to odin serve", "1 turn(s) ran while the events were missed", "❯ second", "odin: bravo answer line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each answer comes in one piece, whole lines: the REPL's live
			// area never shows part of one, so each printed line is on the
			// screen exactly as often as it was printed.
			s := startServed(t, steps(
				llmtest.Step{When: "first", Text: "alpha answer line\n\nalpha second line\n", ChunkSize: 1000},
				llmtest.Step{When: "second", Text: "bravo answer line\n", ChunkSize: 1000},
				llmtest.Step{When: "third", Text: "charlie answer line\n", ChunkSize: 1000},
			), tt.serveArgs...)
			id := s.create()
			px := newCutProxy(t, strings.TrimPrefix(s.URL, "http://"))
			tm := s.attach(id, "--server", "http://"+px.addr())
			tm.Expect("edit ❯")
			tm.Type("first" + enter)
			tm.Expect("alpha second line")

			px.cut(true)
			tm.Expect("connection to odin serve lost")
			s.api("POST", "/v1/sessions/"+id+"/messages", map[string]string{"Idempotency-Key": "second-1"}, map[string]string{"body": "second"}, 202)
			s.idle(id)
			if tt.passivate {
				s.passivated(id)
			}
			px.cut(false)
			for _, want := range tt.missed {
				tm.Expect(want)
			}
			tm.Type("third" + enter)
			tm.Expect("charlie answer line")
			screen := tm.screen()
			for _, line := range append([]string{"alpha answer line", "alpha second line", "charlie answer line"}, tt.missed...) {
				if n := strings.Count(screen, line); n != 1 {
					t.Errorf("%q shown %d times, want once", line, n)
				}
			}
			tm.Type("/detach" + enter)
			if err := tm.Exited(); err != nil {
				t.Fatalf("exit: %v", err)
			}
		})
	}
}

// passivated waits until the server has passivated the session.
func (s *served) passivated(id string) {
	s.t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		var info struct {
			Active bool `json:"active"`
		}
		_ = json.Unmarshal(s.api("GET", "/v1/sessions/"+id, nil, nil, 200), &info)
		if !info.Active {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("session %s not passivated after %s", id, waitFor)
}

// cutProxy forwards TCP to odin serve; cut(true) drops every connection
// and refuses new ones until cut(false).
type cutProxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{t: t, ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut(true) })
	go p.serve()
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close(); c.Close() }()
		go func() { _, _ = io.Copy(c, up); up.Close(); c.Close() }()
	}
}

func (p *cutProxy) cut(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

// TestAttachOverTLSWithAToken: attach from another machine's view (its own
// state directory: no recorded address, no token file) to a server with a
// TLS certificate, trusting it with --tls-ca and giving the token in the
// environment; plain http to a non-loopback address is refused before
// anything is sent.
func TestAttachOverTLSWithAToken(t *testing.T) {
	cert, key := selfSigned(t)
	s := startServed(t, steps(llmtest.Step{When: "over tls", Text: "answered over tls"}), "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(s.URL, "https://") {
		t.Fatalf("odin serve with a certificate listens on %s", s.URL)
	}
	var info struct {
		ID string `json:"id"`
	}
	s.hc = tlsClient(t, cert)
	if err := json.Unmarshal(s.api("POST", "/v1/sessions", nil, map[string]string{"project": s.Root}, 201), &info); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	tm := start(t, &llmtest.Script{}, options{state: elsewhere, args: []string{"attach", info.ID[:8], "--server", s.URL, "--tls-ca", cert},
		env: []string{"ODIN_SERVE_TOKEN=" + s.Token}})
	tm.Expect("edit ❯")
	tm.Type("over tls" + enter)
	tm.Expect("answered over tls")
	tm.Type("/detach" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}

	// Without the token: a clear error naming the flag and the variable.
	isolated := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + elsewhere, "XDG_STATE_HOME=" + filepath.Join(elsewhere, "state")}
	cmd := exec.Command(odinBin, "attach", info.ID, "--server", s.URL, "--tls-ca", cert)
	cmd.Env = isolated
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--token") || !strings.Contains(string(out), "ODIN_SERVE_TOKEN") {
		t.Errorf("attach without a token: %v\n%s", err, out)
	}
	// Without a terminal: refused (line mode would deny every approval of
	// a session others may be answering).
	cmd = exec.Command(odinBin, "attach", info.ID, "--server", s.URL, "--tls-ca", cert)
	cmd.Env = append(isolated, "ODIN_SERVE_TOKEN="+s.Token)
	cmd.Stdin = strings.NewReader("hello\n")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "needs a terminal") {
		t.Errorf("attach without a terminal: %v\n%s", err, out)
	}
	// Plain http beyond loopback: refused as a usage error before any
	// request (the host does not even resolve here).
	cmd = exec.Command(odinBin, "attach", info.ID, "--server", "http://odin.invalid:7700")
	cmd.Env = append(isolated, "ODIN_SERVE_TOKEN="+s.Token)
	out, err = cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "plain http beyond loopback") {
		t.Errorf("attach over plain http to a remote host: %v\n%s", err, out)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "odin attach test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// tlsClient trusts the certificate in certFile.
func tlsClient(t *testing.T, certFile string) *http.Client {
	t.Helper()
	b, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatal("no certificate in " + certFile)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// TestAttachQueueCancelAndCtrlC: type-ahead is queued on the server and
// listed by /queue; /cancel cancels the running turn and the queued input
// runs; Ctrl-C cancels a turn and a second Ctrl-C detaches.
func TestAttachQueueCancelAndCtrlC(t *testing.T) {
	s := startServed(t, steps(
		llmtest.Step{When: "long task", Hold: "long", Text: "never shown"},
		llmtest.Step{When: "queued task", Text: "the queued answer"},
		llmtest.Step{When: "long again", Hold: "again", Text: "never shown either"},
	))
	id := s.create()
	tm := s.attach(id)
	tm.Expect("edit ❯")
	tm.Type("long task" + enter)
	tm.Expect("❯ [edit] long task")
	waitHeld(t, s.Srv, "long")
	tm.Type("queued task" + enter)
	tm.Expect("⏵ queued edit queued task")
	tm.Type("/queue" + enter)
	tm.Expect("1. [edit] queued task")
	var qs struct {
		Queued []struct {
			Body string `json:"body"`
		} `json:"queued"`
	}
	if err := json.Unmarshal(s.api("GET", "/v1/sessions/"+id+"/queue", nil, nil, 200), &qs); err != nil || len(qs.Queued) != 1 || qs.Queued[0].Body != "queued task" {
		t.Fatalf("the server's queue: %+v %v", qs, err)
	}
	tm.Type("/cancel" + enter)
	tm.Expect("⏹ cancelled")
	tm.Expect("❯ [edit] queued task")
	tm.Expect("the queued answer")

	tm.Type("long again" + enter)
	waitHeld(t, s.Srv, "again")
	// Ctrl-C cancels once the REPL shows the turn running (its event
	// came); before, it is a Ctrl-C on an idle prompt.
	tm.Expect("❯ [edit] long again")
	tm.Type(ctrlC)
	tm.Expect("Ctrl-C again detaches")
	tm.Type(ctrlC)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	tm.Expect("detached from session")
	// The first Ctrl-C cancelled the turn on the server; the session is
	// still there, idle.
	s.idle(id)
	if strings.Contains(tm.screen(), "never shown") {
		t.Error("a cancelled turn's answer was shown")
	}
}

func waitHeld(t *testing.T, srv *llmtest.Server, gate string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := srv.WaitHeld(ctx, gate); err != nil {
		t.Fatal(err)
	}
}

// TestAttachShowsAPendingApproval: attaching to a session whose turn
// (sent by another client) waits on an approval shows the running turn
// and the approval; answering it here runs the command once.
func TestAttachShowsAPendingApproval(t *testing.T) {
	s := startServed(t, steps(
		countedRun(),
		llmtest.Step{When: afterRun, Text: "ran after the late answer"},
	))
	id := s.create()
	s.api("POST", "/v1/sessions/"+id+"/messages", map[string]string{"Idempotency-Key": "k1"}, map[string]string{"body": "run the command"}, 202)
	deadline := time.Now().Add(waitFor)
	for {
		var pending []json.RawMessage
		_ = json.Unmarshal(s.api("GET", "/v1/sessions/"+id+"/approvals", nil, nil, 200), &pending)
		if len(pending) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no pending approval")
		}
		time.Sleep(50 * time.Millisecond)
	}
	tm := s.attach(id)
	tm.Expect("❯ [edit] run the command")
	tm.Expect("approval needed: orchestrator asks to run ExecuteCommand")
	if n := ranLines(t, s.Root); n != 0 {
		t.Fatalf("the command ran %d times before the answer", n)
	}
	tm.Type("1" + enter)
	tm.Expect("allowed once: ExecuteCommand")
	tm.Expect("ran after the late answer")
	if n := ranLines(t, s.Root); n != 1 {
		t.Fatalf("the command ran %d times, want 1", n)
	}
	tm.Type(ctrlD)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// TestAttachAcrossAServerRestart: odin serve stops (its stream ends with
// "shutdown") and starts again on the same address; its events are
// numbered from 1 again, and the attached REPL, which had seen more than
// that, still shows the next turn.
func TestAttachAcrossAServerRestart(t *testing.T) {
	s := startServed(t, steps(
		llmtest.Step{When: "before", Text: "answer before the restart\n", ChunkSize: 1000},
		llmtest.Step{When: "after", Text: "answer after the restart\n", ChunkSize: 1000},
	))
	id := s.create()
	tm := s.attach(id, "--server", s.URL)
	tm.Expect("edit ❯")
	tm.Type("before" + enter)
	tm.Expect("answer before the restart")
	s.stop()
	tm.Expect("odin serve is shutting down")
	again := serveIn(t, s.Root, s.State, s.Srv, strings.TrimPrefix(s.URL, "http://"))
	tm.Expect("odin serve restarted")
	tm.Expect("reconnected to odin serve")
	// The restarted server holds the session in its store only: a short
	// message from another client makes it live, and its events flow.
	again.api("POST", "/v1/sessions/"+id+"/messages", map[string]string{"Idempotency-Key": "after-1"}, map[string]string{"body": "after"}, 202)
	tm.Expect("❯ [edit] after")
	tm.Expect("answer after the restart")
	tm.Type("/detach" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}
