package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/odinmd"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed init.md
var initToolDescription string

// InitSectionInput is one section of ODIN.md given to InitTool.
type InitSectionInput struct {
	Name    string `json:"name" jsonschema:"Section title"`
	Content string `json:"content" jsonschema:"Markdown body, without the heading"`
}

// InitToolInput is InitTool's input.
type InitToolInput struct {
	Sections []InitSectionInput `json:"sections"`
}

// InitToolMeta is InitTool's structured result.
type InitToolMeta struct {
	Path     string   `json:"path"`
	Mode     string   `json:"mode"`
	Tokens   int      `json:"tokens"`
	Sections []string `json:"sections"`
	Changes  []string `json:"changes"`
	Warnings []string `json:"warnings,omitempty"`
}

// NewInitTool returns InitTool: it merges sections into the project's
// ODIN.md with odinmd.Assemble (generated sections replaced by name,
// hand-written text kept) and writes it through the same guarded,
// checkpointed, atomic path as WriteFile. It is a write-class tool, so
// only edit mode offers it.
func NewInitTool() tool.Tool {
	return requireUTF8Input(newBuiltin[InitToolInput](NameInitTool, tool.ClassWrite, initToolDescription, runInitTool,
		tool.WithSchema(func(s *jsonschema.Schema) { setArray(s, "sections", 1) })))
}

func runInitTool(ctx context.Context, env *tool.Env, in InitToolInput) (tool.Result, error) {
	if env == nil || env.Root == "" {
		return tool.Result{}, errors.New("tools: InitTool: env has no project root")
	}
	var sections []messages.InitSection
	for i, s := range in.Sections {
		if strings.TrimSpace(s.Name) == "" {
			return tool.Errorf("sections[%d] has no name; give each section a title such as Objective or Commands", i), nil
		}
		if strings.TrimSpace(s.Content) == "" {
			return tool.Errorf("section %q is empty; give its Markdown content (without the heading)", s.Name), nil
		}
		sections = append(sections, messages.InitSection{Name: s.Name, Content: s.Content, Source: "orchestrator"})
	}
	if len(sections) == 0 {
		return tool.Errorf("sections is empty: give at least one section to write"), nil
	}
	path, bad, err := resolveArgPath(ctx, env, "ODIN.md", filepath.Join(env.Root, "ODIN.md"), tool.AccessWrite)
	if err != nil || bad != nil {
		return deref(bad), err
	}
	unlock, bad := lockForWrite(ctx, env, path)
	if bad != nil {
		return *bad, nil
	}
	defer unlock()
	cur, bad := loadForMerge(env, path)
	if bad != nil {
		return *bad, nil
	}
	doc := odinmd.Assemble(string(cur.content), sections)
	content := []byte(doc.Doc)
	meta := InitToolMeta{Path: path, Mode: doc.Mode, Tokens: doc.Tokens, Changes: doc.Changes}
	for _, s := range doc.Sections {
		meta.Sections = append(meta.Sections, s.Name)
	}
	// Assemble checks the required sections among those given; a revision
	// gives a few, so only the ones the document still lacks are worth a
	// warning.
	for _, w := range doc.Warnings {
		if name, ok := strings.CutPrefix(w, "required section missing: "); ok && slices.Contains(meta.Sections, name) {
			continue
		}
		meta.Warnings = append(meta.Warnings, w)
	}
	if cur.exists && string(cur.content) == doc.Doc {
		return tool.Result{Output: fmt.Sprintf("%s already has exactly these sections; nothing was written.", path), Meta: meta}, nil
	}
	if bad, err := commitWrite(ctx, env, path, cur, content); err != nil || bad != nil {
		return deref(bad), err
	}
	verb := "Created"
	if cur.exists {
		verb = "Revised"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d sections, %d tokens (target %d-%d, hard cap %d).", verb, path, len(meta.Sections), doc.Tokens,
		odinmd.TargetMin, odinmd.Budget.Target, odinmd.Budget.HardCap)
	if len(meta.Changes) > 0 {
		fmt.Fprintf(&b, "\nChanges: %s.", strings.Join(meta.Changes, ", "))
	}
	for _, w := range meta.Warnings {
		fmt.Fprintf(&b, "\nWarning: %s.", w)
	}
	return tool.Result{Output: b.String(), Files: []string{path}, Meta: meta}, nil
}

// loadForMerge reads the current ODIN.md under the write lock. Unlike
// WriteFile, InitTool does not require a prior ReadFile: it merges into
// what is on disk now, keeping every hand-written byte, so it cannot
// overwrite an edit it has not seen. A link or a non-regular file at the
// path is refused, as for every write.
func loadForMerge(env *tool.Env, path string) (existingFile, *tool.Result) {
	root := writeRoot(env, path)
	info, err := fsutil.LstatIn(root, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return existingFile{}, nil
	case err != nil:
		r := writeRefusal(path, err)
		return existingFile{}, &r
	case info.Mode()&fs.ModeSymlink != 0:
		r := tool.Errorf("%s is a symbolic link; InitTool does not write through it. Nothing was written.", path)
		return existingFile{}, &r
	case !info.Mode().IsRegular():
		r := tool.Errorf("%s is not a regular file (%s); nothing was written.", path, info.Mode().Type())
		return existingFile{}, &r
	}
	content, info, err := fsutil.ReadFileIn(root, path, maxWriteBytes)
	if err != nil {
		r := tool.Errorf("cannot read %s: %v. Nothing was written.", path, unwrapPathError(err))
		return existingFile{}, &r
	}
	return existingFile{exists: true, content: content, perm: info.Mode() & fs.ModePerm}, nil
}
