package policy

import (
	"fmt"
	"github.com/odin-code/odin/internal/policy/shell"
	"strings"
)

// Bash's builtins, and why each is classified as it is. A builtin runs
// inside the shell, so what it can do is not limited to its arguments: some
// run other commands, some evaluate a word as arithmetic (and arithmetic
// evaluates the values of the variables it names and runs every $(...) in
// them, quoted or not), some change what a later command name means.
//
//	builtin             verdict                 why
//	:, true, false      read-only               arguments are data
//	echo                read-only               prints its arguments
//	printf              read-only               prints; -v NAME assigns (not read-only; NAME's subscript checked)
//	pwd, times, help    read-only               print shell state
//	type                read-only               looks names up, runs nothing
//	break, continue,    read-only               numeric arguments are read with legal_number, not
//	exit, return, shift                         evaluated as arithmetic
//	test, [             read-only               -eq & co. read plain integers (only [[ ]] evaluates);
//	                                            -v NAME / -R NAME evaluate NAME's subscript: checked,
//	                                            and an unquoted expansion (which may split into -v
//	                                            and a name) cannot be checked
//	wait                read-only               -p NAME assigns (not read-only; NAME checked)
//	jobs                read-only               jobs -x CMD runs CMD: unwrapped and checked as CMD
//	unset               read-only               NAME's subscript is evaluated (checked); unsetting
//	                                            PATH & co. changes what later names run (asks)
//	umask, set          read-only when printing see readOnly
//	dirs, popd          read-only               popd returns to a directory a cd of the same
//	                                            shell was checked for
//	cd, pushd           checked                 the new directory is tracked for later paths
//	                                            (commands run with CDPATH empty)
//	builtin, command,   wrappers                the command they run is checked
//	exec
//	eval, source, .     cannot be checked       run text or a file as shell code
//	trap                cannot be checked       stores code run later
//	alias               cannot be checked       replaces a command name (sh expands aliases)
//	enable              cannot be checked       -f loads a shared object; -n swaps a builtin
//	                                            for a program of the same name
//	bind                cannot be checked       -x binds shell code
//	compgen, complete,  cannot be checked       -C runs a command, -F a function, -W expands a
//	compopt                                     word list (command substitutions included)
//	fc                  cannot be checked       runs an editor and re-runs history
//	hash -p             cannot be checked       maps a command name to any file
//	mapfile -C,         cannot be checked       -C runs a callback
//	readarray -C
//	let                 cannot be checked       arithmetic (parsed as a let clause when unquoted;
//	                                            checked there)
//	declare, typeset,   cannot be checked       when quoted or behind builtin/command, bash still
//	local, export,                              parses their arguments as assignments (a[$(cmd)]=1);
//	readonly                                    unquoted, they are declaration clauses, checked
//	                                            name by name
//	read, mapfile,      not read-only           assign variables; names checked
//	readarray, getopts
//	hash, history,      not read-only           change shell state or other processes
//	kill, ulimit,
//	shopt, unalias,
//	bg, fg, disown,
//	suspend, logout,
//	caller
//
// Keywords ((( )), [[ ]], for, select, case, coproc, function definitions,
// time) are nodes of the syntax tree and are checked in commands.go.

// opaqueBuiltins run code the policy cannot see, whatever their
// arguments; each says why.
var opaqueBuiltins = map[string]string{
	"alias":    "alias replaces a command name with other text, and sh expands aliases on later lines",
	"enable":   "enable loads builtins from shared objects (-f) or swaps builtins for programs (-n)",
	"bind":     "bind -x binds shell code to keys",
	"compgen":  "compgen runs commands (-C), functions (-F) and expands word lists (-W) at run time",
	"complete": "complete runs commands (-C), functions (-F) and expands word lists (-W) at run time",
	"compopt":  "compopt runs commands (-C), functions (-F) and expands word lists (-W) at run time",
	"fc":       "fc runs an editor and re-runs commands from the history",
}

// assigningBuiltins assign to the variables named by their options (the
// letters) or operands: the names are checked like assignments.
var assigningBuiltins = map[string]struct {
	valued string // option letters that take a value
	names  string // option letters whose value is a variable name
	ops    func(ops []shell.Word) []shell.Word
}{
	"read":    {valued: "adinNptu", names: "a", ops: func(ops []shell.Word) []shell.Word { return ops }},
	"printf":  {valued: "v", names: "v"},
	"wait":    {valued: "p", names: "p"},
	"getopts": {ops: func(ops []shell.Word) []shell.Word { return ops[min(1, len(ops)):min(2, len(ops))] }},
}

