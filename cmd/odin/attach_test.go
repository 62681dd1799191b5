package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAttachServer(t *testing.T) {
	state := t.TempDir()
	if err := os.MkdirAll(filepath.Join(state, "serve"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "serve", "token"), []byte("local-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	envToken := func(k string) string {
		if k == attachTokenEnv {
			return "env-token"
		}
		return ""
	}
	tests := []struct {
		name      string
		f         attachFlags
		addr      string // the recorded address of a local serve; "" none
		env       func(string) string
		wantBase  string
		wantToken string
		wantErr   string
	}{
		{name: "no server anywhere", env: noEnv, wantErr: "no local odin serve is running"},
		{name: "the local serve", addr: "http://127.0.0.1:7700\n", env: noEnv, wantBase: "http://127.0.0.1:7700", wantToken: "local-token"},
		{name: "flag token wins", f: attachFlags{server: "http://localhost:7700", token: "flag-token"}, env: envToken, wantBase: "http://localhost:7700", wantToken: "flag-token"},
		{name: "env token before the file", f: attachFlags{server: "http://[::1]:7700/"}, env: envToken, wantBase: "http://[::1]:7700", wantToken: "env-token"},
		{name: "plain http beyond loopback", f: attachFlags{server: "http://10.1.2.3:7700", token: "x"}, env: noEnv, wantErr: "plain http beyond loopback"},
		{name: "remote https needs a token", f: attachFlags{server: "https://odin.example:7700"}, env: noEnv, wantErr: "--token"},
		{name: "remote https with a token", f: attachFlags{server: "https://odin.example:7700"}, env: envToken, wantBase: "https://odin.example:7700", wantToken: "env-token"},
		{name: "not a URL", f: attachFlags{server: "odin.example:7700"}, env: envToken, wantErr: "want http(s)://host:port"},
		{name: "credentials in the URL", f: attachFlags{server: "https://u:p@odin.example"}, env: envToken, wantErr: "no credentials in the URL"},
		{name: "bad CA file", f: attachFlags{server: "https://odin.example", tlsCA: filepath.Join(state, "serve", "token")}, env: envToken, wantErr: "no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(serveAddrFile(state))
			if tt.addr != "" {
				if err := os.WriteFile(serveAddrFile(state), []byte(tt.addr), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := attachServer(&tt.f, state, tt.env)
			if tt.wantErr != "" {
				var ee *exitError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &ee) || ee.code != exitUsage {
					t.Fatalf("err = %v, want a usage error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tt.wantBase, tt.wantToken}, []string{got.base, got.token}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadSSE(t *testing.T) {
	stream := ": odin events\n\n" +
		"id: 7\nevent: text_delta\ndata: {\"type\":\"text_delta\",\"text\":\"a\"}\n\n" +
		"event: resync\r\ndata: {\"type\":\"resync\",\"after\":3}\r\n\r\n" +
		"id: 9\nevent: notice\ndata: {\"a\":1}\ndata: {\"b\":2}\n\n" +
		"id: 10\nevent: cut"
	var got []sseRecord
	err := readSSE(strings.NewReader(stream), func(r sseRecord) bool { got = append(got, r); return true })
	if err == nil {
		t.Error("a stream cut mid-event ends with an error")
	}
	want := []sseRecord{
		{id: 7, typ: "text_delta", data: []byte(`{"type":"text_delta","text":"a"}`)},
		{typ: "resync", data: []byte(`{"type":"resync","after":3}`)},
		{id: 9, typ: "notice", data: []byte("{\"a\":1}\n{\"b\":2}")},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(sseRecord{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeAttachEvent(t *testing.T) {
	env, ok, err := decodeAttachEvent("approval_requested", []byte(`{"type":"approval_requested","session":"s1","time":"2026-11-28T10:00:00Z","id":"ap1","agent":"orchestrator","tool":"ExecuteCommand","subject":"rm -rf build"}`))
	if err != nil || !ok {
		t.Fatalf("decode: ok=%v err=%v", ok, err)
	}
	if env.Session != "s1" || env.Time.IsZero() {
		t.Errorf("envelope head not read: %+v", env)
	}
	if _, known, _ := decodeAttachEvent("from_a_newer_server", []byte(`{}`)); known {
		t.Error("an unknown event type was decoded")
	}
	if _, _, err := decodeAttachEvent("turn_finished", []byte(`{"result":7}`)); err == nil {
		t.Error("a malformed event decoded without error")
	}
}

// TestAttachDecodesEveryEvent: odin attach decodes every event type
// messages defines, so a new event is not silently dropped from the
// attached REPL.
func TestAttachDecodesEveryEvent(t *testing.T) {
	types := messageEventTypes(t)
	for _, ty := range types {
		if _, ok := attachEventKinds[ty]; !ok {
			t.Errorf("odin attach does not decode the %q event", ty)
		}
	}
}

// TestRemoteSendRetriesWithTheSameKey: the answer to a message is lost (the
// connection closes after the server read it); the retry carries the same
// Idempotency-Key, so the server can tell it from a second input, and a
// detach waits for it.
func TestRemoteSendRetriesWithTheSameKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/messages") {
			http.NotFound(w, r)
			return
		}
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		first := len(keys) == 1
		mu.Unlock()
		if first {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	s := newRemoteSession(&attachClient{base: srv.URL, token: "t", hc: srv.Client()}, "s1", 0, nil)
	s.retryWait = time.Millisecond
	in := s.Submit("do it", "edit")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{in.ID, in.ID}, keys); diff != "" {
		t.Errorf("Idempotency-Keys (-want +got):\n%s", diff)
	}
	select {
	case n := <-s.notes:
		t.Errorf("a note after a successful retry: %v", n)
	default:
	}
}
