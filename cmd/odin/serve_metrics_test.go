package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrape reads /metrics into sample name (with labels) -> value.
func (e *loadEnv) scrape(t *testing.T, token string) (int, map[string]float64) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.http.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("bad sample line %q", line)
		}
		out[line[:i]] = v
	}
	return resp.StatusCode, out
}

// TestServeMetrics: /metrics needs the token, and after one turn of a
// real session (real store, scripted model over HTTP) the turn, model,
// token and store figures have moved.
func TestServeMetrics(t *testing.T) {
	e := newLoadEnv(t, 1, time.Hour, false)
	defer e.close()
	if code, _ := e.scrape(t, "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("metrics with a wrong token: %d, want 401", code)
	}
	_, before := e.scrape(t, e.token)
	code, s, err := e.call("POST", "/v1/sessions", map[string]string{"project": e.root})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create: %d %v %v", code, s, err)
	}
	id := s["id"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	evs, err := e.stream(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, err := e.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "hello"}); err != nil || code != http.StatusAccepted {
		t.Fatalf("message: %d %v %v", code, out, err)
	}
	for ev := range evs {
		if ev.typ == "turn_finished" {
			break
		}
	}
	_, after := e.scrape(t, e.token)
	moved := func(name string) {
		t.Helper()
		if after[name] <= before[name] {
			t.Errorf("%s: %v before the turn, %v after; want it to grow", name, before[name], after[name])
		}
	}
	moved(`odin_serve_turns_finished_total{status="done"}`)
	moved(`odin_model_request_seconds_count`)
	moved(`odin_model_request_seconds_bucket{le="+Inf"}`)
	moved(`odin_model_tokens_total{kind="prompt"}`)
	moved(`odin_model_tokens_total{kind="completion"}`)
	moved(`odin_store_write_seconds_count`)
	if got := after[`odin_serve_sessions{state="active"}`]; got != 1 {
		t.Errorf("active sessions %v, want 1", got)
	}
	if got := after[`odin_serve_event_streams`]; got != 1 {
		t.Errorf("event streams %v, want 1", got)
	}
	for _, name := range []string{"go_goroutines", "process_open_fds", "process_resident_memory_bytes"} {
		if after[name] <= 0 {
			t.Errorf("%s = %v", name, after[name])
		}
	}
	if _, ok := after["odin_journal_queued_writes"]; !ok {
		t.Error("no odin_journal_queued_writes")
	}
	// Passivated: the session moves from active to passivated.
	e.srv.SetIdle(0)
	if n := e.srv.Sweep(); n != 1 {
		t.Fatalf("passivated %d sessions", n)
	}
	_, swept := e.scrape(t, e.token)
	if swept[`odin_serve_sessions{state="active"}`] != 0 || swept[`odin_serve_sessions{state="passivated"}`] != 1 || swept[`odin_serve_passivations_total`] != 1 {
		t.Errorf("after passivation: active %v passivated %v passivations %v", swept[`odin_serve_sessions{state="active"}`],
			swept[`odin_serve_sessions{state="passivated"}`], swept[`odin_serve_passivations_total`])
	}
}
