package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/odin-code/odin/messages"
)

// Git file modes in tree entries.
const (
	modeAbsent  = "000000"
	modeFile    = "100644"
	modeExec    = "100755"
	modeSymlink = "120000"
	modeGitlink = "160000"
)

// Patch is what changed in the worktree since Create, against the state
// it started from: every added, modified and deleted file of the project
// (ignored files left out), with its content before and after.
func (t *Tree) Patch(ctx context.Context) (*messages.Patch, error) {
	final, err := t.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	p := &messages.Patch{Base: t.Head}
	if t.Dirty {
		p.Base += "+dirty"
	}
	if final == t.base {
		return p, nil
	}
	out, err := t.g.run(ctx, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", t.base, final)
	if err != nil {
		return nil, err
	}
	// Raw format: ":old new oldsha newsha status\0path\0" per file.
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		head := strings.Fields(strings.TrimPrefix(string(fields[i]), ":"))
		path := string(fields[i+1])
		if len(head) < 5 {
			return nil, fmt.Errorf("worktree: unexpected diff-tree line %q", fields[i])
		}
		oldMode, newMode, oldSHA, newSHA := head[0], head[1], head[2], head[3]
		rel, ok := t.projectRel(path)
		if !ok {
			p.Skipped = append(p.Skipped, path+": outside the project directory")
			continue
		}
		if kind := unsupported(oldMode, newMode); kind != "" {
			p.Skipped = append(p.Skipped, rel+": "+kind+" (a patch carries regular files only)")
			continue
		}
		f := messages.PatchFile{Path: rel, Op: messages.PatchModify, Exec: newMode == modeExec}
		switch {
		case oldMode == modeAbsent:
			f.Op = messages.PatchAdd
		case newMode == modeAbsent:
			f.Op = messages.PatchDelete
		}
		if f.Op != messages.PatchAdd {
			f.Base, err = t.blob(ctx, oldSHA)
		}
		if err == nil && f.Op != messages.PatchDelete {
			f.New, err = t.blob(ctx, newSHA)
		}
		if errors.Is(err, errTooLarge) {
			p.Skipped = append(p.Skipped, fmt.Sprintf("%s: larger than %d bytes", rel, t.m.opts.MaxFileBytes))
			continue
		}
		if err != nil {
			return nil, err
		}
		if f.Base == nil && f.Op != messages.PatchAdd {
			f.Base = []byte{}
		}
		if f.New == nil && f.Op != messages.PatchDelete {
			f.New = []byte{}
		}
		p.Files = append(p.Files, f)
	}
	return p, nil
}

// errTooLarge is a blob over MaxFileBytes, which Patch reports as skipped
// without reading it.
var errTooLarge = errors.New("worktree: file too large for a patch")

// projectRel maps a repository path to the project's.
func (t *Tree) projectRel(path string) (string, bool) {
	if t.sub == "" {
		return path, true
	}
	rel, ok := strings.CutPrefix(path, t.sub+"/")
	return rel, ok
}

func unsupported(oldMode, newMode string) string {
	for _, m := range []string{oldMode, newMode} {
		switch m {
		case modeSymlink:
			return "a symbolic link"
		case modeGitlink:
			return "a submodule"
		case modeAbsent, modeFile, modeExec:
		default:
			return "file mode " + m
		}
	}
	return ""
}

func (t *Tree) blob(ctx context.Context, sha string) ([]byte, error) {
	size, err := t.g.run(ctx, "cat-file", "-s", sha)
	if err != nil {
		return nil, err
	}
	var n int64
	if _, err := fmt.Sscan(strings.TrimSpace(string(size)), &n); err != nil {
		return nil, fmt.Errorf("worktree: size of %s: %w", sha, err)
	}
	if n > t.m.opts.MaxFileBytes {
		return nil, errTooLarge
	}
	return t.g.run(ctx, "cat-file", "blob", sha)
}
