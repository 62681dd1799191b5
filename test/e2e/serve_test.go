package e2e

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
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	ID, Type string
	Data     map[string]any
}

// apiClient talks to a running odin serve.
type apiClient struct {
	t     *testing.T
	base  string
	token string
	hc    *http.Client // its Transport, when set, carries the requests (TLS)
}

// client checks every response against openapi.yaml (checkedTransport).
func (c *apiClient) client() *http.Client {
	base := http.DefaultTransport
	if c.hc != nil && c.hc.Transport != nil {
		base = c.hc.Transport
	}
	return &http.Client{Transport: checkedTransport{t: c.t, base: base}}
}

func (c *apiClient) do(method, path string, body any, wantCode int) map[string]any {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.client().Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantCode {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, wantCode)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// stream opens the session's event stream and sends its events on the
// returned channel until the stream ends.
func (c *apiClient) stream(ctx context.Context, id, lastEventID string) <-chan sseEvent {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"/v1/sessions/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.client().Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		c.t.Fatalf("events: %s", resp.Status)
	}
	ch := make(chan sseEvent, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Type != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Type = line[7:]
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(line[6:]), &ev.Data)
			}
		}
	}()
	return ch
}

// until reads events until one of type typ, returning all read.
func until(t *testing.T, ch <-chan sseEvent, typ string) []sseEvent {
	t.Helper()
	var seen []sseEvent
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before %s; saw %v", typ, types(seen))
			}
			seen = append(seen, ev)
			if ev.Type == typ {
				return seen
			}
		case <-timeout:
			t.Fatalf("no %s event; saw %v", typ, types(seen))
		}
	}
}

func types(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// startServe runs `odin serve` in root on a free loopback port.
func startServe(t *testing.T, env []string, root string, args ...string) (*exec.Cmd, *apiClient) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "odin"), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env, cmd.Dir = env, root
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
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
	fi, err := os.Stat(m[2])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	tok, err := os.ReadFile(m[2])
	if err != nil {
		t.Fatal(err)
	}
	return cmd, &apiClient{t: t, base: m[1], token: strings.TrimSpace(string(tok))}
}

