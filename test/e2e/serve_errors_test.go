package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestServeErrorsAreJSON: what the client gets wrong — an unknown queued
// input, a project directory that does not exist, a path no route has, a
// method the path does not take — is answered with the status openapi.yaml
// lists and the API's JSON error naming what was wrong.
func TestServeErrorsAreJSON(t *testing.T) {
	env, root := acpEnv(t)
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	_, c := startServe(t, env, root)

	missing := filepath.Join(root, "nosuchdir")
	out := c.do("POST", "/v1/sessions", map[string]string{"project": missing}, http.StatusBadRequest)
	if msg, _ := out["error"].(string); !strings.Contains(msg, missing) || !strings.Contains(msg, "does not exist") || strings.Contains(msg, "lstat") {
		t.Errorf("missing project: error %q, want one naming %s", msg, missing)
	}
	// Outside the roots a missing path is refused like any other: the
	// client learns nothing about what exists there.
	c.do("POST", "/v1/sessions", map[string]string{"project": filepath.Join(t.TempDir(), "nosuch")}, http.StatusForbidden)

	id := c.do("POST", "/v1/sessions", map[string]string{"project": root}, http.StatusCreated)["id"].(string)
	out = c.do("DELETE", "/v1/sessions/"+id+"/queue/nosuch", nil, http.StatusNotFound)
	if msg, _ := out["error"].(string); !strings.Contains(msg, "nosuch") {
		t.Errorf("unknown queued input: error %q", msg)
	}

	// Not in the document, so sent without the checking transport.
	for _, tc := range []struct {
		method, path string
		code         int
		allow        string
	}{
		{"GET", "/v1/nosuch", http.StatusNotFound, ""},
		{"PUT", "/v1/sessions/" + id, http.StatusMethodNotAllowed, "DELETE, GET, HEAD"},
	} {
		req, _ := http.NewRequest(tc.method, c.base+tc.path, nil)
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var body map[string]string
		if resp.StatusCode != tc.code || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(raw, &body) != nil || !strings.Contains(body["error"], tc.path) {
			t.Errorf("%s %s: %d %s %q, want %d and a JSON error naming the path", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), raw, tc.code)
		}
		if got := resp.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}

	// A body with more after its JSON value is a broken request: refused,
	// and nothing of it is queued or run.
	for _, body := range []string{`{"body":"first"} {"body":"second"}`, `{"body":"first"} trailing`} {
		req, _ := http.NewRequest("POST", c.base+"/v1/sessions/"+id+"/messages", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), "more than one JSON value") {
			t.Errorf("POST %q: %d %s, want 400 naming the extra value", body, resp.StatusCode, raw)
		}
	}
	if s := c.do("GET", "/v1/sessions/"+id, nil, http.StatusOK); s["in_flight"] != float64(0) {
		t.Errorf("a refused body was queued: %v", s)
	}
}
