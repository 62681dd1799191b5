package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/mcp/oauthtest"
)

// follow plays the user's browser: it opens the authorization URL and
// follows the redirects to Odin's loopback listener.
func follow(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("browser: %s", resp.Status)
	}
	return nil
}

type authRig struct {
	as     *oauthtest.Server
	store  TokenStore
	server config.MCPServer
}

func newAuthRig(t *testing.T, opts oauthtest.Options) *authRig {
	as := oauthtest.New(t, opts)
	return &authRig{as: as, store: TokenStore{Dir: filepath.Join(t.TempDir(), "mcp-auth")}, server: config.MCPServer{URL: as.MCPURL()}}
}

// manager connects to the rig's server as "prot"; login runs the browser
// flow, else the manager is a headless session's.
func (r *authRig) manager(t *testing.T, login bool, report func(string, error)) *Manager {
	opts := Options{Servers: map[string]config.MCPServer{"prot": r.server}, Auth: r.store, MaxRestarts: 2,
		BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond, Report: report}
	if login {
		opts.Login = &LoginFlow{Open: follow}
	}
	m := New(opts)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func (r *authRig) credentials(t *testing.T) *Credentials {
	t.Helper()
	c, err := r.store.Load(r.as.MCPURL())
	if err != nil || c == nil || c.Token == nil {
		t.Fatalf("stored credentials: %v, %v", c, err)
	}
	return c
}

func (r *authRig) login(t *testing.T) {
	t.Helper()
	m := r.manager(t, true, nil)
	m.StartAll()
	n, err := m.AwaitReady(t.Context(), "prot")
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if n != 2 {
		t.Fatalf("tools after login = %d, want 2", n)
	}
	_ = m.Close()
}

func callTool(t *testing.T, m *Manager, name string) (string, bool) {
	t.Helper()
	res, err := find(t, m.Tools(), name).Run(t.Context(), nil, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	return res.Output, res.IsError
}

func TestOAuthLoginRegistersWithPKCEAndStoresTokenPrivately(t *testing.T) {
	r := newAuthRig(t, oauthtest.Options{Scopes: []string{"read"}})
	r.login(t)
	if got := r.as.Registrations(); got != 1 {
		t.Errorf("dynamic registrations = %d, want 1", got)
	}
	// Every token request named the MCP server as its resource (RFC 8707).
	for _, res := range r.as.TokenResources() {
		if res != r.as.MCPURL() {
			t.Errorf("token request resource = %q, want %q", res, r.as.MCPURL())
		}
	}
	c := r.credentials(t)
	files, _ := filepath.Glob(filepath.Join(r.store.Dir, "*"))
	if len(files) != 1 {
		t.Fatalf("store holds %v, want one file", files)
	}
	for path, want := range map[string]os.FileMode{files[0]: 0o600, r.store.Dir: 0o700} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode = %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), c.Token.AccessToken) || c.Token.RefreshToken == "" {
		t.Errorf("stored file lacks the token: %s", data)
	}

	// A headless session uses the stored token: no new authorization.
	m := r.manager(t, false, nil)
	m.StartAll()
	if _, err := m.AwaitReady(t.Context(), "prot"); err != nil {
		t.Fatal(err)
	}
	if out, isErr := callTool(t, m, "mcp__prot__whoami"); isErr || out != "an authorized client" {
		t.Errorf("whoami = %q (error %v)", out, isErr)
	}
	if got := r.as.Authorizations(); got != 1 {
		t.Errorf("authorizations = %d, want the login's 1", got)
	}
}

