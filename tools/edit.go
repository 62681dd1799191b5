package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/odin-code/odin/tools/tool"
)

//go:embed edit.md
var editDescription string

// editDiffMax bounds the diff shown after an edit; the model can ReadFile
// for more.
const editDiffMax = 4000

// EditToolInput is EditTool's input.
type EditToolInput struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// NewEditTool returns EditTool: an exact string replacement in a file the
// agent has read and that has not changed since. An empty old_string
// creates a file that does not exist yet (or fills an empty one).
func NewEditTool() tool.Tool {
	return requireUTF8Input(newBuiltin[EditToolInput](NameEditTool, tool.ClassWrite, editDescription, editFile))
}

func editFile(ctx context.Context, env *tool.Env, in EditToolInput) (tool.Result, error) {
	path, bad, err := resolveArgPath(ctx, env, "file_path", in.FilePath, tool.AccessWrite)
	if err != nil || bad != nil {
		return deref(bad), err
	}
	if in.OldString == in.NewString {
		return tool.Errorf("old_string and new_string are identical; there is nothing to change."), nil
	}
	if !utf8.ValidString(in.OldString) || !utf8.ValidString(in.NewString) {
		return tool.Errorf("old_string and new_string must be valid UTF-8 text"), nil
	}
	unlock, bad := lockForWrite(ctx, env, path)
	if bad != nil {
		return *bad, nil
	}
	defer unlock()
	cur, bad := loadExisting(ctx, env, path, NameEditTool)
	if bad != nil {
		return *bad, nil
	}
	if !cur.exists {
		if in.OldString != "" {
			return tool.Errorf("file does not exist: %s. Check the path with Glob or LS; to create a new file use WriteFile (or EditTool with an empty old_string).", path), nil
		}
		return createWithEdit(ctx, env, path, in.NewString)
	}
	if !utf8.Valid(cur.content) {
		return tool.Errorf("%s is not UTF-8 text; EditTool edits text files only.", path), nil
	}
	before := string(cur.content)
	var after string
	count := 1
	if in.OldString == "" {
		if before != "" {
			return tool.Errorf("old_string is empty but %s is not: to insert text, put the neighbouring text in old_string and repeat it in new_string; to replace the whole file use WriteFile.", path), nil
		}
		after = in.NewString
	} else {
		after, count, err = applyEdit(before, editSpec{Old: in.OldString, New: in.NewString, All: in.ReplaceAll})
		if err != nil {
			return tool.Errorf("%v", err), nil
		}
		after = keepFinalNewline(before, after)
	}
	if after == before {
		return tool.Errorf("the edit leaves %s unchanged (the trailing newline of a file is kept as it was; use WriteFile to change it).", path), nil
	}
	if bad, err := commitWrite(ctx, env, path, cur, []byte(after)); err != nil || bad != nil {
		return deref(bad), err
	}
	return editResult(path, before, after, fmt.Sprintf("replaced %d occurrence%s", count, plural(count))), nil
}

// createWithEdit creates a missing file from new_string, as an empty
// old_string asks.
func createWithEdit(ctx context.Context, env *tool.Env, path, content string) (tool.Result, error) {
	if bad, err := commitWrite(ctx, env, path, existingFile{}, []byte(content)); err != nil || bad != nil {
		return deref(bad), err
	}
	return tool.Result{
		Output: fmt.Sprintf("Created %s: %d lines, %s.", path, countLines(content), HumanBytes(int64(len(content)))),
		Files:  []string{path},
	}, nil
}

func editResult(path, before, after, what string) tool.Result {
	added, removed := diffStat(before, after)
	out := fmt.Sprintf("Edited %s: %s (+%d -%d lines).\n%s", path, what, added, removed, diffSnippet(path, before, after, editDiffMax))
	return tool.Result{Output: strings.TrimRight(out, "\n"), Files: []string{path}}
}

// editSpec is one exact replacement.
type editSpec struct {
	Old, New string
	All      bool
}

// applyEdit applies e to content. When the file's line endings are all
// CRLF, the model's LF text is converted first, so a model that never sees
// \r can still match and the file keeps its convention. The error text is
// for the model.
func applyEdit(content string, e editSpec) (string, int, error) {
	if e.Old == "" {
		return "", 0, errors.New("old_string is empty; give the exact text to replace")
	}
	if e.Old == e.New {
		return "", 0, errors.New("old_string and new_string are identical; there is nothing to change")
	}
	old, repl := e.Old, e.New
	if usesCRLF(content) {
		old, repl = toCRLF(old), toCRLF(repl)
	}
	n := strings.Count(content, old)
	switch {
	case n == 0:
		return "", 0, notFound(content, old)
	case n > 1 && !e.All:
		return "", 0, fmt.Errorf("found %d matches of old_string (at lines %s): add surrounding context to make it unique, or set replace_all to change every one", n, matchLines(content, old, 10))
	}
	if e.All {
		return strings.ReplaceAll(content, old, repl), n, nil
	}
	return strings.Replace(content, old, repl, 1), 1, nil
}

// notFound explains a failed match and, when it can cheaply tell, where a
// near miss is: whitespace and indentation are the usual culprits.
func notFound(content, old string) error {
	const base = "old_string not found — it must match the file exactly, including whitespace and indentation"
	if t := strings.TrimSpace(old); t != "" && t != old {
		if i := strings.Index(content, t); i >= 0 {
			return fmt.Errorf("%s. Without its leading/trailing whitespace it occurs at line %d; copy the text exactly as ReadFile shows it (after the line-number tab)", base, lineAt(content, i))
		}
	}
	first := ""
	for _, l := range strings.Split(lf(old), "\n") {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	if first != "" {
		for i, l := range strings.Split(lf(content), "\n") {
			if strings.TrimSpace(l) == first {
				return fmt.Errorf("%s. Its first line matches line %d when indentation is ignored; check the exact indentation (tabs vs spaces) and the lines that follow", base, i+1)
			}
		}
	}
	return fmt.Errorf("%s. Read the file again with ReadFile and copy the text exactly", base)
}

// matchLines lists the line numbers of up to max matches of sub.
func matchLines(content, sub string, max int) string {
	var lines []string
	off := 0
	for len(lines) < max {
		i := strings.Index(content[off:], sub)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(lineAt(content, off+i)))
		off += i + len(sub)
	}
	s := strings.Join(lines, ", ")
	if strings.Count(content, sub) > max {
		s += ", …"
	}
	return s
}

func lineAt(content string, byteOffset int) int {
	return strings.Count(content[:byteOffset], "\n") + 1
}

// usesCRLF reports whether every line ending in s is CRLF.
func usesCRLF(s string) bool {
	crlf := strings.Count(s, "\r\n")
	return crlf > 0 && crlf == strings.Count(s, "\n")
}

func toCRLF(s string) string {
	return strings.ReplaceAll(lf(s), "\n", "\r\n")
}

// keepFinalNewline gives after the final-newline state of before: edits
// change text, not whether the file ends with a newline (a model that
// copies the last line without its newline would otherwise drop it).
func keepFinalNewline(before, after string) string {
	if before == "" || after == "" {
		return after
	}
	eol := "\n"
	if usesCRLF(before) {
		eol = "\r\n"
	}
	had := strings.HasSuffix(before, "\n")
	has := strings.HasSuffix(after, "\n")
	switch {
	case had && !has:
		return after + eol
	case !had && has:
		return strings.TrimSuffix(strings.TrimSuffix(after, "\n"), "\r")
	}
	return after
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
