package tools

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/search"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed grep.md
var grepDescription string

// Grep output modes (the seed's output_mode enum).
const (
	GrepContent          = "content"
	GrepFilesWithMatches = "files_with_matches"
	GrepCount            = "count"
)

// Grep limits: the text returned to the model (past it the result says how
// much was left out), one output line (minified files hold megabyte-long
// lines), and the size of a file searched (files are read whole).
const (
	grepOutputCap   = 30_000
	grepLineCap     = 2_000
	grepMaxFileSize = 16 << 20
	// grepInFlight bounds the file content the search workers hold at
	// once (a third of it per file byte, see search.GrepOptions), so a
	// search stays within Odin's per-call memory budget (256 MB) on any
	// number of cores.
	grepInFlight = 96 << 20
	// grepRetained bounds the output held in memory while searching; only
	// the first grepOutputCap bytes are shown, so more is waste.
	grepRetained = 1 << 20
)

// GrepInput is Grep's input (seed 000 schema; names follow rg's flags).
type GrepInput struct {
	Pattern    string   `json:"pattern"`
	Path       string   `json:"path,omitempty" jsonschema:"Default: project root"`
	Glob       string   `json:"glob,omitempty" jsonschema:"Space-separated globs (*.{ts,tsx} !vendor/**)"`
	Type       string   `json:"type,omitempty" jsonschema:"go, js, py..."`
	OutputMode string   `json:"output_mode,omitempty" jsonschema:"Default files_with_matches"`
	LineNums   *bool    `json:"-n,omitempty" jsonschema:"Default true"`
	IgnoreCase bool     `json:"-i,omitempty"`
	After      *float64 `json:"-A,omitempty"`
	Before     *float64 `json:"-B,omitempty"`
	Context    *float64 `json:"-C,omitempty"`
	HeadLimit  *float64 `json:"head_limit,omitempty" jsonschema:"First N lines only"`
	Multiline  bool     `json:"multiline,omitempty" jsonschema:"Matches may span lines"`
}

// GrepMeta is Grep's structured result, for Odin itself.
type GrepMeta struct {
	Mode      string `json:"mode"`
	Files     int    `json:"files"`     // files with at least one match
	Lines     int    `json:"lines"`     // output lines before any cut
	Shown     int    `json:"shown"`     // output lines returned
	Searched  int64  `json:"searched"`  // files opened
	Truncated bool   `json:"truncated"` // head_limit or the size cap cut the output
}

// NewGrep returns Grep: a ripgrep-compatible content search built into
// Odin (no rg binary needed). It honours .gitignore/.ignore/.rgignore,
// skips hidden and binary files, searches in parallel and prints
// deterministic, path-sorted output identical to `rg --sort path`.
func NewGrep() tool.Tool {
	return newBuiltin[GrepInput]("Grep", tool.ClassRead, grepDescription, runGrep,
		tool.WithSchema(func(s *jsonschema.Schema) {
			s.Properties["output_mode"].Enum = []any{GrepContent, GrepFilesWithMatches, GrepCount}
			fixNullable(s, "-n", "boolean")
			for _, p := range []string{"-A", "-B", "-C", "head_limit"} {
				fixNullable(s, p, "number")
				zero := 0.0
				s.Properties[p].Minimum = &zero
			}
		}))
}

// fixNullable turns the ["null", typ] schema the library derives for a
// pointer field (used to tell "absent" from a zero value) into plain typ:
// models should omit the field, not send null.
func fixNullable(s *jsonschema.Schema, prop, typ string) {
	p := s.Properties[prop]
	p.Type, p.Types = typ, nil
}

// wholeNumber converts an optional non-negative count argument.
func wholeNumber(name string, v *float64) (int, *tool.Result) {
	if v == nil {
		return 0, nil
	}
	if *v < 0 || *v != math.Trunc(*v) || *v > 1e9 {
		r := tool.Errorf("%s must be a whole number >= 0, got %v", name, *v)
		return 0, &r
	}
	return int(*v), nil
}