func TestOAuthHeadlessSessionReportsNeedsLogin(t *testing.T) {
	r := newAuthRig(t, oauthtest.Options{})
	var mu sync.Mutex
	var reports []error
	m := r.manager(t, false, func(_ string, err error) {
		mu.Lock()
		reports = append(reports, err)
		mu.Unlock()
	})
	m.StartAll()
	_, err := m.AwaitReady(t.Context(), "prot")
	if !errors.Is(err, ErrNeedsLogin) || !strings.Contains(err.Error(), "odin mcp login prot") {
		t.Fatalf("AwaitReady = %v, want needs login with the command", err)
	}
	st := m.Status()[0]
	if st.State != StateNeedsLogin {
		t.Errorf("state = %q, want %q", st.State, StateNeedsLogin)
	}
	if len(m.Tools()) != 0 {
		t.Errorf("tools of a server needing login: %v", names(m.Tools()))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 {
		t.Errorf("reports = %v, want exactly one", reports)
	}
	// Headless, nothing is registered or authorized on the user's behalf.
	if r.as.Registrations() != 0 || r.as.Authorizations() != 0 {
		t.Errorf("headless run registered %d clients, authorized %d times", r.as.Registrations(), r.as.Authorizations())
	}
}

func TestOAuthRefreshesExpiredTokenAndSavesIt(t *testing.T) {
	r := newAuthRig(t, oauthtest.Options{})
	r.login(t)
	c := r.credentials(t)
	old := c.Token.AccessToken
	c.Token.Expiry = time.Now().Add(-time.Minute)
	if err := r.store.Save(c); err != nil {
		t.Fatal(err)
	}
	m := r.manager(t, false, nil)
	m.StartAll()
	if _, err := m.AwaitReady(t.Context(), "prot"); err != nil {
		t.Fatal(err)
	}
	if got := r.as.Refreshes(); got != 1 {
		t.Errorf("refreshes = %d, want 1", got)
	}
	fresh := r.credentials(t)
	if fresh.Token.AccessToken == old || fresh.Token.RefreshToken == c.Token.RefreshToken {
		t.Errorf("the refreshed (rotated) token was not saved")
	}
	res := r.as.TokenResources()
	if res[len(res)-1] != r.as.MCPURL() {
		t.Errorf("refresh resource = %q, want %q", res[len(res)-1], r.as.MCPURL())
	}
}

func TestOAuthRevokedTokenForcesOneRefresh(t *testing.T) {
	r := newAuthRig(t, oauthtest.Options{})
	r.login(t)
	r.as.Revoke()
	m := r.manager(t, false, nil)
	m.StartAll()
	if _, err := m.AwaitReady(t.Context(), "prot"); err != nil {
		t.Fatal(err)
	}
	if got := r.as.Refreshes(); got != 1 {
		t.Errorf("refreshes = %d, want 1", got)
	}
}

func TestOAuthStepUpAsksForTheScopeAtNextLogin(t *testing.T) {
	r := newAuthRig(t, oauthtest.Options{Scopes: []string{"read"}, RequiredScope: "admin"})
	r.login(t)
	m := r.manager(t, false, nil)
	m.StartAll()
	if _, err := m.AwaitReady(t.Context(), "prot"); err != nil {
		t.Fatal(err)
	}
	out, isErr := callTool(t, m, "mcp__prot__admin")
	if !isErr || !strings.Contains(out, "odin mcp login prot") || !strings.Contains(out, "admin") {
		t.Fatalf("admin without the scope = %q (error %v)", out, isErr)
	}
	_ = m.Close()
	r.login(t)
	reqs := r.as.ScopeRequests()
	if last := strings.Fields(reqs[len(reqs)-1]); !contains(last, "admin") || !contains(last, "read") {
		t.Errorf("second login asked for scopes %q, want read and admin", reqs[len(reqs)-1])
	}
	m = r.manager(t, false, nil)
	m.StartAll()
	if _, err := m.AwaitReady(t.Context(), "prot"); err != nil {
		t.Fatal(err)
	}
	if out, isErr := callTool(t, m, "mcp__prot__admin"); isErr || out != "admin done" {
		t.Errorf("admin after step-up login = %q (error %v)", out, isErr)
	}
}

func TestOAuthBadMetadataIsAClearError(t *testing.T) {
	for name, tc := range map[string]struct {
		opts oauthtest.Options
		want string
	}{
		"resource metadata": {oauthtest.Options{BadResourceMetadata: true}, "protected-resource metadata is unusable"},
		"server metadata":   {oauthtest.Options{BadServerMetadata: true}, "authorization server metadata"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newAuthRig(t, tc.opts)
			m := r.manager(t, true, nil)
			m.StartAll()
			_, err := m.AwaitReady(t.Context(), "prot")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("login with bad metadata = %v", err)
			}
			if c, _ := r.store.Load(r.as.MCPURL()); c != nil {
				t.Errorf("credentials stored after a failed login: %+v", c)
			}
		})
	}
}

func TestOAuthRootMetadataFallback(t *testing.T) {
	r := newAuthRig(t, oauthtest.Options{RootMetadataOnly: true})
	r.login(t)
	if r.as.Authorizations() != 1 {
		t.Errorf("authorizations = %d, want 1", r.as.Authorizations())
	}
}

func TestTokenStoreDamagedFileNamesIt(t *testing.T) {
	s := TokenStore{Dir: t.TempDir()}
	c := &Credentials{ServerURL: "https://mcp.example.com/mcp", ClientID: "c", TokenURL: "https://as.example.com/token"}
	if err := s.Save(c); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.path(c.ServerURL), []byte("{half"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Load("HTTPS://MCP.example.com/mcp")
	if err == nil || !strings.Contains(err.Error(), s.path(c.ServerURL)) {
		t.Fatalf("Load of a damaged file = %v, want an error naming it", err)
	}
	if found, err := s.Delete(c.ServerURL); !found || err != nil {
		t.Fatalf("Delete = %v, %v", found, err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// With a browser at hand (the login's manager), a 403 insufficient_scope
// runs the flow again for the union of the granted and the demanded
// scopes, and the call is retried.
func TestOAuthInteractiveStepUpKeepsGrantedScopes(t *testing.T) {
	r := newAuthRig(t, oauthtest.Options{Scopes: []string{"read"}, RequiredScope: "admin"})
	m := r.manager(t, true, nil)
	m.StartAll()
	if _, err := m.AwaitReady(t.Context(), "prot"); err != nil {
		t.Fatal(err)
	}
	if out, isErr := callTool(t, m, "mcp__prot__admin"); isErr || out != "admin done" {
		t.Fatalf("admin with step-up = %q (error %v)", out, isErr)
	}
	reqs := r.as.ScopeRequests()
	if len(reqs) != 2 {
		t.Fatalf("authorization requests = %q, want the login's and the step-up's", reqs)
	}
	if got := strings.Fields(reqs[1]); !contains(got, "read") || !contains(got, "admin") {
		t.Errorf("step-up asked for %q, want read and admin", reqs[1])
	}
	if c := r.credentials(t); !contains(c.Scopes, "admin") || !contains(c.Scopes, "read") {
		t.Errorf("stored scopes = %v", c.Scopes)
	}
}
