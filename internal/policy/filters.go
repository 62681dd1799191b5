package policy

import (
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// WriteFilter confines an agent's writes to one kind of file. Patterns are
// doublestar globs matched case-insensitively against the slash-separated
// path relative to the directory that contains it (the project root or an
// additional directory).
type WriteFilter struct {
	// Agent is the agent the filter is for; denial messages name it.
	Agent string
	// Kind says what the agent may write ("test files").
	Kind string
	// Allow are the patterns a writable path must match.
	Allow []string
	// Except are patterns that are refused even when Allow matches.
	Except []string
	// TestCommandsOnly limits the agent's commands to test runners and
	// read-only commands (the Test agent).
	TestCommandsOnly bool
}

// TestFilter lets the Test agent write test files only.
func TestFilter() *WriteFilter {
	return &WriteFilter{
		Agent: "test",
		Kind:  "test files",
		Allow: []string{
			"**/*_test.*", "**/test_*.*", "**/*.test.*", "**/*.spec.*", "**/*_spec.*",
			"**/conftest.py",
			"**/test/**", "**/tests/**", "**/__tests__/**", "**/testdata/**",
			"**/spec/**", "**/__snapshots__/**", "**/__mocks__/**", "**/fixtures/**",
		},
		TestCommandsOnly: true,
	}
}

// DocsFilter lets the Docs agent write documentation files only. A file
// that a later step executes or obeys is code, not documentation, even in
// docs/ or with a text extension: a Sphinx conf.py or MkDocs hook runs in
// the docs build, a Makefile in `make docs`, a testscript .txt in `go test`,
// and the commands in ODIN.md/AGENTS.md/CLAUDE.md (and in agent or command
// definitions) are run by the next session. Those need the Code agent's
// write scope (seed 004), so docs/ admits only text and image files.
func DocsFilter() *WriteFilter {
	return &WriteFilter{
		Agent: "docs",
		Kind:  "documentation files",
		Allow: []string{
			"**/*.md", "**/*.mdx", "**/*.markdown", "**/*.rst", "**/*.txt",
			"**/*.adoc", "**/*.asciidoc",
			"**/{docs,doc}/**/*.{png,jpg,jpeg,gif,svg,webp,ico}",
			"**/readme", "**/license", "**/licence", "**/changelog", "**/copying",
			"**/contributing", "**/authors", "**/notice", "**/code_of_conduct",
		},
		Except: []string{
			// Text files that are really build or dependency inputs.
			"**/requirements*.txt", "**/constraints*.txt", "**/cmakelists.txt",
			"**/testdata/**", "**/*.txtar",
			// Instruction files: their commands are executed (QA runs
			// ODIN.md's Commands section), so they are code.
			"**/odin.md", "**/odin.local.md", "**/agents.md", "**/claude.md", "**/claude.local.md", "**/gemini.md",
			"**/.github/copilot-instructions.md", "**/.cursorrules", "**/.cursor/**",
			"**/.claude/**", "**/.odin/**",
		},
	}
}

// FilterFor returns the built-in write filter of a roster agent, or nil when
// the agent may write any file its mode allows.
func FilterFor(agent string) *WriteFilter {
	switch strings.ToLower(agent) {
	case "test":
		return TestFilter()
	case "docs":
		return DocsFilter()
	}
	return nil
}

// allows reports whether rel (slash or OS separated, relative) may be written.
func (f *WriteFilter) allows(rel string) bool {
	rel = strings.ToLower(filepath.ToSlash(rel))
	for _, p := range f.Except {
		if ok, _ := doublestar.Match(strings.ToLower(p), rel); ok {
			return false
		}
	}
	for _, p := range f.Allow {
		if ok, _ := doublestar.Match(strings.ToLower(p), rel); ok {
			return true
		}
	}
	return false
}

// describe lists a few of the allowed patterns for a denial message.
func (f *WriteFilter) describe() string {
	var names []string
	for _, p := range f.Allow {
		names = append(names, strings.TrimPrefix(p, "**/"))
		if len(names) == 8 {
			names = append(names, "...")
			break
		}
	}
	return strings.Join(names, ", ")
}