// TestServeAPI drives odin serve over HTTP: auth, roots, a streamed turn,
// an approval answered through the API, cancel, Last-Event-ID resumption
// and a graceful shutdown that ends the stream with a final event.
func TestServeAPI(t *testing.T) {
	env, root := acpEnv(t)
	// The turn the graceful shutdown cuts off is resumed by the
	// restarted server: it gets a quick answer then.
	script := acpScript(root).Add("orchestrator", llmtest.Step{When: "take your time", Text: "Resumed after the restart."})
	srv, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	writeFile(t, root, "main.go", "package main\n\nfunc main() {}\n")
	writeFile(t, root, "keep.txt", "keep\n")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}

	cmd, c := startServe(t, env, root)

	// No token, a wrong token: refused, and no session is created.
	for _, tok := range []string{"", "wrong"} {
		bad := &apiClient{t: t, base: c.base, token: tok}
		bad.do("POST", "/v1/sessions", map[string]string{"project": root}, http.StatusUnauthorized)
	}
	resp, err := c.client().Get(c.base + "/openapi.yaml")
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("openapi without token: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	// Outside the roots, directly or through a symlink: refused.
	c.do("POST", "/v1/sessions", map[string]string{"project": outside}, http.StatusForbidden)
	c.do("POST", "/v1/sessions", map[string]string{"project": filepath.Join(root, "escape")}, http.StatusForbidden)
	var list []any
	req, _ := http.NewRequest("GET", c.base+"/v1/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if resp, err := c.client().Do(req); err == nil {
		_ = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
	}
	if len(list) != 0 {
		t.Fatalf("sessions after refused creations: %v", list)
	}

	sess := c.do("POST", "/v1/sessions", map[string]string{"project": root}, http.StatusCreated)
	id := sess["id"].(string)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evs := c.stream(ctx, id, "")

	// A streamed turn.
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "what is in main.go?", "mode": "ask"}, http.StatusAccepted)
	seen := until(t, evs, "turn_finished")
	last := seen[len(seen)-1]
	res := last.Data["result"].(map[string]any)
	if res["answer"] != "It is a Go main package." || res["status"] != "done" {
		t.Errorf("turn result %v", res)
	}
	if !strings.Contains(strings.Join(types(seen), " "), "tool_started") {
		t.Errorf("no tool_started event in %v", types(seen))
	}
	firstID := seen[0].ID

	// An approval answered through the API: deny keeps the file, then once
	// lets the command run.
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "delete keep.txt"}, http.StatusAccepted)
	ap := until(t, evs, "approval_requested")
	apID := ap[len(ap)-1].Data["id"].(string)
	c.do("POST", "/v1/sessions/"+id+"/approvals/"+apID, map[string]string{"decision": "maybe"}, http.StatusBadRequest)
	c.do("POST", "/v1/sessions/"+id+"/approvals/"+apID, map[string]string{"decision": "deny"}, http.StatusNoContent)
	until(t, evs, "turn_finished")
	if _, err := os.Stat(filepath.Join(root, "keep.txt")); err != nil {
		t.Fatalf("keep.txt gone after a denied approval: %v", err)
	}
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "delete keep.txt now"}, http.StatusAccepted)
	ap = until(t, evs, "approval_requested")
	c.do("POST", "/v1/sessions/"+id+"/approvals/"+ap[len(ap)-1].Data["id"].(string), map[string]string{"decision": "once"}, http.StatusNoContent)
	until(t, evs, "turn_finished")
	if _, err := os.Stat(filepath.Join(root, "keep.txt")); !os.IsNotExist(err) {
		t.Fatalf("keep.txt still there after the approval: %v", err)
	}

	// Cancel.
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "take your time"}, http.StatusAccepted)
	waitRequests(t, srv, 7)
	c.do("POST", "/v1/sessions/"+id+"/cancel", nil, http.StatusAccepted)
	seen = until(t, evs, "turn_finished")
	if st := seen[len(seen)-1].Data["result"].(map[string]any)["status"]; st != "cancelled" {
		t.Errorf("cancelled turn status %v", st)
	}

	// Export and undo.
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "write notes"}, http.StatusAccepted)
	until(t, evs, "turn_finished")
	if _, err := os.Stat(filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	undone := c.do("POST", "/v1/sessions/"+id+"/undo", nil, http.StatusOK)
	if !strings.Contains(fmt.Sprint(undone["restored"]), "notes.txt") {
		t.Errorf("undo said %v", undone)
	}
	if _, err := os.Stat(filepath.Join(root, "notes.txt")); !os.IsNotExist(err) {
		t.Errorf("notes.txt still there after undo: %v", err)
	}
	req, _ = http.NewRequest("GET", c.base+"/v1/sessions/"+id+"/export?format=markdown", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if resp, err := c.client().Do(req); err != nil {
		t.Error(err)
	} else {
		md, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(md), "what is in main.go?") || !strings.Contains(string(md), "Wrote notes.") {
			t.Errorf("export: %s\n%s", resp.Status, md)
		}
	}

	// Reconnecting with Last-Event-ID resumes right after that event.
	ctx2, cancel2 := context.WithCancel(context.Background())
	again := c.stream(ctx2, id, firstID)
	first := <-again
	if want := fmt.Sprint(mustAtoi(t, firstID) + 1); first.ID != want {
		t.Errorf("resumed stream starts at id %s, want %s", first.ID, want)
	}
	cancel2()

	// Graceful shutdown: a running turn is cancelled and saved, the stream
	// gets a final event, the process exits 0.
	sent := len(srv.RequestsFor("orchestrator"))
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "take your time"}, http.StatusAccepted)
	until(t, evs, "turn_started")
	// The turn's model request is out (and takes the script's held step)
	// before the signal: a turn stopped before its request would leave
	// that step to the resumed turn, which would then wait a minute.
	waitRequests(t, srv, sent+1)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	seen = until(t, evs, "shutdown")
	if !strings.Contains(strings.Join(types(seen), " "), "turn_finished") {
		t.Errorf("no turn_finished before shutdown: %v", types(seen))
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("odin serve exited with %v", err)
	}

	// After a restart — this time over TLS — the stored session is served
	// again: the server opened it as it started, since the shutdown cut
	// off one of its turns, which it resumes; the next message goes on
	// with its history.
	certFile, keyFile, pool := selfSignedCert(t)
	_, c = startServe(t, env, root, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(c.base, "https://") {
		t.Fatalf("serve with --tls-cert listens on %s", c.base)
	}
	c.hc = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	plain := &apiClient{t: t, base: "http://" + strings.TrimPrefix(c.base, "https://"), token: c.token}
	// Go's TLS server answers this one itself, outside the API: unchecked.
	if resp, err := http.DefaultClient.Get(plain.base + "/v1/sessions"); err == nil {
		if resp.StatusCode < 400 {
			t.Errorf("plain HTTP to the TLS listener answered %s", resp.Status)
		}
		resp.Body.Close()
	}
	c.do("GET", "/v1/sessions/not-a-session", nil, http.StatusNotFound)
	info := c.do("GET", "/v1/sessions/"+id, nil, http.StatusOK)
	if info["active"] != true {
		t.Errorf("a stored session with an interrupted turn is %v after a restart, want active (resumed)", info)
	}
	waitExport(t, c, id, "Resumed after the restart.")
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	evs = c.stream(ctx3, id, "")
	c.do("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "after the restart, what did I ask first?", "mode": "ask"}, http.StatusAccepted)
	seen = until(t, evs, "turn_finished")
	if res := seen[len(seen)-1].Data["result"].(map[string]any); res["answer"] != "You asked about main.go." {
		t.Errorf("turn after restart: %v", res)
	}
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Raw); !strings.Contains(body, "what is in main.go?") {
		t.Errorf("the restored session's request lacks its history:\n%.2000s", body)
	}
}

// selfSignedCert writes a certificate for 127.0.0.1 and its key, and
// returns their files and a pool trusting the certificate.
func selfSignedCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "odin test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
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
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func mustAtoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestServeListenAndTokenSafety: a non-loopback address without TLS
// settings is refused before anything listens, and so is a token file
// others can read.
func TestServeListenAndTokenSafety(t *testing.T) {
	env, root := acpEnv(t)
	env = append(env, "OPENAI_BASE_URL=http://127.0.0.1:1/v1")
	run := func(args ...string) (int, string) {
		cmd := exec.Command(filepath.Join(binDir, "odin"), append([]string{"serve"}, args...)...)
		cmd.Env, cmd.Dir = env, root
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := run("--listen", "0.0.0.0:0")
	if code != 2 || !strings.Contains(out, "not a loopback address") || strings.Contains(out, "listening") {
		t.Errorf("public listen without TLS: exit %d\n%s", code, out)
	}
	stateDir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			stateDir = v
		}
	}
	tok := filepath.Join(stateDir, "odin", "serve", "token")
	if err := os.MkdirAll(filepath.Dir(tok), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tok, []byte("leaked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = run()
	if code != 2 || !strings.Contains(out, "readable by others") || strings.Contains(out, "listening") {
		t.Errorf("world-readable token file: exit %d\n%s", code, out)
	}
}
