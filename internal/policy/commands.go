package policy

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

// maxDepth bounds nested shells (bash -c 'bash -c ...') and substitutions.
const maxDepth = 8

// Commands classifies shell commands before ExecuteCommand runs them. A
// command is parsed with mvdan.cc/sh/v3/syntax (bash dialect) and every
// simple command in the tree is checked on its own: across ; && || | & and
// newlines, inside subshells, blocks, conditionals and loops, inside $(...),
// backticks, process substitutions and unquoted here-documents, and inside
// the wrappers env, xargs, timeout, nice, nohup, time, command, builtin,
// exec, stdbuf, setsid and the shells bash/sh/zsh/dash/ksh -c (whose
// script is parsed in turn). Redirection targets are checked as paths with
// the Guard, as are the arguments of every command.
//
// The verdict for a mode:
//
//   - Deny: a forbidden command (permissions.forbidden_commands, sudo and
//     the like), a write to a protected path, control characters, and in
//     ask and plan modes anything that is not provably read-only.
//   - Ask: in edit mode, a command that is neither read-only nor matched by
//     permissions.allowed_commands, or that cannot be resolved statically
//     (eval, source, a command name from an expansion, a parse error...);
//     in every mode, a path outside the project root, cd out of the root,
//     or an argument only known at run time.
//   - Allow: everything else.
//
// Commands is immutable and safe for concurrent use.
type Commands struct {
	guard     *Guard
	allowed   []Pattern
	forbidden []Pattern
}

// NewCommands compiles the patterns of perms; g confines paths.
func NewCommands(g *Guard, perms config.Permissions) (*Commands, error) {
	if g == nil {
		return nil, fmt.Errorf("policy: NewCommands needs a Guard")
	}
	allowed, err := compilePatterns("permissions.allowed_commands", perms.AllowedCommands)
	if err != nil {
		return nil, err
	}
	forbidden, err := compilePatterns("permissions.forbidden_commands", perms.ForbiddenCommands)
	if err != nil {
		return nil, err
	}
	return &Commands{guard: g, allowed: allowed, forbidden: forbidden}, nil
}

// WithGuard returns Commands that check paths with g (an agent's guard, whose
// write filter then applies to redirections).
func (c *Commands) WithGuard(g *Guard) *Commands {
	cc := *c
	cc.guard = g
	return &cc
}

// Check classifies command for mode without asking anyone. An unknown or
// empty mode is treated as ask mode.
func (c *Commands) Check(command string, mode messages.Mode) Verdict {
	w := &walker{c: c, ro: mode != messages.ModeEdit, mode: mode}
	if w.mode == "" {
		w.mode = messages.ModeAsk
	}
	if strings.TrimSpace(command) == "" {
		w.deny(RuleUnresolvable, command, "the command is empty")
		return w.v
	}
	w.script(command, &scope{cwds: []string{c.guard.root}}, command)
	return w.v
}

// scope is what the walker knows about the shell running a list of
// commands: the directories it may be in. A failed or conditional cd leaves
// the old directory possible, so the set only grows within a shell.
type scope struct {
	cwds []string
}

func (s *scope) clone() *scope { return &scope{cwds: slices.Clone(s.cwds)} }

func (s *scope) addCwd(d string) {
	if !slices.Contains(s.cwds, d) {
		s.cwds = append(s.cwds, d)
	}
}

// walker accumulates the findings of one Check.
type walker struct {
	c     *Commands
	mode  messages.Mode
	ro    bool
	v     Verdict
	depth int
	// forbiddenOnly walkers look only for forbidden commands; they scan
	// text that may or may not run (suffixes of a command's arguments).
	forbiddenOnly bool
}

// word is a shell word after static evaluation.
type word struct {
	text   string // the value after quote removal, or the source text when dynamic
	prefix string // for a dynamic word: the static text it starts with
	static bool   // the value is known without running anything
	glob   bool   // contains unquoted pattern characters
	tilde  bool   // starts with an unquoted ~
}

func (w *walker) deny(rule, subject, reason string) {
	if w.forbiddenOnly && rule != RuleForbidden {
		return
	}
	w.v.add(Finding{Action: Deny, Rule: rule, Subject: subject, Reason: reason})
}

func (w *walker) ask(rule, subject, key, reason string) {
	if w.forbiddenOnly {
		return
	}
	w.v.add(Finding{Action: Ask, Rule: rule, Subject: subject, Key: key, Reason: reason})
}

// needsEdit records a command that is not read-only: refused in ask and plan
// modes, asked in edit mode unless an allowed pattern matched it.
func (w *walker) needsEdit(subject, why string, allowed bool) {
	if w.ro {
		w.deny(RuleMode, subject, fmt.Sprintf("`%s` is not read-only (%s); %s mode runs only read-only commands, and only the user can switch to edit mode", subject, why, w.mode))
		return
	}
	if !allowed {
		w.ask(RuleNotAllowed, subject, "cmd:"+subject, fmt.Sprintf("`%s` is not read-only (%s) and matches no permissions.allowed_commands pattern", subject, why))
	}
}

