package policy

import "testing"

// The Docs agent writes documentation, never a file that a later step
// executes or obeys (seed 004): instruction files whose commands QA runs,
// docs build configuration, hooks and scripts under docs/.
func TestDocsFilterRefusesExecutedFiles(t *testing.T) {
	f := DocsFilter()
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"README.md", true},
		{"docs/guide.md", true},
		{"docs/api/index.rst", true},
		{"docs/img/arch.svg", true},
		{"CHANGELOG", true},
		{"notes.txt", true},
		{"ODIN.md", false},
		{"sub/odin.md", false},
		{"AGENTS.md", false},
		{"CLAUDE.md", false},
		{"CLAUDE.local.md", false},
		{".claude/commands/deploy.md", false},
		{".github/copilot-instructions.md", false},
		{"docs/conf.py", false},
		{"docs/Makefile", false},
		{"docs/hooks.py", false},
		{"docs/_ext/directive.py", false},
		{"docs/build.sh", false},
		{"docs/docusaurus.config.js", false},
		{"docs/mkdocs.yml", false},
		{"docs/_templates/layout.html", false},
		{"docs/requirements.txt", false},
		{"cmd/odin/testdata/script/run.txt", false},
		{"README.py", false},
		{"main.go", false},
	} {
		if got := f.allows(tc.path); got != tc.want {
			t.Errorf("DocsFilter allows %s = %v, want %v", tc.path, got, tc.want)
		}
	}
}
