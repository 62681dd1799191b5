package tape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func post(t *testing.T, rt http.RoundTripper, url, agent, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("X-Odin-Agent", agent)
	req.Header.Set("Authorization", "Bearer sk-secret-key-123456")
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRecordThenReplay: a recording made over real HTTP replays the same
// responses with no server, byte for byte, in order per agent; keys are
// absent from the tape; a changed request is reported at its first
// differing path; a request beyond the recording fails.
func TestRecordThenReplay(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"n\":%d,\"echo\":%q}\n\ndata: [DONE]\n\n", n, r.Header.Get("X-Odin-Agent"))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "run.tape")
	rec, err := Create(path, Header{Task: "do it", Mode: "edit"}, []string{"sk-secret-key-123456"})
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, c := range []struct{ agent, body string }{
		{"orchestrator", `{"model":"m","messages":[{"role":"user","content":"do it"}]}`},
		{"code", `{"model":"m","messages":[{"role":"user","content":"brief sk-secret-key-123456"}]}`},
		{"orchestrator", `{"model":"m","messages":[{"role":"user","content":"do it"},{"role":"tool","content":"ok"}]}`},
	} {
		_, b := post(t, rec, srv.URL, c.agent, c.body)
		live = append(live, b)
	}
	if err := rec.Finish(Outcome{Status: "done", Answer: "Done.", Gates: []string{"review 1: passed"}}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("sk-secret-key-123456")) {
		t.Fatal("the key is in the tape")
	}
	tp, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Exchanges) != 3 || tp.Outcome == nil || tp.Outcome.Answer != "Done." || tp.Header.Task != "do it" {
		t.Fatalf("tape: %+v", tp)
	}
	srv.Close() // no server from here on

	p := NewPlayer(tp)
	// The code request comes first this time: per-agent order still holds.
	_, b := post(t, p, "http://replay.invalid", "code", `{"model":"m","messages":[{"role":"user","content":"brief sk-secret-key-123456"}]}`)
	if b != live[1] {
		t.Errorf("code replayed %q, recorded %q", b, live[1])
	}
	_, b = post(t, p, "http://replay.invalid", "orchestrator", `{"model":"m","messages":[{"role":"user","content":"do it"}]}`)
	if b != live[0] {
		t.Errorf("orchestrator 1 replayed %q, recorded %q", b, live[0])
	}
	if r := p.Report(); len(r.Divergences) != 1 || r.Divergences[0].Agent != "code" {
		// The tape holds the redacted brief, so the live one differs there.
		t.Errorf("divergences: %+v", r.Divergences)
	}
	_, b = post(t, p, "http://replay.invalid", "orchestrator", `{"model":"m","messages":[{"role":"user","content":"do it"},{"role":"tool","content":"changed"}]}`)
	if b != live[2] {
		t.Errorf("orchestrator 2 replayed %q", b)
	}
	r := p.Report()
	if len(r.Divergences) != 2 {
		t.Fatalf("divergences: %+v", r.Divergences)
	}
	d := r.Divergences[1]
	if d.Agent != "orchestrator" || d.Index != 2 || d.Where != "messages[1].content (from character 0)" || d.Was != `"ok"` || d.Now != `"changed"` {
		t.Errorf("divergence: %+v (%s)", d, d)
	}
	if code, _ := post(t, p, "http://replay.invalid", "orchestrator", `{}`); code != http.StatusBadRequest {
		t.Errorf("a request beyond the tape: %d", code)
	}
	if r := p.Report(); r.Served != 3 || r.Unused != 0 || len(r.Divergences) != 3 {
		t.Errorf("report: %+v", r)
	}
}

// TestFenceNoncesAreNotDivergences: two runs fence untrusted data with
// different random nonces; that alone is no divergence, a changed word is.
func TestFenceNoncesAreNotDivergences(t *testing.T) {
	rec := json.RawMessage(`{"messages":[{"content":"<<<UNTRUSTED_DATA nonce=UFWSKPMVR3XMAS4XM7ICV2YQEI>>> x <<<END_UNTRUSTED_DATA nonce=UFWSKPMVR3XMAS4XM7ICV2YQEI>>>"}]}`)
	now := []byte(`{"messages":[{"content":"<<<UNTRUSTED_DATA nonce=L6P5ADDEPJJ3IVGCNG7YCAQLNX>>> x <<<END_UNTRUSTED_DATA nonce=L6P5ADDEPJJ3IVGCNG7YCAQLNX>>>"}]}`)
	if where, _, _, same := firstDiff(rec, now); !same {
		t.Errorf("nonces alone diverged at %s", where)
	}
	timed := func(d string) []byte {
		return []byte(`{"messages":[{"content":"ok  \texample.com/api\t` + d + `\n"}]}`)
	}
	if where, _, _, same := firstDiff(json.RawMessage(timed("0.005s")), timed("0.010s")); !same {
		t.Errorf("go test's timing alone diverged at %s", where)
	}
	if _, _, _, same := firstDiff(json.RawMessage(timed("0.005s")), []byte(`{"messages":[{"content":"FAIL\texample.com/api\t0.005s\n"}]}`)); same {
		t.Error("ok turned FAIL was not a divergence")
	}
	changed := bytes.Replace(now, []byte(" x "), []byte(" y "), 1)
	if _, _, _, same := firstDiff(rec, changed); same {
		t.Error("a changed word inside the fence was not a divergence")
	}
}