// unresolvable records a command whose effect cannot be known from its text.
func (w *walker) unresolvable(subject, why string) {
	if w.ro {
		w.deny(RuleUnresolvable, subject, fmt.Sprintf("`%s` cannot be checked: %s; %s mode runs only commands proven read-only", subject, why, w.mode))
		return
	}
	w.ask(RuleUnresolvable, subject, "cmd:"+subject, fmt.Sprintf("`%s` cannot be checked: %s", subject, why))
}

// script parses and walks shell source.
func (w *walker) script(src string, sc *scope, subject string) {
	if w.depth > maxDepth {
		w.unresolvable(subject, "shells and substitutions are nested too deeply")
		return
	}
	if r, bad := unsafeRune(src); bad {
		w.deny(RuleUnsafeText, subject, fmt.Sprintf("the command contains the control or invisible character %U, which terminals hide and shells read differently from what is shown; send the command without it", r))
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		w.unresolvable(subject, fmt.Sprintf("it does not parse as a shell command (%v)", err))
		return
	}
	w.depth++
	w.stmts(f.Stmts, sc)
	w.depth--
}

// unsafeRune finds characters that hide text or that the parser and bash
// read differently: control characters other than tab and newline
// (carriage return above all), bidirectional overrides and zero-width
// characters, and invalid UTF-8.
func unsafeRune(s string) (rune, bool) {
	if !utf8.ValidString(s) {
		return utf8.RuneError, true
	}
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return r, true
		case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0xfeff:
			return r, true
		case unicode.Is(unicode.Cf, r):
			return r, true
		}
	}
	return 0, false
}

func (w *walker) stmts(list []*syntax.Stmt, sc *scope) {
	for _, s := range list {
		w.stmt(s, sc)
	}
}

func (w *walker) stmt(s *syntax.Stmt, sc *scope) {
	for _, r := range s.Redirs {
		w.redirect(r, sc)
	}
	if s.Cmd != nil {
		w.command(s.Cmd, sc)
	}
}

func (w *walker) command(cmd syntax.Command, sc *scope) {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		w.call(x, sc)
	case *syntax.BinaryCmd:
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			// Each side of a pipe runs in its own subshell.
			w.stmt(x.X, sc.clone())
			w.stmt(x.Y, sc.clone())
			return
		}
		w.stmt(x.X, sc)
		w.stmt(x.Y, sc)
	case *syntax.Subshell:
		w.stmts(x.Stmts, sc.clone())
	case *syntax.Block:
		w.stmts(x.Stmts, sc)
	case *syntax.IfClause:
		w.stmts(x.Cond, sc)
		w.stmts(x.Then, sc)
		if x.Else != nil {
			w.command(x.Else, sc)
		}
	case *syntax.WhileClause:
		w.stmts(x.Cond, sc)
		w.stmts(x.Do, sc)
	case *syntax.ForClause:
		switch l := x.Loop.(type) {
		case *syntax.WordIter:
			for _, it := range l.Items {
				w.nested(it, sc)
				w.codeLike(evalWord(it), printNode(x.Loop))
			}
			w.variable(l.Name.Value, false, printNode(x.Loop))
		case *syntax.CStyleLoop:
			w.nested(l, sc)
			w.arithmetic(l, printNode(l))
		}
		w.stmts(x.Do, sc)
	case *syntax.CaseClause:
		w.nested(x.Word, sc)
		for _, item := range x.Items {
			for _, p := range item.Patterns {
				w.nested(p, sc)
			}
			w.stmts(item.Stmts, sc)
		}
	case *syntax.FuncDecl:
		w.unresolvable(printNode(x), "it defines a shell function, which can shadow any command name")
		w.stmt(x.Body, sc.clone())
	case *syntax.ArithmCmd:
		w.nested(x, sc)
		w.arithmetic(x.X, printNode(x))
	case *syntax.LetClause:
		w.nested(x, sc)
		for _, e := range x.Exprs {
			w.arithmetic(e, printNode(x))
		}
	case *syntax.TestClause:
		w.nested(x, sc)
		w.testArithmetic(x.X, printNode(x))
	case *syntax.DeclClause:
		w.decl(x, sc)
	case *syntax.TimeClause:
		if x.Stmt != nil {
			w.stmt(x.Stmt, sc)
		}
	case *syntax.CoprocClause:
		w.stmt(x.Stmt, sc.clone())
	default:
		w.unresolvable(printNode(cmd), fmt.Sprintf("the construct %T is not supported", cmd))
	}
}

// nested walks the command and process substitutions inside node, each in
// a subshell of sc, and flags expansions that evaluate a variable's value
// as code.
func (w *walker) nested(node syntax.Node, sc *scope) {
	if node == nil {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(x.Stmts, sc.clone())
			return false
		case *syntax.ProcSubst:
			w.stmts(x.Stmts, sc.clone())
			return false
		case *syntax.ArithmExp:
			w.arithmetic(x.X, printNode(x))
		case *syntax.ParamExp:
			subject := printNode(x)
			if x.Excl {
				w.unresolvable(subject, "indirect expansion ${!name} can evaluate a subscript taken from a variable's value")
			}
			if x.Index != nil && !allElements(x.Index) {
				w.arithmetic(x.Index, subject)
			}
			if x.Slice != nil {
				w.arithmetic(x.Slice.Offset, subject)
				w.arithmetic(x.Slice.Length, subject)
			}
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.Contains(printNode(x.Exp.Word), "P") {
				w.unresolvable(subject, "${name@P} expands a variable's value as a prompt, which runs the command substitutions in it")
			}
		}
		return true
	})
}