func runGrep(ctx context.Context, env *tool.Env, in GrepInput) (tool.Result, error) {
	root, bad, err := resolveSearchPath(ctx, env, "path", in.Path, false)
	if err != nil {
		return tool.Result{}, err
	}
	if bad != nil {
		return *bad, nil
	}
	if info, err := os.Stat(root); err == nil && !info.IsDir() && !info.Mode().IsRegular() {
		return tool.Errorf("path %s is not a regular file or a directory (%s)", root, info.Mode().Type()), nil
	}
	mode := search.FilesWithMatches
	switch in.OutputMode {
	case "", GrepFilesWithMatches:
		in.OutputMode = GrepFilesWithMatches
	case GrepContent:
		mode = search.Content
	case GrepCount:
		mode = search.Count
	}
	nums := map[string]int{}
	for name, v := range map[string]*float64{"-A": in.After, "-B": in.Before, "-C": in.Context, "head_limit": in.HeadLimit} {
		n, bad := wholeNumber(name, v)
		if bad != nil {
			return *bad, nil
		}
		nums[name] = n
	}
	before, after := nums["-B"], nums["-A"]
	if nums["-C"] > 0 { // as in rg, -C overrides -A and -B
		before, after = nums["-C"], nums["-C"]
	}
	m, err := search.Compile(in.Pattern, search.MatchOptions{IgnoreCase: in.IgnoreCase, Multiline: in.Multiline})
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	opts := search.GrepOptions{
		Matcher:       m,
		Mode:          mode,
		LineNumbers:   in.LineNums == nil || *in.LineNums,
		Before:        before,
		After:         after,
		MaxFileOutput: grepOutputCap,
		MaxFileSize:   grepMaxFileSize,
		MaxInFlight:   grepInFlight,
		MaxRetained:   grepRetained,
	}
	opts.Walk.Exclude = walkExclude(env)
	if globs := splitGlobs(in.Glob); len(globs) > 0 {
		if opts.Walk.Globs, err = search.NewGlobFilter(globs...); err != nil {
			return tool.Errorf("invalid glob: %v", err), nil
		}
	}
	if strings.TrimSpace(in.Type) != "" {
		if opts.Walk.Types, err = search.NewTypeFilter(in.Type); err != nil {
			return tool.Errorf("%v", err), nil
		}
	}
	res, err := search.Grep(ctx, root, opts)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Errorf("Grep was cancelled: %v", ctx.Err()), nil
		}
		return tool.Errorf("Grep failed on %s: %v", root, err), nil
	}
	meta := GrepMeta{Mode: in.OutputMode, Files: len(res.Files), Searched: res.Searched}
	skipped := ""
	if res.TooLarge > 0 {
		skipped = fmt.Sprintf("[%d files larger than %d MiB were not searched; use ExecuteCommand for those]\n", res.TooLarge, grepMaxFileSize>>20)
	}
	if len(res.Files) == 0 {
		return tool.Result{Output: fmt.Sprintf("No matches for %q in %s (%s searched).\n%s", in.Pattern, root, count(int(res.Searched), "file", "files"), skipped), IsError: true, Meta: meta}, nil
	}
	out, shown, total := limitLines(res, nums["head_limit"], grepOutputCap)
	meta.Lines, meta.Shown, meta.Truncated = total, shown, shown < total
	if shown < total {
		why := "the output size cap"
		if nums["head_limit"] > 0 && shown == nums["head_limit"] {
			why = fmt.Sprintf("head_limit %d", nums["head_limit"])
		}
		out = fmt.Appendf(out, "\n[%d more lines not shown (%s); narrow the search with path, glob, type or a more specific pattern]\n", total-shown, why)
	}
	out = append(out, skipped...)
	return tool.Result{Output: string(out), Meta: meta}, nil
}

