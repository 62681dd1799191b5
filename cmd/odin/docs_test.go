package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestStreamJSONDocCoversEveryEvent: docs/stream-json.md has a heading for
// every event type messages defines, so the documented vocabulary cannot
// fall behind the code.
func TestStreamJSONDocCoversEveryEvent(t *testing.T) {
	doc, err := os.ReadFile("../../docs/stream-json.md")
	if err != nil {
		t.Fatal(err)
	}
	types := messageEventTypes(t)
	for _, ty := range types {
		if !strings.Contains(string(doc), "`"+ty+"`") {
			t.Errorf("docs/stream-json.md does not document the %q event", ty)
		}
	}
}

// TestReadmeCommandsExist: every `odin ...` command line and `make` target
// the README shows exists, with the flags it shows, so the first page a new
// user reads cannot send them to a command that is gone.
func TestReadmeCommandsExist(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	targets := makeTargets(t)
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard, false)
	odinLines, makeLines := shownCommands(string(readme))
	if len(odinLines) < 10 || len(makeLines) < 3 {
		t.Fatalf("found only %d odin and %d make command lines in README.md: %q %q", len(odinLines), len(makeLines), odinLines, makeLines)
	}
	for _, line := range odinLines {
		if err := checkOdinLine(root, line); err != nil {
			t.Errorf("README.md shows `%s`: %v", strings.Join(line, " "), err)
		}
	}
	for _, line := range makeLines {
		for _, w := range line[1:] {
			if strings.HasPrefix(w, "-") || strings.Contains(w, "=") {
				continue
			}
			if !targets[w] {
				t.Errorf("README.md shows `%s`: the Makefile has no target %q", strings.Join(line, " "), w)
			}
		}
	}
}

// TestCheckOdinLineCatchesMistakes: the README check fails on a command,
// subcommand or flag that does not exist, so it cannot pass vacuously.
func TestCheckOdinLineCatchesMistakes(t *testing.T) {
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard, false)
	for _, bad := range []string{"odin frobnicate", "odin sessions frob ID", "odin run --no-such-flag x", "odin stats -Q"} {
		if err := checkOdinLine(root, shellWords(bad)); err == nil {
			t.Errorf("checkOdinLine(%q) = nil; want an error", bad)
		}
	}
	for _, good := range []string{`odin -p "task"`, "odin sessions show ID", "odin mcp add fs -- npx -y x .", "odin --resume ID", `odin run -o json --allow 'go test *' "t"`} {
		if err := checkOdinLine(root, shellWords(good)); err != nil {
			t.Errorf("checkOdinLine(%q) = %v", good, err)
		}
	}
	odin, mk := shownCommands("```sh\nX=1 odin view ID   # a comment\ncat log | odin -p why\nmake demo\n```\nand `odin undo`, `make test`.\n")
	if len(odin) != 3 || len(mk) != 2 {
		t.Errorf("shownCommands found %q and %q; want 3 odin and 2 make lines", odin, mk)
	}
}

// shownCommands returns the odin and make command lines of a Markdown
// text: lines of its shell code blocks and its inline code spans.
func shownCommands(md string) (odin, mk [][]string) {
	var candidates []string
	inFence, shell := false, false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			if !inFence {
				lang := strings.TrimPrefix(l, "```")
				shell = lang == "" || lang == "sh" || lang == "bash" || lang == "shell"
			}
			inFence = !inFence
			continue
		}
		if inFence {
			if shell {
				candidates = append(candidates, l)
			}
			continue
		}
		for _, span := range inlineCode.FindAllStringSubmatch(l, -1) {
			candidates = append(candidates, span[1])
		}
	}
	for _, c := range candidates {
		for _, seg := range shellSegments(c) {
			words := shellWords(seg)
			for len(words) > 0 && envAssign.MatchString(words[0]) {
				words = words[1:]
			}
			if len(words) == 0 {
				continue
			}
			switch words[0] {
			case "odin":
				odin = append(odin, words)
			case "make":
				mk = append(mk, words)
			}
		}
	}
	return odin, mk
}

var (
	inlineCode = regexp.MustCompile("`([^`]+)`")
	envAssign  = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)
)

// shellSegments cuts a shell line into its simple commands (at |, &&, ;
// and a comment), ignoring quoted text.
func shellSegments(line string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || rs[i-1] == ' '):
			return append(out, cur.String())
		case r == '|' || r == ';' || r == '&' || r == '(' || r == ')':
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(out, cur.String())
}

