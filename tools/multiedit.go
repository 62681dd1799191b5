package tools

import (
	"context"
	_ "embed"
	"fmt"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed multiedit.md
var multiEditDescription string

// MultiEditInput is MultiEditTool's input.
type MultiEditInput struct {
	FilePath string          `json:"file_path"`
	Edits    []MultiEditItem `json:"edits"`
}

// MultiEditItem is one edit of a MultiEditTool call.
type MultiEditItem struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// NewMultiEdit returns MultiEditTool: several exact replacements in one
// existing file, applied in order in memory and written once, all or
// nothing.
func NewMultiEdit() tool.Tool {
	return requireUTF8Input(newBuiltin[MultiEditInput](NameMultiEditTool, tool.ClassWrite, multiEditDescription, multiEdit,
		tool.WithSchema(func(s *jsonschema.Schema) {
			setArray(s, "edits", 1)
		})))
}

func multiEdit(ctx context.Context, env *tool.Env, in MultiEditInput) (tool.Result, error) {
	path, bad, err := resolveArgPath(ctx, env, "file_path", in.FilePath, tool.AccessWrite)
	if err != nil || bad != nil {
		return deref(bad), err
	}
	if len(in.Edits) == 0 {
		return tool.Errorf("edits is empty; give at least one edit."), nil
	}
	unlock, bad := lockForWrite(ctx, env, path)
	if bad != nil {
		return *bad, nil
	}
	defer unlock()
	cur, bad := loadExisting(ctx, env, path, NameMultiEditTool)
	if bad != nil {
		return *bad, nil
	}
	if !cur.exists {
		return tool.Errorf("file does not exist: %s. MultiEditTool only changes existing files; create new files with WriteFile.", path), nil
	}
	if !utf8.Valid(cur.content) {
		return tool.Errorf("%s is not UTF-8 text; MultiEditTool edits text files only.", path), nil
	}
	before := string(cur.content)
	after := before
	total := 0
	for i, e := range in.Edits {
		next, n, err := applyEdit(after, editSpec{Old: e.OldString, New: e.NewString, All: e.ReplaceAll})
		if err != nil {
			return tool.Errorf("edit %d of %d (edits[%d]) failed: %v. No edit was applied; the file is unchanged. Earlier edits change the text later ones must match, so plan the sequence against the file as it will be.",
				i+1, len(in.Edits), i, err), nil
		}
		after, total = next, total+n
	}
	after = keepFinalNewline(before, after)
	if after == before {
		return tool.Errorf("the edits leave %s unchanged.", path), nil
	}
	if bad, err := commitWrite(ctx, env, path, cur, []byte(after)); err != nil || bad != nil {
		return deref(bad), err
	}
	what := fmt.Sprintf("applied %d edit%s, %d replacement%s", len(in.Edits), plural(len(in.Edits)), total, plural(total))
	return editResult(path, before, after, what), nil
}
