package e2e

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// The serve API's published document, loaded once: every response the
// API tests receive is checked against it (checkedTransport), so the
// document cannot drift from what the server sends.
var (
	apiDocOnce   sync.Once
	apiDocRouter routers.Router
	apiDocErr    error
)

func apiRouter() (routers.Router, error) {
	apiDocOnce.Do(func() {
		raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "serve", "openapi.yaml"))
		if err != nil {
			apiDocErr = err
			return
		}
		doc, err := openapi3.NewLoader().LoadFromData(raw)
		if err != nil {
			apiDocErr = err
			return
		}
		if apiDocErr = doc.Validate(context.Background()); apiDocErr != nil {
			return
		}
		apiDocRouter, apiDocErr = legacy.NewRouter(doc)
	})
	return apiDocRouter, apiDocErr
}

// checkedTransport validates each response against the OpenAPI document:
// the operation must be documented, the status listed for it, and a JSON
// body must match the status's schema. A stream's body is left alone (it
// is read as it arrives); its status and content type are still checked.
type checkedTransport struct {
	t    *testing.T
	base http.RoundTripper
}

func (c checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil || req.URL.Path == "/" || len(req.URL.Path) > 5 && req.URL.Path[:6] == "/view/" {
		return resp, err // the viewer's page is not part of the API
	}
	router, derr := apiRouter()
	if derr != nil {
		c.t.Errorf("openapi.yaml: %v", derr)
		return resp, nil
	}
	route, params, ferr := router.FindRoute(req)
	if ferr != nil {
		c.t.Errorf("%s %s is not in openapi.yaml: %v", req.Method, req.URL.Path, ferr)
		return resp, nil
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                opts,
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr != nil {
			return nil, rerr
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		in.SetBodyBytes(body)
	} else {
		o := *opts
		o.ExcludeResponseBody = true
		in.Options = &o
	}
	if verr := openapi3filter.ValidateResponse(req.Context(), in); verr != nil {
		c.t.Errorf("%s %s → %d does not match openapi.yaml: %v", req.Method, req.URL.Path, resp.StatusCode, verr)
	}
	return resp, nil
}