// arithmetic flags arithmetic that reads variables: bash evaluates a
// variable's value as an expression there, and a value like a[$(cmd)] runs
// cmd, so the effect depends on data the check cannot see.
func (w *walker) arithmetic(node syntax.Node, subject string) {
	if node == nil {
		return
	}
	if arithReadsVariables(node) {
		w.unresolvable(subject, "arithmetic on a variable evaluates the variable's value as code (a[$(cmd)] runs cmd)")
	}
}

func arithReadsVariables(node syntax.Node) bool {
	if node == nil {
		return false
	}
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ParamExp:
			found = true
		case *syntax.Lit:
			if !isNumber(x.Value) {
				found = true
			}
		}
		return !found
	})
	return found
}

// allElements reports the subscripts @ and *, which select every element
// without evaluating anything.
func allElements(x syntax.ArithmExpr) bool {
	wd, ok := x.(*syntax.Word)
	if !ok || len(wd.Parts) != 1 {
		return false
	}
	lit, ok := wd.Parts[0].(*syntax.Lit)
	return ok && (lit.Value == "@" || lit.Value == "*")
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// testArithmetic flags [[ a -eq b ]] comparisons of variables, which bash
// evaluates arithmetically.
func (w *walker) testArithmetic(x syntax.TestExpr, subject string) {
	syntax.Walk(x, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryTest); ok {
			switch b.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsGtr, syntax.TsLeq, syntax.TsGeq:
				if wordReadsVariables(b.X) || wordReadsVariables(b.Y) {
					w.unresolvable(subject, "an arithmetic comparison of a variable evaluates its value as code")
				}
			}
		}
		return true
	})
}

func wordReadsVariables(x syntax.TestExpr) bool {
	wd, ok := x.(*syntax.Word)
	if !ok {
		return true
	}
	v := evalWord(wd)
	return len(v) != 1 || !v[0].static || !isNumber(strings.TrimPrefix(v[0].text, "-"))
}

func (w *walker) decl(d *syntax.DeclClause, sc *scope) {
	subject := printNode(d)
	w.nested(d, sc)
	exported := d.Variant.Value == "export"
	named := 0
	prints := false
	for _, a := range d.Args {
		if a.Name == nil && a.Value != nil {
			ws := evalWord(a.Value)
			for _, o := range ws {
				if !o.static {
					w.unresolvable(subject, "an option of "+d.Variant.Value+" is only known at run time")
					continue
				}
				if strings.HasPrefix(o.text, "-") || strings.HasPrefix(o.text, "+") {
					if strings.ContainsRune(o.text, 'x') && o.text[0] == '-' {
						exported = true
					}
					if strings.ContainsRune(o.text, 'n') {
						w.needsEdit(subject, d.Variant.Value+" -n makes a name refer to another variable", false)
					}
					if strings.ContainsAny(o.text, "pfF") {
						prints = true
					}
				}
			}
		}
	}
	for _, a := range d.Args {
		if a.Name == nil {
			continue
		}
		named++
		if a.Value != nil {
			w.codeLike(evalWord(a.Value), subject)
		}
		w.variable(a.Name.Value, exported, subject)
	}
	if named == 0 && (prints || len(d.Args) == 0) && (exported || d.Variant.Value == "declare" || d.Variant.Value == "typeset" || d.Variant.Value == "readonly") {
		w.needsEdit(subject, "it prints shell variables, which may hold secrets", false)
	}
}

// codeLike flags an assigned value that looks like shell code: a later
// arithmetic or prompt expansion of the variable could run it.
func (w *walker) codeLike(ws []word, subject string) {
	for _, v := range ws {
		if v.static && (strings.Contains(v.text, "$(") || strings.Contains(v.text, "`") || strings.Contains(v.text, "${") || strings.Contains(v.text, "$[")) {
			w.unresolvable(subject, "it stores shell code in a variable, where a later expansion could run it")
		}
	}
}

// variable checks an assignment to name. Exported assignments (prefix
// assignments, export, env NAME=...) reach the programs run and may only
// set harmless variables; other assignments may set any name that is not an
// environment-style (upper-case) name or a shell-special one, since those
// can change how later commands are found and run.
func (w *walker) variable(name string, exported bool, subject string) {
	if safeEnvName(name) {
		return
	}
	if exported {
		w.needsEdit(subject, fmt.Sprintf("it passes %s to the command's environment, which can change what the command runs", name), false)
		return
	}
	if strings.ToLower(name) != name || strings.HasPrefix(name, "_") {
		w.needsEdit(subject, fmt.Sprintf("it sets %s, which can change how later commands are found or run", name), false)
	}
}

