package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/policy/shell"
	"github.com/odin-code/odin/messages"
)

// maxDepth bounds nested shells (bash -c 'bash -c ...') and substitutions.
const maxDepth = 8

// Commands classifies shell commands before ExecuteCommand runs them. A
// command is parsed with mvdan.cc/sh/v3/syntax (bash dialect) and every
// simple command in the tree is checked on its own: across ; && || | & and
// newlines, inside subshells, blocks, conditionals and loops, inside $(...),
// backticks, process substitutions and unquoted here-documents, and inside
// the wrappers env, xargs, timeout, nice, nohup, time, command, builtin,
// exec, jobs -x, stdbuf, setsid, find -exec, fd -x and the shells
// bash/sh/zsh/dash/ksh -c (whose script is parsed in turn). Redirection
// targets are checked as paths with the Guard, as are the arguments of
// every command; a path through /proc/self or /dev/fd, which the shell
// resolves in its own process, cannot be checked.
//
// The verdict for a mode:
//
//   - Deny: a forbidden command (permissions.forbidden_commands, sudo and
//     the like), a write to a protected path, control characters, and in
//     ask and plan modes anything that is not provably read-only.
//   - Ask: in edit mode, a command that is neither read-only nor matched by
//     permissions.allowed_commands, a destructive form (rules/destructive.go)
//     that the matching allowed pattern does not name, or a command that
//     cannot be resolved statically (eval, source, a command name from an
//     expansion, a subscript bash evaluates as arithmetic, a parse
//     error...) whatever the allowed patterns; in every mode, a path
//     outside the project root, cd out of the root, or an argument only
//     known at run time.
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
	return c.CheckIn(command, "", mode)
}

// CheckIn is Check for a shell whose working directory is cwd (a
// persistent session that cd'd elsewhere): relative paths, cd and the
// root-only rules start from cwd. An empty cwd is the project root.
func (c *Commands) CheckIn(command, cwd string, mode messages.Mode) Verdict {
	if cwd == "" || !filepath.IsAbs(cwd) {
		cwd = c.guard.root
	}
	w := &walker{c: c, ro: mode != messages.ModeEdit, mode: mode}
	if w.mode == "" {
		w.mode = messages.ModeAsk
	}
	if strings.TrimSpace(command) == "" {
		w.deny(RuleUnresolvable, command, "the command is empty")
		return w.v
	}
	w.script(command, &scope{cwds: []string{filepath.Clean(cwd)}}, command)
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
	// code marks a forbiddenOnly walker scanning text that bash does run
	// (eval's and trap's arguments, a subscript bash evaluates): there a
	// word sudo is a privilege escalation, not data.
	code bool
}

func (w *walker) deny(rule, subject, reason string) {
	if w.forbiddenOnly && rule != RuleForbidden {
		return
	}
	w.v.Add(Finding{Action: Deny, Rule: rule, Subject: subject, Reason: reason})
}

func (w *walker) ask(rule, subject, key, reason string) {
	if w.forbiddenOnly {
		return
	}
	w.v.Add(Finding{Action: Ask, Rule: rule, Subject: subject, Key: key, Reason: reason})
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
	w.arithNode(s)
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
				w.codeLike(shell.Eval(it), shell.Print(x.Loop))
			}
			w.variable(l.Name.Value, false, shell.Print(x.Loop))
		case *syntax.CStyleLoop:
			w.nested(l, sc)
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
		w.unresolvable(shell.Print(x), "it defines a shell function, which can shadow any command name")
		w.stmt(x.Body, sc.clone())
	case *syntax.ArithmCmd, *syntax.LetClause:
		// Their arithmetic is checked by the contexts of shell/arith.go.
		w.nested(x, sc)
	case *syntax.TestClause:
		w.nested(x, sc)
		w.testVarNames(x.X, shell.Print(x))
	case *syntax.DeclClause:
		w.decl(x, sc)
	case *syntax.TimeClause:
		if x.Stmt != nil {
			w.stmt(x.Stmt, sc)
		}
	case *syntax.CoprocClause:
		w.stmt(x.Stmt, sc.clone())
	default:
		w.unresolvable(shell.Print(cmd), fmt.Sprintf("the construct %T is not supported", cmd))
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
		w.arithNode(n)
		switch x := n.(type) {
		case *syntax.CmdSubst:
			w.stmts(x.Stmts, sc.clone())
			return false
		case *syntax.ProcSubst:
			w.stmts(x.Stmts, sc.clone())
			return false
		case *syntax.ParamExp:
			subject := shell.Print(x)
			if x.Excl {
				w.unresolvable(subject, "indirect expansion ${!name} can evaluate a subscript taken from a variable's value")
			}
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.Contains(shell.Print(x.Exp.Word), "P") {
				w.unresolvable(subject, "${name@P} expands a variable's value as a prompt, which runs the command substitutions in it")
			}
			if x.Exp != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) && x.Param != nil {
				// ${NAME:=value} assigns NAME, like NAME=value.
				if x.Exp.Word != nil {
					w.codeLike(shell.Eval(x.Exp.Word), subject)
				}
				w.variable(x.Param.Value, false, subject)
			}
		}
		return true
	})
}