// limitLines joins the per-file outputs, keeping at most head lines (0:
// all) and about capBytes bytes, cut at line boundaries. It returns the
// text, the lines kept and the lines there were.
func limitLines(res *search.GrepResult, head, capBytes int) ([]byte, int, int) {
	total := 0
	for i, f := range res.Files {
		total += f.Lines
		if res.Context && i > 0 {
			total++
		}
	}
	var out []byte
	shown := 0
	add := func(line []byte) bool {
		if head > 0 && shown >= head {
			return false
		}
		line = clipLine(line, grepLineCap)
		if len(out)+len(line) > capBytes && shown > 0 {
			return false
		}
		out = append(out, line...)
		shown++
		return true
	}
	for i, f := range res.Files {
		if res.Context && i > 0 && !add([]byte("--\n")) {
			return out, shown, total
		}
		rest := f.Output
		for len(rest) > 0 {
			end := bytes.IndexByte(rest, '\n') + 1
			if end == 0 {
				end = len(rest)
			}
			if !add(rest[:end]) {
				return out, shown, total
			}
			rest = rest[end:]
		}
		if f.Omitted > 0 { // the file's own cap dropped the rest
			return out, shown, total
		}
	}
	return out, shown, total
}

// clipLine shortens a line (ending in '\n') longer than max bytes, at a
// UTF-8 boundary, saying how much was cut.
func clipLine(line []byte, max int) []byte {
	if len(line) <= max {
		return line
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	out := append([]byte(nil), line[:cut]...)
	return fmt.Appendf(out, " [... %d more bytes on this line]\n", len(line)-1-cut)
}

// splitGlobs splits a glob argument on whitespace outside braces, so
// "*.ts *.tsx" is two globs and "*.{ts, tsx}" one.
func splitGlobs(s string) []string {
	var out []string
	depth, start := 0, -1
	for i, r := range s {
		switch {
		case r == '{':
			depth++
		case r == '}' && depth > 0:
			depth--
		}
		space := r == ' ' || r == '\t' || r == '\n'
		if space && depth == 0 {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// resolveSearchPath resolves the optional path argument of a search tool:
// empty (or the "undefined"/"null" models sometimes send) means the project
// root; a relative path is refused when mustAbs, else taken against the
// root. The path must exist. It returns the resolved path, or a Result the
// model can act on, or a Go error when the Env is unusable.
func resolveSearchPath(ctx context.Context, env *tool.Env, arg, p string, mustAbs bool) (string, *tool.Result, error) {
	if env == nil || env.Guard == nil {
		return "", nil, errors.New("tools: env has no path guard")
	}
	p = strings.TrimSpace(p)
	if p == "" || p == "undefined" || p == "null" {
		if mustAbs {
			r := tool.Errorf("%s is required: give the absolute path of a directory (the project root is %s)", arg, env.Root)
			return "", &r, nil
		}
		p = env.Root
	}
	if !filepath.IsAbs(p) {
		if mustAbs {
			r := tool.Errorf("%s must be an absolute path, got %q (e.g. %s)", arg, p, filepath.Join(env.Root, p))
			return "", &r, nil
		}
		p = filepath.Join(env.Root, p)
	}
	resolved, err := env.Guard.Resolve(ctx, p, tool.AccessRead)
	if err != nil {
		r := tool.Errorf("%v", err)
		r.Denied = tool.IsDenied(err)
		return "", &r, nil
	}
	if r := deniedRead(env, p, resolved); r != nil {
		return "", r, nil
	}
	if _, err := os.Stat(resolved); err != nil {
		msg := fmt.Sprintf("%s %s cannot be read: %v", arg, p, err)
		if errors.Is(err, fs.ErrNotExist) {
			msg = fmt.Sprintf("%s %s does not exist", arg, p)
		}
		r := tool.Errorf("%s", msg)
		return "", &r, nil
	}
	return resolved, nil, nil
}