// safeEnvName lists environment variables a command may be given without
// changing which program runs or what it loads.
func safeEnvName(name string) bool {
	switch name {
	case "CGO_ENABLED", "GOOS", "GOARCH", "GOARM", "GOAMD64", "GO111MODULE", "GOMAXPROCS",
		"GOGC", "GOMEMLIMIT", "GOTRACEBACK", "CI", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
		"TERM", "TZ", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_COLLATE",
		"NODE_ENV", "RUST_BACKTRACE", "RUST_LOG", "PYTHONDONTWRITEBYTECODE",
		"PYTHONUNBUFFERED", "PYTHONHASHSEED", "DEBUG", "VERBOSE", "COLUMNS", "LINES":
		return true
	}
	return false
}

func (w *walker) call(ce *syntax.CallExpr, sc *scope) {
	subject := printNode(ce)
	for _, a := range ce.Assigns {
		w.nested(a, sc)
	}
	for _, a := range ce.Args {
		w.nested(a, sc)
	}
	if len(ce.Args) == 0 {
		for _, a := range ce.Assigns {
			if a.Value != nil {
				w.codeLike(evalWord(a.Value), subject)
			}
			w.variable(a.Name.Value, false, subject)
		}
		return
	}
	for _, a := range ce.Assigns {
		w.variable(a.Name.Value, true, subject)
	}
	var argv []word
	for _, a := range ce.Args {
		argv = append(argv, evalWord(a)...)
	}
	w.simple(argv, subject, sc)
}

// evalWord evaluates a word statically. Brace expansion yields several
// words; anything that needs the shell at run time (parameters,
// substitutions, arithmetic, extended globs) yields a dynamic word.
func evalWord(wd *syntax.Word) []word {
	if wd == nil {
		return nil
	}
	cp := *wd
	cp.Parts = slices.Clone(wd.Parts)
	if syntax.SplitBraces(&cp) {
		var out []word
		for bw, err := range expand.BracesSeq(nil, &cp) {
			if err != nil || len(out) >= 256 {
				return []word{{text: printNode(wd)}}
			}
			out = append(out, evalSingle(bw))
		}
		return out
	}
	return []word{evalSingle(&cp)}
}

func evalSingle(wd *syntax.Word) word {
	v := word{static: true}
	for i, part := range wd.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if pattern.HasMeta(p.Value, 0) {
				v.glob = true
			}
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				v.tilde = true
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					v.static = false
				}
			}
		default:
			v.static = false
		}
	}
	if v.static {
		s, err := expand.Literal(nil, wd)
		if err != nil {
			v.static = false
		} else {
			v.text = s
		}
	}
	if !v.static {
		v.text = printNode(wd)
		for _, part := range wd.Parts {
			lit, ok := part.(*syntax.Lit)
			if !ok {
				break
			}
			v.prefix += lit.Value
		}
	}
	return v
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, x := range ws {
		out[i] = x.text
	}
	return out
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, n); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return strings.TrimSpace(b.String())
}

// argsAreData are commands whose arguments are printed or compared, never
// opened or run.
func argsAreData(name string) bool {
	switch name {
	case "echo", "printf", "true", "false", ":", "test", "[", "expr", "exit", "return", "shift", "sleep", "set", "unset", "type", "which", "whereis", "help":
		return true
	}
	return false
}

// simple checks one simple command given as words, unwrapping wrappers.
func (w *walker) simple(argv []word, subject string, sc *scope) {
	var pathWords []word // arguments of every layer, checked as paths
	dynamicInput := ""   // why arguments arrive at run time (xargs)
	cur := argv
	for len(cur) > 0 {
		name := cur[0]
		if !name.static || name.glob || name.tilde {
			w.unresolvable(subject, fmt.Sprintf("the command name %s is not a plain word, so what runs cannot be known", name.text))
			w.forbiddenSuffixes(cur, sc)
			return
		}
		w.checkForbidden(cur, subject)
		inner, extra, why, ok := w.unwrap(cur, subject, sc)
		if !ok {
			break
		}
		pathWords = append(pathWords, extra...)
		if why != "" {
			dynamicInput = why
		}
		if len(inner) == 0 {
			cur = nil
			break
		}
		cur = inner
	}
	if len(cur) == 0 {
		w.paths(pathWords, subject, sc, true)
		return
	}
	name := cur[0].text
	args := cur[1:]
	allowed := w.allowedMatch(cur)
	readOnlyCmd := false
	switch {
	case strings.ContainsRune(name, '/'):
		pathWords = append(pathWords, cur[0])
		w.needsEdit(subject, name+" runs a program by path", allowed)
		w.forbiddenSuffixes(cur, sc)
	case isShell(name):
		pathWords = append(pathWords, w.shell(cur, subject, sc, allowed)...)
	case name == "eval":
		w.unresolvable(subject, "eval runs a string as shell code")
		w.forbiddenScript(cur[1:], sc)
	case name == "source" || name == ".":
		w.unresolvable(subject, name+" runs a script file inside this shell")
		pathWords = append(pathWords, args...)
	case name == "trap":
		w.unresolvable(subject, "trap stores shell code to run later")
		w.forbiddenScript(cur[1:], sc)
	case name == "cd" || name == "pushd":
		w.cd(args, subject, sc)
		return
	default:
		ok, why, sensitive := readOnly(name, texts(args))
		if ok && sensitive {
			for _, a := range args {
				if !a.static {
					ok, why = false, fmt.Sprintf("%s's arguments are only known at run time and could include an option that writes or runs", name)
					break
				}
				if a.glob && globMatchesOption(w.c.guard, a, sc) {
					ok, why = false, fmt.Sprintf("the pattern %s matches a file name starting with '-', which %s would read as an option", a.text, name)
					break
				}
			}
		}
		if ok && dynamicInput != "" && sensitive {
			ok, why = false, dynamicInput+", which could include an option that writes or runs"
		}
		if !ok {
			w.needsEdit(subject, why, allowed)
			w.forbiddenSuffixes(cur, sc)
		}
		readOnlyCmd = ok
		if argsAreData(name) {
			return
		}
		pathWords = append(pathWords, args...)
	}
	if dynamicInput != "" {
		w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: %s, so the paths they name cannot be checked", subject, dynamicInput))
	}
	w.paths(pathWords, subject, sc, readOnlyCmd)
}

