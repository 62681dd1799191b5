package serve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestOpenAPIMatchesTheRoutes: every operation the document publishes is
// routed (an unrouted one would answer 404 or 405 from the mux, without
// a JSON error body), and the document parses.
func TestOpenAPIMatchesTheRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if len(doc.Paths) == 0 {
		t.Fatal("no paths")
	}
	s, err := New(Options{Opener: nil, Token: "tok", Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			p := strings.NewReplacer("{id}", "nosuch", "{input}", "x", "{approval}", "x", "{elicitation}", "x").Replace(path)
			req := httptest.NewRequest(strings.ToUpper(method), p, strings.NewReader("{}"))
			req.Header.Set("Authorization", "Bearer tok")
			rec := httptest.NewRecorder()
			s.mux.ServeHTTP(rec, req)
			routed := rec.Code != http.StatusMethodNotAllowed && (rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), `"error"`))
			if !routed {
				t.Errorf("%s %s is documented but not routed (%d %s)", strings.ToUpper(method), path, rec.Code, rec.Body.String())
			}
		}
	}
}