// builtin records what the builtin name does beyond what readOnly says
// about it: code it runs that cannot be checked, and the variables it
// assigns.
func (w *walker) builtin(name string, args []shell.Word, subject string) {
	if why, ok := opaqueBuiltins[name]; ok {
		w.unresolvable(subject, why)
		return
	}
	if ab, ok := assigningBuiltins[name]; ok {
		flags, ops := builtinOpts(args, ab.valued)
		for _, c := range []byte(ab.names) {
			for _, a := range flags[c] {
				w.assigns(a, subject)
			}
		}
		if ab.ops != nil {
			for _, a := range ab.ops(ops) {
				w.assigns(a, subject)
			}
		}
		return
	}
	switch name {
	case "let":
		for _, a := range args {
			if !a.Static || !shell.IsNumber(a.Text) {
				w.unresolvable(subject, "let evaluates its arguments as arithmetic, which runs any $(...) in them or in the variables they name")
				w.codeText(a.Text)
			}
		}
	case "declare", "typeset", "local", "export", "readonly":
		w.unresolvable(subject, name+" reached through quotes or a wrapper still parses its arguments as assignments at run time, evaluating subscripts as arithmetic")
		for _, a := range args {
			w.codeText(a.Text)
		}
	case "hash":
		flags, _ := builtinOpts(args, "pt")
		if _, ok := flags['p']; ok {
			w.unresolvable(subject, "hash -p makes a command name run any file")
		}
	case "mapfile", "readarray":
		w.mapfile(name, args, subject)
	case "unset":
		w.unset(args, subject)
	case "test", "[":
		w.testBuiltin(args, subject)
	}
}

// mapfile: -C runs a callback for every line read; the last operand is
// the array it fills.
func (w *walker) mapfile(name string, args []shell.Word, subject string) {
	flags, ops := builtinOpts(args, "dnOsuCc")
	if cb, ok := flags['C']; ok {
		w.unresolvable(subject, name+" -C runs a callback for every line read")
		for _, c := range cb {
			w.codeText(c.Text)
		}
	}
	if len(ops) > 0 {
		w.assigns(ops[len(ops)-1], subject)
	}
}

// unset: unsetting PATH-like variables changes what later commands run.
func (w *walker) unset(args []shell.Word, subject string) {
	flags, ops := builtinOpts(args, "")
	if _, fn := flags['f']; fn {
		return // function names: nothing is evaluated
	}
	for _, a := range ops {
		if base := w.varName(a, subject); base != "" && specialName(base) {
			w.needsEdit(subject, fmt.Sprintf("unsetting %s changes how later commands are found or run", base), false)
		}
	}
}

// assigns checks a word a builtin assigns to as a variable name.
func (w *walker) assigns(a shell.Word, subject string) {
	if base := w.varName(a, subject); base != "" {
		w.variable(base, false, subject)
	}
}

// testBuiltin checks test's and ['s operands that bash evaluates: the name
// after -v or -R (its subscript is arithmetic). An operand only known at
// run time may itself be -v, so the word after it is checked too; an
// unquoted expansion may split into both.
func (w *walker) testBuiltin(args []shell.Word, subject string) {
	for i, a := range args {
		if a.Splits || a.Glob {
			w.unresolvable(subject, fmt.Sprintf("the unquoted %s may become several words (file names included), such as -v and a name whose subscript bash evaluates as arithmetic; quote it", a.Text))
			continue
		}
		if i+1 < len(args) && (!a.Static || a.Text == "-v" || a.Text == "-R") {
			w.varName(args[i+1], subject)
		}
	}
}

// builtinOpts splits a builtin's arguments into options (letter -> values;
// valued letters take the rest of the cluster or the next word) and
// operands, the way bash's internal_getopt does.
func builtinOpts(args []shell.Word, valued string) (map[byte][]shell.Word, []shell.Word) {
	flags := map[byte][]shell.Word{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static || a.Text == "-" || !strings.HasPrefix(a.Text, "-") {
			return flags, args[i:]
		}
		if a.Text == "--" {
			return flags, args[i+1:]
		}
	cluster:
		for j := 1; j < len(a.Text); j++ {
			c := a.Text[j]
			if !strings.ContainsRune(valued, rune(c)) {
				flags[c] = append(flags[c], shell.Word{})
				continue
			}
			switch {
			case j+1 < len(a.Text):
				flags[c] = append(flags[c], shell.Word{Text: a.Text[j+1:], Static: true})
			case i+1 < len(args):
				i++
				flags[c] = append(flags[c], args[i])
			default:
				flags[c] = append(flags[c], shell.Word{})
			}
			break cluster
		}
	}
	return flags, nil
}