// isShell names the shells whose -c script is parsed as bash.
func isShell(name string) bool {
	switch name {
	case "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash":
		return true
	}
	return false
}

// allowedMatch reports whether argv matches an allowed pattern.
func (w *walker) allowedMatch(argv []word) bool {
	t := texts(argv)
	for _, p := range w.c.allowed {
		if p.Match(t) {
			return true
		}
	}
	return false
}

// checkForbidden denies argv if a forbidden pattern matches it, its base
// name form, or its git form without global options. A dynamic word
// matches any pattern word, since it could be anything.
func (w *walker) checkForbidden(argv []word, subject string) {
	if len(w.c.forbidden) == 0 {
		return
	}
	forms := [][]word{argv}
	if base := filepath.Base(argv[0].text); base != argv[0].text {
		b := slices.Clone(argv)
		b[0].text = base
		forms = append(forms, b)
	}
	if filepath.Base(argv[0].text) == "git" {
		forms = append(forms, gitWithoutGlobals(argv))
	}
	for _, p := range w.c.forbidden {
		for _, f := range forms {
			if matchConservative(p, f) {
				w.deny(RuleForbidden, subject, fmt.Sprintf("`%s` matches the forbidden pattern `%s` (permissions.forbidden_commands) and is never run", strings.Join(texts(argv), " "), p))
				return
			}
		}
	}
}

// matchConservative matches p against argv where dynamic words may be
// anything: they match every pattern word, and a dynamic word in the tail
// makes the tail match.
func matchConservative(p Pattern, argv []word) bool {
	if p.Match(texts(argv)) {
		return true
	}
	dyn := false
	for _, a := range argv {
		dyn = dyn || !a.static || a.glob
	}
	if !dyn {
		return false
	}
	n := len(p.words)
	for i := 0; i < n-1; i++ {
		if i >= len(argv) {
			return false
		}
		if argv[i].static && !argv[i].glob && !p.words[i].MatchString(argv[i].text) {
			return false
		}
		if !argv[i].static && !p.couldStartWith(i, argv[i].prefix) {
			return false
		}
	}
	if len(argv) < n {
		return p.tail
	}
	if !p.tail && len(argv) > n {
		// A dynamic word may expand to several words or none.
		return slices.ContainsFunc(argv, func(a word) bool { return !a.static })
	}
	for _, a := range argv[n-1:] {
		if !a.static || a.glob {
			return true
		}
	}
	return p.words[n-1].MatchString(strings.Join(texts(argv[n-1:]), " "))
}

// gitWithoutGlobals drops git's global options (git -C dir -c k=v push is
// git push) for forbidden matching.
func gitWithoutGlobals(argv []word) []word {
	out := []word{{text: "git", static: true}}
	i := 1
	for ; i < len(argv); i++ {
		t := argv[i].text
		if !strings.HasPrefix(t, "-") {
			break
		}
		switch t {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix":
			i++
		}
	}
	return append(out, argv[min(i, len(argv)):]...)
}

// forbiddenSuffixes scans the arguments of a command that is not read-only
// for forbidden commands it may run: every suffix starting at a word that
// is not an option (find . -exec git push ;) and every word holding spaces,
// parsed as a script (watch 'git push', flock f -c 'git push').
func (w *walker) forbiddenSuffixes(argv []word, sc *scope) {
	if len(w.c.forbidden) == 0 || w.forbiddenOnly {
		return
	}
	sub := &walker{c: w.c, mode: w.mode, ro: w.ro, depth: w.depth + 1, forbiddenOnly: true}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !a.static || strings.HasPrefix(a.text, "-") {
			continue
		}
		sub.simple(argv[i:], strings.Join(texts(argv), " "), sc.clone())
		if strings.ContainsAny(a.text, " \t\n;&|") {
			sub.script(a.text, sc.clone(), a.text)
		}
	}
	for _, f := range sub.v.Findings {
		w.v.add(f)
	}
}

