package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/tools/tool"
)

func TestInitToolCreates(t *testing.T) {
	env := newRootEnv(t)
	var checkpointed []string
	env.BeforeWrite = func(p string) error { checkpointed = append(checkpointed, p); return nil }
	res := runTool(t, NewInitTool(), env, InitToolInput{Sections: []InitSectionInput{
		{Name: "Objective", Content: "A tool that does X."},
		{Name: "commands", Content: "- `make test`"},
	}})
	if res.IsError {
		t.Fatal(res.Output)
	}
	path := filepath.Join(env.Root, "ODIN.md")
	doc := fileContent(t, path)
	for _, want := range []string{"## Objective\n\nA tool that does X.", "## Commands\n\n- `make test`", `<!-- odin:begin section="Commands" -->`} {
		if !strings.Contains(doc, want) {
			t.Errorf("ODIN.md lacks %q:\n%s", want, doc)
		}
	}
	if strings.Index(doc, "## Objective") > strings.Index(doc, "## Commands") {
		t.Errorf("sections out of canonical order:\n%s", doc)
	}
	if diff := cmp.Diff([]string{path}, checkpointed); diff != "" {
		t.Errorf("checkpointed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{path}, res.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	meta := res.Meta.(InitToolMeta)
	if meta.Mode != "create" || !strings.HasPrefix(res.Output, "Created ") {
		t.Errorf("meta %+v, output %q", meta, res.Output)
	}
	if !slicesContain(meta.Warnings, "required section missing: Stack") {
		t.Errorf("a new document without Stack should warn; warnings %v", meta.Warnings)
	}
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestInitToolRevisesKeepingHandWrittenText(t *testing.T) {
	env := newRootEnv(t)
	hand := "# ODIN.md\n\nMy own notes: never delete me.\n"
	before := hand + "\n<!-- odin:begin section=\"Stack\" -->\n## Stack\n\nGo 1.26\n<!-- odin:end -->\n\n" +
		"<!-- odin:begin section=\"Commands\" -->\n## Commands\n\n- `make old`\n<!-- odin:end -->\n\nTrailing hand-written line.\n"
	path := writeTestFile(t, env.Root, "ODIN.md", before)
	// No ReadFile first: InitTool merges into what is on disk.
	res := runTool(t, NewInitTool(), env, InitToolInput{Sections: []InitSectionInput{{Name: "Commands", Content: "- `make test`"}}})
	if res.IsError {
		t.Fatal(res.Output)
	}
	doc := fileContent(t, path)
	for _, keep := range []string{hand, "Trailing hand-written line.\n", "## Stack\n\nGo 1.26\n"} {
		if !strings.Contains(doc, keep) {
			t.Errorf("revision lost %q:\n%s", keep, doc)
		}
	}
	if strings.Contains(doc, "make old") || !strings.Contains(doc, "- `make test`") {
		t.Errorf("Commands not replaced:\n%s", doc)
	}
	meta := res.Meta.(InitToolMeta)
	if meta.Mode != "update" || !strings.HasPrefix(res.Output, "Revised ") {
		t.Errorf("meta %+v, output %q", meta, res.Output)
	}
	for _, w := range meta.Warnings {
		if w == "required section missing: Stack" || w == "required section missing: Commands" {
			t.Errorf("warned about a section the document has: %q", w)
		}
	}
	// The same revision again changes nothing.
	again := runTool(t, NewInitTool(), env, InitToolInput{Sections: []InitSectionInput{{Name: "Commands", Content: "- `make test`"}}})
	if again.IsError || !strings.Contains(again.Output, "nothing was written") || len(again.Files) != 0 {
		t.Errorf("repeat: %+v", again)
	}
}

func TestInitToolCheckpointFailureWritesNothing(t *testing.T) {
	env := newRootEnv(t)
	path := writeTestFile(t, env.Root, "ODIN.md", "# notes\n")
	boom := errors.New("disk full")
	env.BeforeWrite = func(string) error { return boom }
	_, err := NewInitTool().Run(t.Context(), env, mustJSON(t, InitToolInput{Sections: []InitSectionInput{{Name: "Stack", Content: "Go"}}}))
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the checkpoint error", err)
	}
	if got := fileContent(t, path); got != "# notes\n" {
		t.Errorf("ODIN.md changed without a checkpoint: %q", got)
	}
}

// Attack: an ODIN.md planted as a link to a file outside the project must
// not let InitTool write there.
func TestInitToolAttackLinkOutsideProject(t *testing.T) {
	env := newRootEnv(t)
	outside := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(outside, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(env.Root, "ODIN.md")); err != nil {
		t.Fatal(err)
	}
	res := runTool(t, NewInitTool(), env, InitToolInput{Sections: []InitSectionInput{{Name: "Stack", Content: "pwned"}}})
	if !res.IsError {
		t.Errorf("InitTool wrote through a link leaving the project: %s", res.Output)
	}
	if got := fileContent(t, outside); got != "precious\n" {
		t.Errorf("the file outside the project was changed: %q", got)
	}
}

func TestInitToolBadInput(t *testing.T) {
	env := newRootEnv(t)
	for name, in := range map[string]any{
		"no sections":   map[string]any{"sections": []any{}},
		"missing name":  map[string]any{"sections": []any{map[string]any{"name": " ", "content": "x"}}},
		"empty content": map[string]any{"sections": []any{map[string]any{"name": "Stack", "content": ""}}},
	} {
		t.Run(name, func(t *testing.T) {
			if res := runTool(t, NewInitTool(), env, in); !res.IsError {
				t.Errorf("accepted: %s", res.Output)
			}
			if _, err := os.Stat(filepath.Join(env.Root, "ODIN.md")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("ODIN.md was created from bad input (%v)", err)
			}
		})
	}
	if c := NewInitTool().Info().Class; c != tool.ClassWrite {
		t.Errorf("class %v: InitTool writes, so ask and plan modes must not see it", c)
	}
}