// testVarNames checks the names [[ -v NAME ]] and [[ -R NAME ]] test:
// bash evaluates their subscripts as arithmetic. Arithmetic comparisons
// (-eq & co.) are contexts of arith.go.
func (w *walker) testVarNames(x syntax.TestExpr, subject string) {
	syntax.Walk(x, func(n syntax.Node) bool {
		if u, ok := n.(*syntax.UnaryTest); ok && (u.Op == syntax.TsVarSet || u.Op == syntax.TsRefVar) {
			// [[ -v a[i] ]] evaluates the subscript i as arithmetic.
			if wd, ok := u.X.(*syntax.Word); ok {
				for _, v := range shell.Eval(wd) {
					v.Glob = false // [[ ]] does not expand file names
					w.varName(v, subject)
				}
			} else {
				w.unresolvable(subject, "the variable name tested by -v is only known at run time")
			}
		}
		return true
	})
}

func (w *walker) decl(d *syntax.DeclClause, sc *scope) {
	subject := shell.Print(d)
	w.nested(d, sc)
	exported, prints := w.declOptions(d, subject)
	named := 0
	for _, a := range d.Args {
		switch {
		case a.Name != nil:
			named++
			if a.Value != nil {
				ws := shell.Eval(a.Value)
				w.codeLike(ws, subject)
				w.compoundValue(d.Variant.Value, ws, subject)
			}
			w.variable(a.Name.Value, exported, subject)
		case a.Value != nil:
			named += w.declQuoted(d.Variant.Value, a.Value, exported, subject)
		}
	}
	if named == 0 && (prints || len(d.Args) == 0) && (exported || d.Variant.Value == "declare" || d.Variant.Value == "typeset" || d.Variant.Value == "readonly") {
		w.needsEdit(subject, "it prints shell variables, which may hold secrets", false)
	}
}

// declOptions reads a declaration's options: -x exports, -n and -i make
// later uses arithmetic (unresolvable), -p/-f/-F print.
func (w *walker) declOptions(d *syntax.DeclClause, subject string) (exported, prints bool) {
	exported = d.Variant.Value == "export"
	for _, a := range d.Args {
		if a.Name != nil || a.Value == nil {
			continue
		}
		for _, o := range shell.Eval(a.Value) {
			if !o.Static {
				w.unresolvable(subject, "an option of "+d.Variant.Value+" is only known at run time")
				continue
			}
			if !strings.HasPrefix(o.Text, "-") && !strings.HasPrefix(o.Text, "+") {
				continue
			}
			minus := o.Text[0] == '-'
			exported = exported || (minus && strings.ContainsRune(o.Text, 'x'))
			if minus && strings.ContainsRune(o.Text, 'n') {
				w.unresolvable(subject, d.Variant.Value+" -n makes a name refer to another variable, whose subscript every later use evaluates as arithmetic")
			}
			if minus && strings.ContainsRune(o.Text, 'i') {
				w.unresolvable(subject, d.Variant.Value+" -i makes every later assignment to the variable an arithmetic evaluation of the value")
			}
			prints = prints || strings.ContainsAny(o.Text, "pfF")
		}
	}
	return exported, prints
}

// declQuoted checks a declaration argument that is not a plain
// assignment: a quoted argument ('a[$(cmd)]=1', "PATH=.") is still an
// assignment to bash, which parses it at run time. It returns how many
// names it assigns.
func (w *walker) declQuoted(variant string, value *syntax.Word, exported bool, subject string) (named int) {
	for _, o := range shell.Eval(value) {
		if !o.Static || strings.HasPrefix(o.Text, "-") || strings.HasPrefix(o.Text, "+") {
			continue
		}
		named++
		name, val, hasValue := strings.Cut(o.Text, "=")
		name = strings.TrimSuffix(name, "+")
		if base := w.varName(shell.Word{Text: name, Static: true, Glob: o.Glob}, subject); base != "" {
			w.variable(base, exported, subject)
		}
		if hasValue {
			w.codeLike([]shell.Word{{Text: val, Static: true}}, subject)
			w.compoundValue(variant, []shell.Word{{Text: val, Static: true}}, subject)
		}
	}
	return named
}

// compoundValue checks a value the declaration builtin variant assigns:
// declare, typeset, local and readonly parse a value that reads (...) as
// an array assignment when the variable is an array (-a, -A, or declared
// so before), and evaluate its subscripts as arithmetic, so a quoted
// '([x]=1)' or an expansion whose value is one runs code. export does not.
func (w *walker) compoundValue(variant string, ws []shell.Word, subject string) {
	if variant == "export" {
		return
	}
	for _, v := range ws {
		if !v.Static {
			w.unresolvable(subject, fmt.Sprintf("%s parses the value %s, only known at run time, as an array assignment when the variable is an array, evaluating its subscripts as arithmetic", variant, v.Text))
			return
		}
		if strings.HasPrefix(v.Text, "(") {
			w.unresolvable(subject, fmt.Sprintf("%s parses the quoted value %s as an array assignment when the variable is an array, evaluating its subscripts as arithmetic", variant, v.Text))
			w.codeText(v.Text)
			return
		}
	}
}