// forbiddenScript checks the static words of args, joined, as a script for
// forbidden commands (eval 'git push').
func (w *walker) forbiddenScript(args []word, sc *scope) {
	if len(w.c.forbidden) == 0 || len(args) == 0 {
		return
	}
	sub := &walker{c: w.c, mode: w.mode, ro: w.ro, depth: w.depth + 1, forbiddenOnly: true}
	src := strings.Join(texts(args), " ")
	sub.script(src, sc.clone(), src)
	for _, f := range sub.v.Findings {
		w.v.add(f)
	}
}

// unwrap returns the command a wrapper runs. extra are the wrapper's own
// arguments (checked as paths); dynamic says why the inner command gets
// arguments at run time; ok is false when argv is not a wrapper.
func (w *walker) unwrap(argv []word, subject string, sc *scope) (inner, extra []word, dynamic string, ok bool) {
	name := argv[0].text
	args := argv[1:]
	switch name {
	case "sudo", "doas", "su", "pkexec", "run0":
		if w.forbiddenOnly {
			return nil, nil, "", true // an argument named sudo is not a privilege escalation
		}
		w.deny(RuleForbidden, subject, fmt.Sprintf("`%s` escalates privileges, which Odin never does", name))
		return nil, nil, "", true
	case "env":
		return w.unwrapEnv(args, subject)
	case "timeout":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			switch args[i].text {
			case "-s", "-k", "--signal", "--kill-after":
				i++
			}
			i++
		}
		if i >= len(args) {
			return nil, args, "", true
		}
		return args[i+1:], args[:i+1], "", true
	case "nice":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			if args[i].text == "-n" {
				i++
			}
			i++
		}
		return args[min(i, len(args)):], args[:min(i, len(args))], "", true
	case "nohup", "builtin", "setsid":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			i++
		}
		return args[i:], args[:i], "", true
	case "stdbuf":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			if len(args[i].text) == 2 {
				i++
			}
			i++
		}
		return args[min(i, len(args)):], args[:min(i, len(args))], "", true
	case "exec":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			if args[i].text == "-a" {
				i++
			}
			i++
		}
		return args[min(i, len(args)):], args[:min(i, len(args))], "", true
	case "command":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			if strings.ContainsAny(args[i].text, "vV") {
				return nil, nil, "", true // command -v name: a lookup
			}
			i++
		}
		return args[i:], args[:i], "", true
	case "time":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			t := args[i].text
			switch {
			case t == "-o" || t == "--output":
				if i+1 < len(args) {
					w.redirectTarget(args[i+1], true, subject, sc)
				}
				i++
			case strings.HasPrefix(t, "--output="):
				w.redirectTarget(word{text: strings.TrimPrefix(t, "--output="), static: args[i].static}, true, subject, sc)
			case t == "-f" || t == "--format":
				i++
			}
			i++
		}
		return args[min(i, len(args)):], nil, "", true
	case "xargs":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			t := args[i].text
			if t == "--" {
				i++
				break
			}
			switch t {
			case "-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s":
				i++
			}
			if strings.HasPrefix(t, "--process-slot-var") {
				w.needsEdit(subject, "xargs --process-slot-var sets an environment variable", false)
			}
			i++
		}
		rest := args[min(i, len(args)):]
		if len(rest) == 0 {
			rest = []word{{text: "echo", static: true}}
		}
		return rest, args[:min(i, len(args))], "xargs appends arguments read from its input", true
	}
	return nil, nil, "", false
}

func (w *walker) unwrapEnv(args []word, subject string) (inner, extra []word, dynamic string, ok bool) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case !a.static:
			w.unresolvable(subject, "an argument of env is only known at run time")
			return nil, nil, "", true
		case t == "--":
			i++
			goto done
		case t == "-S" || strings.HasPrefix(t, "--split-string") || (strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'S')):
			w.unresolvable(subject, "env -S splits a string into a command")
			w.forbiddenScript(args[i+1:], &scope{cwds: []string{w.c.guard.root}})
			return nil, nil, "", true
		case t == "-C" || strings.HasPrefix(t, "--chdir"):
			w.unresolvable(subject, "env -C runs the command in another directory")
			return nil, nil, "", true
		case t == "-u" || t == "--unset":
			i++
		case t == "-i" || t == "-0" || t == "-" || t == "--ignore-environment" || t == "--null" || strings.HasPrefix(t, "-u") || strings.HasPrefix(t, "--unset=") || t == "-v" || t == "--debug":
		case strings.HasPrefix(t, "-"):
			w.needsEdit(subject, "env option "+t+" is not known to be harmless", false)
		case strings.Contains(t, "=") && !strings.HasPrefix(t, "="):
			w.variable(t[:strings.IndexByte(t, '=')], true, subject)
		default:
			goto done
		}
	}
done:
	if i >= len(args) {
		w.needsEdit(subject, "env without a command prints the environment, which may hold secrets", false)
		return nil, nil, "", true
	}
	return args[i:], nil, "", true
}

