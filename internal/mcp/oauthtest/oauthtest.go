// Package oauthtest is a local OAuth 2.1 authorization server in front of
// a protected MCP server, over real HTTP (httptest), for tests of Odin's
// MCP login: protected-resource metadata (RFC 9728), authorization-server
// metadata (RFC 8414), dynamic client registration (RFC 7591), the
// authorization code grant with PKCE S256 and the resource indicator
// (RFC 8707), refresh-token rotation and scope step-up. It checks what a
// client sends as a real server would, and counts what happened, so tests
// assert behaviour rather than trust the client.
package oauthtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shape the server.
type Options struct {
	// ExpiresIn is the access tokens' lifetime in seconds; 0: 3600.
	ExpiresIn int
	// Scopes are scopes_supported in the resource's metadata.
	Scopes []string
	// RequiredScope, when set, must be granted to call the tool "admin":
	// without it the MCP server answers 403 insufficient_scope.
	RequiredScope string
	// BadResourceMetadata serves protected-resource metadata that is not
	// JSON; BadServerMetadata does the same for the authorization server.
	BadResourceMetadata, BadServerMetadata bool
	// RootMetadataOnly serves the protected-resource metadata only at the
	// root well-known URI and sends no resource_metadata in the challenge
	// (the RFC 9728 fallback a client must try).
	RootMetadataOnly bool
}

// Server is the authorization server and the MCP server on one listener:
// the MCP endpoint is URL+"/mcp", the issuer URL+"/as".
type Server struct {
	*httptest.Server
	opts Options

	mu            sync.Mutex
	clients       map[string][]string // client_id -> redirect URIs
	codes         map[string]grant
	access        map[string]grant // access token -> what it grants
	refresh       map[string]grant
	registrations int
	authorizes    int
	refreshes     int
	resources     []string // resource parameters of token requests
	scopeReqs     []string // scope parameters of authorization requests
}

type grant struct {
	client, redirect, challenge, resource, scope string
}

// New starts a server; it is closed when the test ends.
func New(t testing.TB, opts Options) *Server {
	if opts.ExpiresIn == 0 {
		opts.ExpiresIn = 3600
	}
	s := &Server{opts: opts, clients: map[string][]string{}, codes: map[string]grant{},
		access: map[string]grant{}, refresh: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.resourceMeta(false))
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", s.resourceMeta(true))
	mux.HandleFunc("GET /.well-known/oauth-authorization-server/as", s.serverMeta)
	mux.HandleFunc("POST /as/register", s.register)
	mux.HandleFunc("GET /as/authorize", s.authorize)
	mux.HandleFunc("POST /as/token", s.token)
	mux.Handle("/mcp", s.protect(s.mcpHandler()))
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// MCPURL is the protected MCP endpoint.
func (s *Server) MCPURL() string { return s.URL + "/mcp" }

// Counts of what clients did.
func (s *Server) Registrations() int { s.mu.Lock(); defer s.mu.Unlock(); return s.registrations }

// Authorizations counts authorization requests that issued a code.
func (s *Server) Authorizations() int { s.mu.Lock(); defer s.mu.Unlock(); return s.authorizes }

// Refreshes counts refresh_token grants that issued a token.
func (s *Server) Refreshes() int { s.mu.Lock(); defer s.mu.Unlock(); return s.refreshes }

// TokenResources are the resource parameters of every token request.
func (s *Server) TokenResources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.resources)
}

// ScopeRequests are the scope parameters of every authorization request.
func (s *Server) ScopeRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.scopeReqs)
}

// Revoke invalidates every access token (refresh tokens stay good).
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]grant{}
}

func (s *Server) resourceMeta(root bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if root != s.opts.RootMetadataOnly {
			http.NotFound(w, nil)
			return
		}
		if s.opts.BadResourceMetadata {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "{this is not json")
			return
		}
		resource := s.MCPURL()
		if root {
			resource = s.URL
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"resource": resource, "authorization_servers": []string{s.URL + "/as"}, "scopes_supported": s.opts.Scopes,
		})
	}
}

func (s *Server) serverMeta(w http.ResponseWriter, _ *http.Request) {
	if s.opts.BadServerMetadata {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"issuer": 42}`)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                s.URL + "/as",
		"authorization_endpoint":                s.URL + "/as/authorize",
		"token_endpoint":                        s.URL + "/as/token",
		"registration_endpoint":                 s.URL + "/as/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                      s.opts.Scopes,
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := "client-" + randText()
	s.mu.Lock()
	s.clients[id] = req.RedirectURIs
	s.registrations++
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize plays the user who approves at once: it checks the request
// and redirects back with a code.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	redirects, ok := s.clients[q.Get("client_id")]
	s.scopeReqs = append(s.scopeReqs, q.Get("scope"))
	s.mu.Unlock()
	switch {
	case !ok:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case !slices.Contains(redirects, q.Get("redirect_uri")):
		http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
		return
	}
	fail := func(code string) {
		u, _ := url.Parse(q.Get("redirect_uri"))
		v := url.Values{"error": {code}, "state": {q.Get("state")}}
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type")
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		fail("invalid_request")
		return
	case q.Get("resource") != s.MCPURL() && q.Get("resource") != s.URL:
		fail("invalid_target")
		return
	}
	code := randText()
	s.mu.Lock()
	s.codes[code] = grant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scope: q.Get("scope")}
	s.authorizes++
	s.mu.Unlock()
	u, _ := url.Parse(q.Get("redirect_uri"))
	v := u.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resources = append(s.resources, f.Get("resource"))
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		var ok bool
		g, ok = s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok || g.client != f.Get("client_id") || g.redirect != f.Get("redirect_uri"):
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "PKCE verification failed"})
			return
		}
	case "refresh_token":
		var ok bool
		g, ok = s.refresh[f.Get("refresh_token")]
		if !ok || g.client != f.Get("client_id") {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(s.refresh, f.Get("refresh_token")) // rotation
		s.refreshes++
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	if f.Get("resource") != g.resource {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_target"})
		return
	}
	at, rt := "at-"+randText(), "rt-"+randText()
	s.access[at], s.refresh[rt] = g, g
	writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": s.opts.ExpiresIn,
		"refresh_token": rt, "scope": g.scope})
}

// protect answers 401 without a valid token and 403 insufficient_scope
// for a call of "admin" without RequiredScope.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		g, ok := s.access[tok]
		s.mu.Unlock()
		if !ok {
			ch := `Bearer error="invalid_token"`
			if !s.opts.RootMetadataOnly {
				ch += fmt.Sprintf(`, resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.URL)
			}
			w.Header().Set("WWW-Authenticate", ch)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
			return
		}
		if s.opts.RequiredScope != "" && r.Method == http.MethodPost && !slices.Contains(strings.Fields(g.scope), s.opts.RequiredScope) {
			body, err := readBody(r)
			if err == nil && strings.Contains(string(body), `"admin"`) && strings.Contains(string(body), `"tools/call"`) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`,
					s.opts.RequiredScope, s.URL))
				writeJSON(w, http.StatusForbidden, map[string]string{"error": "insufficient_scope"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) mcpHandler() http.Handler {
	srv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", Description: "Says who the caller is."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "an authorized client"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "admin", Description: "Needs more scope."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "admin done"}}}, nil, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
}

// readBody reads r's body and puts it back for the next handler.
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(data))
	return data, err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randText() string { return rand.Text() }