// codeLike flags an assigned value that looks like shell code: a later
// arithmetic or prompt expansion of the variable could run it.
func (w *walker) codeLike(ws []shell.Word, subject string) {
	for _, v := range ws {
		if v.Static && (strings.Contains(v.Text, "$(") || strings.Contains(v.Text, "`") || strings.Contains(v.Text, "${") || strings.Contains(v.Text, "$[")) {
			w.unresolvable(subject, "it stores shell code in a variable, where a later expansion could run it")
			w.codeText(v.Text)
		}
	}
}

// variable checks an assignment to name. Exported assignments (prefix
// assignments, export, env NAME=...) reach the programs run and may only
// set harmless variables; other assignments may set any name that is not an
// environment-style (upper-case) name or a shell-special one, since those
// can change how later commands are found and run.
func (w *walker) variable(name string, exported bool, subject string) {
	switch name {
	case "OPTIND", "RANDOM", "SRANDOM", "HISTCMD":
		// Their assignment functions evaluate the value as arithmetic.
		w.unresolvable(subject, fmt.Sprintf("bash evaluates a value assigned to %s as arithmetic, which runs any $(...) in it or in the variables it names", name))
	}
	if safeEnvName(name) {
		return
	}
	if exported {
		w.needsEdit(subject, fmt.Sprintf("it passes %s to the command's environment, which can change what the command runs", name), false)
		return
	}
	if specialName(name) {
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
	subject := shell.Print(ce)
	for _, a := range ce.Assigns {
		w.nested(a, sc)
	}
	for _, a := range ce.Args {
		w.nested(a, sc)
	}
	if len(ce.Args) == 0 {
		for _, a := range ce.Assigns {
			if a.Value != nil {
				w.codeLike(shell.Eval(a.Value), subject)
			}
			w.variable(a.Name.Value, false, subject)
		}
		return
	}
	for _, a := range ce.Assigns {
		w.variable(a.Name.Value, true, subject)
	}
	var argv []shell.Word
	for _, a := range ce.Args {
		argv = append(argv, shell.Eval(a)...)
	}
	w.simple(argv, subject, sc)
}

// varName checks a word that a builtin takes as a variable name (unset,
// read, printf -v, wait -p, test -v, declare's quoted arguments...) and
// returns the name without its subscript, or "" when there is none to
// check. Bash evaluates the subscript of an indexed array as arithmetic,
// and arithmetic evaluates variables' values and runs the command
// substitutions in them, quotes or not: unset 'a[$(cmd)]' runs cmd. So a
// subscript other than a plain number, @ or * cannot be checked.
func (w *walker) varName(v shell.Word, subject string) string {
	if !v.Static {
		w.unresolvable(subject, fmt.Sprintf("the variable name %s is only known at run time, and a subscript in it would be evaluated as arithmetic", v.Text))
		return ""
	}
	if v.Glob {
		// unset * names the files here, and a file name can hold a
		// subscript.
		w.unresolvable(subject, fmt.Sprintf("the pattern %s expands to file names, which could hold a subscript bash evaluates as arithmetic", v.Text))
		return ""
	}
	name, sub, ok := strings.Cut(v.Text, "[")
	if !ok {
		return name
	}
	idx, closed := strings.CutSuffix(sub, "]")
	if !closed || !(shell.IsNumber(idx) || idx == "@" || idx == "*") {
		w.unresolvable(subject, fmt.Sprintf("the subscript of %s is evaluated as arithmetic, which runs any $(...) in it or in the variables it names", v.Text))
		w.codeText(v.Text)
	}
	return name
}

// specialName reports names whose assignment can change how later commands
// are found or run: environment-style (upper-case) and underscore names,
// except the harmless ones of safeEnvName.
func specialName(name string) bool {
	return !safeEnvName(name) && (strings.ToLower(name) != name || strings.HasPrefix(name, "_"))
}

// codeText scans text that bash may run as code (a subscript it evaluates,
// a value stored for later evaluation) for forbidden commands and
// privilege escalation, which no approval lets through.
func (w *walker) codeText(text string) {
	if w.depth > maxDepth {
		return
	}
	// The text is read as bash reads a subscript or an unquoted here
	// document: quotes are literal, expansions are expanded.
	doc, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(text))
	if err != nil || doc == nil {
		// Empty text is no word at all: a typed nil the walk would
		// dereference.
		return
	}
	sub := &walker{c: w.c, mode: w.mode, ro: w.ro, depth: w.depth + 1, forbiddenOnly: true, code: !w.forbiddenOnly || w.code}
	sub.nested(doc, &scope{cwds: []string{w.c.guard.root}})
	for _, f := range sub.v.Findings {
		w.v.Add(f)
	}
}