// shell handles bash/sh/... invocations: -c scripts are parsed and walked in
// a child shell; a script file or standard input cannot be checked. It
// returns the words to check as paths.
func (w *walker) shell(argv []word, subject string, sc *scope, allowed bool) []word {
	name := argv[0].text
	args := argv[1:]
	hasC, stdin := false, false
	i := 0
loop:
	for ; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case !a.static:
			w.unresolvable(subject, "an option of "+name+" is only known at run time")
			return nil
		case t == "--" || t == "-":
			i++
			break loop
		case t == "-o" || t == "+o" || t == "-O" || t == "+O":
			i++
		case t == "--rcfile" || t == "--init-file":
			w.unresolvable(subject, name+" "+t+" runs a startup file")
			return nil
		case strings.HasPrefix(t, "--"):
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			if t[0] == '-' && strings.ContainsRune(t, 'c') {
				hasC = true
			}
			if strings.ContainsRune(t, 's') {
				stdin = true
			}
		default:
			break loop
		}
	}
	operands := args[min(i, len(args)):]
	switch {
	case hasC && len(operands) == 0:
		w.unresolvable(subject, name+" -c has no command string")
	case hasC && !operands[0].static:
		w.unresolvable(subject, "the script given to "+name+" -c is only known at run time")
		return operands[1:]
	case hasC:
		w.script(operands[0].text, sc.clone(), subject)
		return operands[1:]
	case stdin || len(operands) == 0:
		w.unresolvable(subject, name+" reads commands from its standard input, which cannot be checked")
	default:
		w.needsEdit(subject, name+" runs the script "+operands[0].text, allowed)
		return operands
	}
	return nil
}

// cd checks a change of directory and records where the shell may now be.
func (w *walker) cd(args []word, subject string, sc *scope) {
	var target *word
	for i := range args {
		a := args[i]
		if a.static && strings.HasPrefix(a.text, "-") && a.text != "-" {
			continue
		}
		target = &a
		break
	}
	switch {
	case target == nil:
		w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s` goes to the home directory, outside the project root %s", subject, w.c.guard.root))
		return
	case target.text == "-" && target.static:
		w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s` returns to a directory that cannot be known", subject))
		return
	case !target.static || target.glob:
		w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the directory is only known at run time, so where later commands run cannot be checked", subject))
		return
	case target.tilde:
		w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s` goes to a home directory, outside the project root %s", subject, w.c.guard.root))
		return
	}
	var next []string
	for _, cwd := range sc.cwds {
		resolved, err := resolvePath(cwd, target.text)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
			continue // cd fails; the shell stays where it was
		}
		if w.c.guard.container(resolved) == "" {
			w.ask(RuleOutsideRoot, resolved, pathKey(tools.AccessRead, resolved), fmt.Sprintf("`%s` leaves the project root %s for %s (rule %s); to allow it, run with --add-dir %s or add it to permissions.additional_dirs", subject, w.c.guard.root, resolved, RuleOutsideRoot, resolved))
		}
		next = append(next, resolved)
	}
	for _, d := range next {
		sc.addCwd(d)
	}
}

// redirect checks one redirection.
func (w *walker) redirect(r *syntax.Redirect, sc *scope) {
	if r.Hdoc != nil {
		w.nested(r.Hdoc, sc)
	}
	if r.Word == nil {
		return
	}
	w.nested(r.Word, sc)
	write := false
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return // the body is data; its substitutions were walked above
	case syntax.RdrIn:
	case syntax.DplIn, syntax.DplOut:
		ws := evalWord(r.Word)
		if len(ws) == 1 && ws[0].static && (ws[0].text == "-" || isNumber(strings.TrimSuffix(ws[0].text, "-"))) {
			return // duplicating or closing a descriptor
		}
		write = r.Op == syntax.DplOut
	default: // > >> >| <> &> &>>
		write = true
	}
	if len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return // a pipe to a command walked above
		}
	}
	ws := evalWord(r.Word)
	subject := r.Op.String() + printNode(r.Word)
	if len(ws) != 1 {
		w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("the redirection `%s` has several targets", subject))
		return
	}
	w.redirectTarget(ws[0], write, subject, sc)
}

// redirectTarget checks a path a command writes (write) or reads.
func (w *walker) redirectTarget(t word, write bool, subject string, sc *scope) {
	if w.forbiddenOnly {
		return
	}
	if !t.static || t.glob || t.tilde {
		if write && w.ro {
			w.deny(RuleMode, subject, fmt.Sprintf("`%s` writes to a file only known at run time; %s mode changes nothing", subject, w.mode))
			return
		}
		w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the redirection target is only known at run time, so it cannot be checked", subject))
		return
	}
	if devPath(t.text) {
		return
	}
	access := tools.AccessRead
	if write {
		access = tools.AccessWrite
	}
	for _, cwd := range sc.cwds {
		lexical := t.text
		if !filepath.IsAbs(lexical) {
			lexical = filepath.Join(cwd, lexical)
		}
		resolved, err := resolvePath(cwd, t.text)
		if err != nil {
			w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the target cannot be resolved (%v)", subject, err))
			continue
		}
		v := w.c.guard.classify(filepath.Clean(lexical), resolved, access)
		if write && w.ro && v.Action != Deny {
			w.deny(RuleMode, subject, fmt.Sprintf("`%s` writes %s; %s mode changes nothing", subject, w.c.guard.display(resolved), w.mode))
			continue
		}
		for _, f := range v.Findings {
			w.v.add(f)
		}
	}
}

// devPath lists device files that are safe to name in any mode.
func devPath(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty":
		return true
	}
	return false
}

// paths checks the words a command may open as paths: every argument (and
// option values after = or attached to a short option). A path outside the
// allowed directories asks; for a read-only command one that does not exist
// is skipped, since reading it reads nothing.
func (w *walker) paths(ws []word, subject string, sc *scope, readOnlyCmd bool) {
	if w.forbiddenOnly {
		return
	}
	for _, a := range ws {
		if !a.static {
			w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the argument %s is only known at run time, so the paths it names cannot be checked", subject, a.text))
			continue
		}
		if a.tilde {
			w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s`: %s names a home directory, outside the project root %s", subject, a.text, w.c.guard.root))
			continue
		}
		for _, cand := range pathCandidates(a.text) {
			w.pathArg(cand, a.glob, subject, sc, readOnlyCmd)
		}
	}
}