// shellWords splits a simple command into words, keeping quoted text
// together (quotes removed).
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// checkOdinLine resolves an `odin ...` command line against the real
// command tree: each bare word where subcommands are expected must name
// one, and every flag must be one the command it reached accepts.
func checkOdinLine(root *cobra.Command, words []string) error {
	cmd := root
	words = words[1:]
	expectSub := true
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			return nil
		}
		if cmd == root && (w == "-p" || w == "--print") {
			// odin -p is odin run (printAlias).
			run, _, err := root.Find([]string{"run"})
			if err != nil {
				return err
			}
			cmd = run
			continue
		}
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			var f *pflag.Flag
			if strings.HasPrefix(w, "--") {
				f = lookupFlag(cmd, func(fs *pflag.FlagSet) *pflag.Flag { return fs.Lookup(name) })
			} else if len(name) == 1 {
				f = lookupFlag(cmd, func(fs *pflag.FlagSet) *pflag.Flag { return fs.ShorthandLookup(name) })
			}
			if f == nil {
				return fmt.Errorf("%q has no flag %s", cmd.CommandPath(), w)
			}
			if !hasValue && f.NoOptDefVal == "" && i+1 < len(words) {
				i++ // its value
			}
			continue
		}
		if !expectSub {
			continue
		}
		if !cmd.HasSubCommands() {
			expectSub = false
			continue
		}
		var next *cobra.Command
		for _, c := range cmd.Commands() {
			if c.Name() == w || slices.Contains(c.Aliases, w) {
				next = c
			}
		}
		if next == nil {
			if cmd == root && !isCommandWord(w) {
				// odin "first message" (quotes already removed) or a placeholder.
				return nil
			}
			if cmd != root && cmd.Runnable() && !isCommandWord(w) {
				expectSub = false
				continue
			}
			return fmt.Errorf("%q has no subcommand %q", cmd.CommandPath(), w)
		}
		cmd = next
	}
	return nil
}

// lookupFlag finds a flag among a command's own, persistent and inherited
// ones.
func lookupFlag(cmd *cobra.Command, find func(*pflag.FlagSet) *pflag.Flag) *pflag.Flag {
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.PersistentFlags(), cmd.InheritedFlags()} {
		if f := find(fs); f != nil {
			return f
		}
	}
	return nil
}

// isCommandWord: a lowercase word is a command's name; a placeholder (ID,
// FILTER), a path or a sentence is an argument.
func isCommandWord(w string) bool {
	return commandWord.MatchString(w)
}

var commandWord = regexp.MustCompile(`^[a-z][a-z-]*$`)

// makeTargets reads the Makefile's rule names.
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	mf, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range makeRule.FindAllStringSubmatch(string(mf), -1) {
		for _, name := range strings.Fields(m[1]) {
			targets[name] = true
		}
	}
	return targets
}

var makeRule = regexp.MustCompile(`(?m)^([A-Za-z][A-Za-z0-9_ -]*):([^=]|$)`)

// TestDocLinksResolve: every relative link of the README and of docs/
// points at a file of the repository.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../../README.md")
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(stripCode(string(text)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			path := filepath.Join(filepath.Dir(page), target)
			checked++
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links %s, which does not exist", page, m[1])
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d links", checked)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// stripCode drops code blocks, where ](x) is code, not a link.
func stripCode(md string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// messageEventTypes are the EventType names package messages declares,
// read from its sources so that a test fails for a new event type a front
// end does not handle yet.
func messageEventTypes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("../../messages/*.go")
	if err != nil || len(names) == 0 {
		t.Fatalf("messages sources: %v", err)
	}
	var types []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		{
			ast.Inspect(f, func(n ast.Node) bool {
				fn, ok := n.(*ast.FuncDecl)
				if !ok || fn.Name.Name != "EventType" || fn.Body == nil || len(fn.Body.List) != 1 {
					return true
				}
				if ret, ok := fn.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
					if lit, ok := ret.Results[0].(*ast.BasicLit); ok {
						name, _ := strconv.Unquote(lit.Value)
						types = append(types, name)
					}
				}
				return false
			})
		}
	}
	if len(types) < 20 {
		t.Fatalf("found only %d event types in messages: %v", len(types), types)
	}
	return types
}
