package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/oauth2"

	"github.com/odin-code/odin/internal/fsutil"
)

// Credentials are what a login to one HTTP server leaves behind: the
// client it registered (or was configured with), the token endpoint a
// refresh goes to, and the token. They are secrets: never log them.
type Credentials struct {
	// ServerURL is the MCP endpoint these credentials were issued for.
	ServerURL string `json:"server_url"`
	// Resource is the RFC 8707 resource the token was requested for,
	// sent again with each refresh.
	Resource     string           `json:"resource,omitempty"`
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"auth_url,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	// StepUp are scopes a server later asked for (403 insufficient_scope)
	// that the next login requests as well.
	StepUp []string      `json:"step_up_scopes,omitempty"`
	Token  *oauth2.Token `json:"token,omitempty"`
}

// oauthConfig is the client configuration a refresh uses.
func (c *Credentials) oauthConfig() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     c.ClientID,
		ClientSecret: c.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL, AuthStyle: c.AuthStyle},
		Scopes:       c.Scopes,
	}
}

// TokenStore keeps Credentials in Dir, one file per server URL, owner-only
// (0600 in a 0700 directory) and replaced atomically, so a crash never
// leaves half a token and another user never reads one. The zero value
// (no Dir) stores nothing. Concurrent processes each replace whole files:
// the last writer wins.
type TokenStore struct {
	Dir string
}

// maxCredentialsFile bounds what Load reads: a token file is a few KiB.
const maxCredentialsFile = 1 << 20

// path is the file holding serverURL's credentials: a hash of the
// canonical URL, so that a URL never becomes a path.
func (s TokenStore) path(serverURL string) string {
	sum := sha256.Sum256([]byte(canonicalURL(serverURL)))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".json")
}

// canonicalURL is the key of a server URL: scheme and host lower-cased,
// the fragment dropped; the path is kept as the server named it.
func canonicalURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// Load returns serverURL's credentials, or nil and no error when there are
// none. A file that does not parse is an error naming it.
func (s TokenStore) Load(serverURL string) (*Credentials, error) {
	if s.Dir == "" {
		return nil, nil
	}
	p := s.path(serverURL)
	data, _, err := fsutil.ReadFileIn(s.Dir, p, maxCredentialsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: read credentials %s: %w", p, err)
	}
	var c Credentials
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("mcp: credentials %s are damaged (%v): run `odin mcp logout` and log in again", p, err)
	}
	if canonicalURL(c.ServerURL) != canonicalURL(serverURL) {
		return nil, nil
	}
	return &c, nil
}

// Save writes c (keyed by c.ServerURL) with mode 0600.
func (s TokenStore) Save(c *Credentials) error {
	if s.Dir == "" {
		return errors.New("mcp: no state directory to keep the token in (set HOME or XDG_STATE_HOME)")
	}
	if err := fsutil.PrivateDir(s.Dir); err != nil {
		return fmt.Errorf("mcp: credentials directory: %w", err)
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("mcp: encode credentials: %w", err)
	}
	if err := fsutil.WriteFileAtomic(s.path(c.ServerURL), data, 0o600); err != nil {
		return fmt.Errorf("mcp: save credentials: %w", err)
	}
	return nil
}

// Delete removes serverURL's credentials; found is false when there were
// none.
func (s TokenStore) Delete(serverURL string) (found bool, err error) {
	if s.Dir == "" {
		return false, nil
	}
	err = os.Remove(s.path(serverURL))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mcp: remove credentials: %w", err)
	}
	return true, nil
}
