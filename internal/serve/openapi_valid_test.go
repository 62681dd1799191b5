package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// loadOpenAPI parses and validates the published document with a real
// OpenAPI implementation (kin-openapi), the way a client generator reads it.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	l := openapi3.NewLoader()
	doc, err := l.LoadFromData(openAPI)
	if err != nil {
		t.Fatalf("openapi.yaml does not load: %v", err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableMultiError()); err != nil {
		t.Fatalf("openapi.yaml is invalid: %v", err)
	}
	return doc
}

// TestOpenAPIIsValid: the document validates, and what a client generator
// needs is there: a unique operationId on every operation, 401 documented
// wherever the token is required, and every request body's and error's
// schema spelled out.
func TestOpenAPIIsValid(t *testing.T) {
	doc := loadOpenAPI(t)
	ids := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s has no operationId", where)
			} else if prev, dup := ids[op.OperationID]; dup {
				t.Errorf("%s and %s share operationId %s", prev, where, op.OperationID)
			} else {
				ids[op.OperationID] = where
			}
			public := op.Security != nil && len(*op.Security) == 0
			if !public && op.Responses.Status(401) == nil {
				t.Errorf("%s needs the token but does not document 401", where)
			}
			if op.RequestBody != nil && op.Responses.Status(413) == nil {
				t.Errorf("%s takes a body but does not document 413", where)
			}
			if strings.HasPrefix(path, "/v1/sessions/{id}") && op.Responses.Status(404) == nil {
				t.Errorf("%s names a session but does not document 404", where)
			}
		}
	}
	// The descriptions that once held unquoted commas in flow mappings
	// (which YAML split into stray keys) must keep their whole text.
	p := doc.Paths.Value("/v1/history").Get.Parameters.GetByInAndName("query", "q")
	if p == nil || p.Description != "case-insensitive match on title, project or id" {
		t.Errorf("history q parameter description mangled: %+v", p)
	}
}

// TestOversizedBodyIs413: a body past maxBody is refused as too large, as
// the document says, rather than as malformed JSON.
func TestOversizedBodyIs413(t *testing.T) {
	s, err := New(Options{Opener: nil, Token: "tok", Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	big := `{"project":"` + strings.Repeat("a", maxBody) + `"}`
	req := httptest.NewRequest("POST", "/v1/sessions", strings.NewReader(big))
	req.Header.Set("Authorization", "Bearer tok")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), `"error"`) {
		t.Errorf("oversized body: %d %s", rec.Code, rec.Body.String())
	}
}
