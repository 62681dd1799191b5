package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

var sandboxModeType = reflect.TypeFor[SandboxMode]()

// sandboxMode normalises permissions.sandbox: a mode name, or a boolean
// (the key's type before modes existed: true is auto, false off).
func (n *normalizer) sandboxMode(key string, v any) (any, bool) {
	switch b := v.(type) {
	case bool:
		if b {
			return "auto", true
		}
		return "off", true
	case string:
		s := strings.ToLower(strings.TrimSpace(b))
		if p, err := strconv.ParseBool(s); err == nil {
			return n.sandboxMode(key, p)
		}
		if slices.Contains(SandboxModes(), s) {
			return s, true
		}
	}
	n.fail(key, "must be one of %s, or true/false (got %s)", strings.Join(SandboxModes(), ", "), describe(v))
	return nil, false
}

// sandboxWidens reports whether a project's permissions.sandbox value
// weakens the sandbox: off, or landlock (the weaker fallback).
func sandboxWidens(v any) bool {
	s, ok := v.(string)
	return ok && (s == "off" || s == "landlock")
}

var (
	envNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`) })
	domainRe  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)
	})
)

// sandbox checks permissions.sandbox, .network and .env.
func (v *validator) sandbox(p Permissions) {
	if p.Sandbox != "" && !slices.Contains(SandboxModes(), string(p.Sandbox)) {
		v.add("permissions.sandbox", "must be one of %s (got %q)", strings.Join(SandboxModes(), ", "), p.Sandbox)
	}
	domains := func(key string, list []string) {
		for i, d := range list {
			if !domainRe().MatchString(d) {
				v.add(fmt.Sprintf("%s[%d]", key, i), "must be a host name such as proxy.golang.org or *.npmjs.org, without scheme, port or path (got %q)", d)
			}
		}
	}
	domains("permissions.network.allowed_domains", p.Network.AllowedDomains)
	for _, agent := range sortedKeys(p.Network.Agents) {
		domains("permissions.network.agents."+agent+".allowed_domains", p.Network.Agents[agent].AllowedDomains)
	}
	v.unixSockets("permissions.network.allow_unix_sockets", p.Network.AllowUnixSockets)
	v.sandboxLimits(p.SandboxLimits)
	for i, name := range p.Env {
		if !envNameRe().MatchString(name) {
			v.add(fmt.Sprintf("permissions.env[%d]", i), "must be a variable name, or a prefix ending in * (got %q)", name)
		}
	}
}

// unixSockets checks a list of allowed unix sockets: each the absolute
// path of one socket (the sandbox binds exactly that path back into its
// view, so a directory or a pattern would mean nothing).
func (v *validator) unixSockets(key string, list []string) {
	for i, s := range list {
		if !filepath.IsAbs(s) || filepath.Clean(s) == "/" || strings.ContainsAny(s, "*?[") {
			v.add(fmt.Sprintf("%s[%d]", key, i), "must be the absolute path of a unix socket such as /var/run/docker.sock (got %q)", s)
		}
	}
}
