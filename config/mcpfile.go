package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// SetMCPServer writes server s as mcp.servers.<name> of the config file at
// path (the user's odin.yaml), creating the file and keys as needed and
// keeping the rest of the file, comments included. It replaces an entry of
// the same name (replaced is then true, so the caller can say so). The
// result is validated before it is written.
func SetMCPServer(path, name string, s MCPServer) (replaced bool, err error) {
	c := Default()
	c.MCP.Servers = map[string]MCPServer{name: s}
	var v validator
	v.mcp(c.MCP)
	if len(v.problems) > 0 {
		return false, &Error{Problems: v.problems}
	}
	var entry yaml.Node
	if err := entry.Encode(s); err != nil {
		return false, fmt.Errorf("config: encode server %s: %w", name, err)
	}
	dropEmpty(&entry)
	err = editFile(path, func(doc *yaml.Node) error {
		servers := child(child(doc, "mcp", true), "servers", true)
		replaced = setKey(servers, name, &entry)
		return nil
	})
	return replaced && err == nil, err
}

// RemoveMCPServer deletes mcp.servers.<name> from the config file at path;
// found is false when the file has no such server.
func RemoveMCPServer(path, name string) (found bool, err error) {
	err = editFile(path, func(doc *yaml.Node) error {
		servers := child(child(doc, "mcp", false), "servers", false)
		if servers == nil {
			return nil
		}
		for i := 0; i+1 < len(servers.Content); i += 2 {
			if servers.Content[i].Value == name {
				servers.Content = append(servers.Content[:i], servers.Content[i+2:]...)
				found = true
				return nil
			}
		}
		return nil
	})
	return found, err
}

// editFile loads path as a YAML mapping (empty when missing), applies fn
// and writes it back atomically.
func editFile(path string, fn func(root *yaml.Node) error) error {
	var doc yaml.Node
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config: read %s: %w", path, err)
	}
	if len(data) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("config: %s: %w", path, err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("config: %s: the top level is not a mapping", path)
	}
	if err := fn(root); err != nil {
		return err
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return fmt.Errorf("config: encode %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return fmt.Errorf("config: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("config: write %s: %w", path, err)
	}
	return nil
}

// child returns the mapping value of key in m, creating an empty mapping
// when create is set; nil when m is nil or the key is absent.
func child(m *yaml.Node, key string, create bool) *yaml.Node {
	if m == nil {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind != yaml.MappingNode && create {
				*v = yaml.Node{Kind: yaml.MappingNode}
			}
			return v
		}
	}
	if !create {
		return nil
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return v
}

func setKey(m *yaml.Node, key string, v *yaml.Node) (replaced bool) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return true
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return false
}

// dropEmpty removes keys with empty values (zero scalars, empty lists and
// maps) from an encoded mapping, so the written entry shows only what was
// given.
func dropEmpty(m *yaml.Node) {
	var keep []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		v := m.Content[i+1]
		empty := (v.Kind == yaml.ScalarNode && (v.Value == "" || v.Value == "0s" || v.Value == "false" || v.Value == "0")) ||
			((v.Kind == yaml.SequenceNode || v.Kind == yaml.MappingNode) && len(v.Content) == 0)
		if !empty {
			keep = append(keep, m.Content[i], v)
		}
	}
	m.Content = keep
}
