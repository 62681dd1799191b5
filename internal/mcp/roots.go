package mcp

import (
	"net/url"
	"path/filepath"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rootsOf turns directories into MCP roots: file:// URIs named after the
// directory, in the order given, without duplicates.
func rootsOf(dirs []string) []*sdk.Root {
	var out []*sdk.Root
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		d = filepath.Clean(d)
		u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(d)}).String()
		if seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, &sdk.Root{URI: u, Name: filepath.Base(d)})
	}
	return out
}

// Roots returns the directories servers are offered now, as file:// URIs.
func (m *Manager) Roots() []string {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	var out []string
	for _, r := range m.roots {
		out = append(out, r.URI)
	}
	return out
}

// SetRoots replaces the directories offered to servers (roots/list); every
// connected server that the list changed for is sent
// notifications/roots/list_changed, and servers connecting later get the
// new list.
func (m *Manager) SetRoots(dirs []string) {
	next := rootsOf(dirs)
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	uri := func(r *sdk.Root) string { return r.URI }
	var gone []string
	for _, r := range m.roots {
		if !slices.ContainsFunc(next, func(n *sdk.Root) bool { return n.URI == r.URI && n.Name == r.Name }) {
			gone = append(gone, uri(r))
		}
	}
	var added []*sdk.Root
	for _, n := range next {
		if !slices.ContainsFunc(m.roots, func(r *sdk.Root) bool { return n.URI == r.URI && n.Name == r.Name }) {
			added = append(added, n)
		}
	}
	m.roots = next
	if len(gone) == 0 && len(added) == 0 {
		return
	}
	for _, s := range m.servers {
		s.mu.Lock()
		c := s.client
		s.mu.Unlock()
		if c == nil {
			continue
		}
		// One notification when only one side changed; a renamed root is
		// removed and added again.
		c.RemoveRoots(gone...)
		c.AddRoots(added...)
	}
}
