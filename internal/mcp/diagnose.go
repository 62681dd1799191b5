package mcp

import (
	"regexp"
	"strings"
	"sync"
)

// PathProblem is a path a server's stderr says it could not use: the
// material for telling the user which path the sandbox hid or kept
// read-only.
type PathProblem struct {
	Path string
	// Write is set when the failure was a write refused (read-only file
	// system, permission denied); otherwise the path was not found.
	Write bool
	// Line is the stderr line that named it.
	Line string
}

var (
	roFailure = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)read-only file system|EROFS|permission denied|EACCES|EPERM|operation not permitted`)
	})
	missingFailure = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)no such file or directory|ENOENT|cannot find module|can't open file|not found`)
	})
	// A path: quoted, or bare up to a space, quote or ":"/"," before a
	// space or the end (Go's "open /x: read-only file system").
	pathToken = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`'(/[^']+)'|"(/[^"]+)"|(?:^|[\s(=\[])(/[^\s'"(),\[\]]*[^\s'"(),\[\]:.])`)
	})
)

// PathProblems finds, in a server's last stderr lines, the paths that its
// file-system errors name (Node's "EROFS: read-only file system, open
// '/x'", Python's "[Errno 30] Read-only file system: '/x'", Go's "open
// /x: read-only file system", "Cannot find module '/tmp/x.js'"), last
// line first.
func PathProblems(lines []string) []PathProblem {
	var out []PathProblem
	seen := map[string]bool{}
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		write := roFailure().MatchString(line)
		if !write && !missingFailure().MatchString(line) {
			continue
		}
		for _, m := range pathToken().FindAllStringSubmatch(line, -1) {
			p := m[1] + m[2] + m[3]
			p = strings.TrimRight(p, ":,.;")
			if len(p) < 2 || seen[p] {
				continue
			}
			seen[p] = true
			out = append(out, PathProblem{Path: p, Write: write, Line: line})
		}
	}
	return out
}