// pathCandidates are the strings in an argument that a program may open.
func pathCandidates(s string) []string {
	out := []string{s}
	if strings.HasPrefix(s, "-") {
		if i := strings.IndexByte(s, '='); i >= 0 {
			out = append(out, s[i+1:])
		}
		if !strings.HasPrefix(s, "--") && len(s) > 3 && strings.ContainsAny(s[2:3], "/~.") {
			out = append(out, s[2:])
		}
	}
	return out
}

func (w *walker) pathArg(cand string, glob bool, subject string, sc *scope, readOnlyCmd bool) {
	if cand == "" || devPath(cand) {
		return
	}
	if strings.HasPrefix(cand, "~") {
		w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s`: %s names a home directory, outside the project root %s", subject, cand, w.c.guard.root))
		return
	}
	for _, cwd := range sc.cwds {
		var targets []string
		if glob {
			for _, comp := range strings.Split(filepath.ToSlash(cand), "/") {
				if m, _ := path.Match(comp, ".."); m && comp != ".." {
					w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the pattern %s can match .. and climb out of the directory", subject, cand))
					return
				}
			}
			// The directory the pattern starts from is checked first; only
			// a pattern rooted inside an allowed directory is expanded, so
			// that /*/*/* cannot make the check walk the whole disk.
			prefix := "."
			if i := strings.IndexAny(cand, "*?["); i > 0 {
				prefix = filepath.Dir(cand[:i] + "x")
			}
			if start, err := resolvePath(cwd, prefix); err != nil || w.c.guard.container(start) == "" {
				w.pathTarget(prefix, cwd, subject, readOnlyCmd)
				continue
			}
			p := cand
			if !filepath.IsAbs(p) {
				p = filepath.Join(cwd, p)
			}
			matches, _ := filepath.Glob(p)
			targets = append(targets, matches...)
		} else {
			targets = append(targets, cand)
		}
		for _, t := range targets {
			w.pathTarget(t, cwd, subject, readOnlyCmd)
		}
	}
}

func (w *walker) pathTarget(t, cwd, subject string, readOnlyCmd bool) {
	resolved, err := resolvePath(cwd, t)
	if err != nil {
		return
	}
	if w.c.guard.container(resolved) != "" {
		return
	}
	lexical := t
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(cwd, lexical)
	}
	if readOnlyCmd {
		if _, err := os.Lstat(resolved); err != nil {
			return // reading what does not exist reads nothing
		}
	} else if filepath.IsAbs(t) && t == filepath.Clean(t) && !exists(filepath.Dir(resolved)) {
		return // not a path this command could create: its directory is missing too
	}
	via := ""
	if filepath.Clean(lexical) != resolved {
		via = " (through " + filepath.Clean(lexical) + ")"
	}
	w.ask(RuleOutsideRoot, resolved, pathKey(tools.AccessRead, resolved), fmt.Sprintf("`%s` uses %s%s, outside the project root %s (rule %s); to allow it, run with --add-dir %s or add it to permissions.additional_dirs",
		subject, resolved, via, w.c.guard.root, RuleOutsideRoot, suggestDir(resolved)))
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// globMatchesOption reports whether a glob argument matches a file whose
// name starts with '-' in one of the possible directories.
func globMatchesOption(g *Guard, a word, sc *scope) bool {
	prefix := "."
	if i := strings.IndexAny(a.text, "*?["); i > 0 {
		prefix = filepath.Dir(a.text[:i] + "x")
	}
	for _, cwd := range sc.cwds {
		if start, err := resolvePath(cwd, prefix); err != nil || g.container(start) == "" {
			continue // outside: the path check asks about it anyway
		}
		p := a.text
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		matches, _ := filepath.Glob(p)
		for _, m := range matches {
			if strings.HasPrefix(filepath.Base(m), "-") {
				return true
			}
		}
	}
	return false
}
