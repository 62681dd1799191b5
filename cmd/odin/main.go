package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/internal/stackgrow"
	"github.com/odin-code/odin/internal/versionflag"
)

// Exit codes.
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2 // bad flags or configuration
	exitGate      = 3 // a mandatory quality gate failed after the fix rounds
	exitBudget    = 6 // the turn's or the session's budget was spent (--max-budget-usd)
	exitCancelled = 130
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
	// cmd is the path of the command ("odin attach") a usage error is
	// about; it is printed as the error's prefix in place of "odin".
	cmd string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// commandUsageError is a usage error about how c was called (a flag, an
// argument, a subcommand), printed as one line in the shape other CLIs
// use: "odin attach: problem (usage: ...; see odin attach --help)", the
// command named once, as the prefix. withUsage adds c's usage line.
func commandUsageError(c *cobra.Command, withUsage bool, format string, args ...any) error {
	path := c.CommandPath()
	hint := "see " + path + " --help"
	if withUsage {
		hint = "usage: " + c.UseLine() + "; " + hint
	}
	msg := fmt.Sprintf(format, args...)
	if strings.HasSuffix(msg, ")") {
		// A problem that ends in its own parenthesis takes the hint
		// inside it rather than a second one beside it.
		msg = msg[:len(msg)-1] + "; " + hint + ")"
	} else {
		msg += " (" + hint + ")"
	}
	return &exitError{code: exitUsage, cmd: path, err: errors.New(msg)}
}

func main() {
	// When started as the write sandbox's helper, this confines itself and
	// becomes the command; otherwise it returns at once.
	sandbox.Main()
	// The main goroutine reaches 32 KiB in every command (store, config,
	// session start): grown now, its stack is copied with two frames on it
	// instead of thirty (internal/stackgrow).
	stackgrow.To32K()
	gcFor(shortLived)
	code := Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	// A command whose cancel is still on its way must not outlive Odin.
	sandbox.Shutdown()
	os.Exit(code)
}

// GC targets, used unless the user sets GOGC. A command or a session
// lives seconds to hours with a live heap of a few MB: at Go's default
// (GC at twice the live heap, 4 MB at least) `odin run` collected several
// times before its first request, 15% of its CPU; at 400 it collects
// once or not at all, and its peak RSS does not grow (the binary's pages
// dominate it). odin serve and odin acp hold many sessions for long: they
// go back to the default.
const (
	shortLived = 400
	longLived  = 100
)

// gcFor sets the GC target percent unless GOGC is set.
func gcFor(percent int) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(percent)
	}
}

// Main runs odin with args and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// The version alone needs no command tree: building it (two dozen
	// commands and their flags) is most of what `odin --version` did
	// after Go's start, and the page faults of code it touches.
	if versionflag.Asked(args) {
		if _, err := fmt.Fprint(stdout, versionLine()); err != nil {
			fmt.Fprintln(stderr, errorText(err))
			return exitUsage // as when cobra ran it
		}
		return exitOK
	}
	// Shell completion asks through cobra's hidden __complete commands;
	// only then are the completion functions registered (walking every
	// command's flags costs ~0.7 ms of every start).
	completing := len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
	root := newRootCmd(stdin, stdout, stderr, completing)
	subcommands := map[string]bool{"help": true, "completion": true}
	for _, c := range root.Commands() {
		subcommands[c.Name()] = true
	}
	root.SetArgs(printAlias(args, subcommands))
	ran, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitUsage && ee.cmd == "" && ran != nil && strings.HasPrefix(ee.Error(), "--") {
		// A command's check of its own flag's value ("--output-format
		// must be ...") is worded where the command is not at hand; it is
		// told like cobra's flag errors, naming the command that ran.
		err = commandUsageError(ran, false, "%s", ee.Error())
		errors.As(err, &ee)
	}
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, errorText(err))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, errorText(err))
	// Cobra's own errors (unknown flag, bad arguments) are usage errors.
	return exitUsage
}

// newRootFlags returns the flags of one process, holding its shared
// rate-limit buckets.
func newRootFlags() *globalFlags { return &globalFlags{rates: llm.NewRateLimits()} }

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer, completing bool) *cobra.Command {
	g := newRootFlags()
	var cont, showVersion bool
	var resume string
	root := &cobra.Command{
		Use:   "odin [\"first message\"]",
		Short: "A terminal coding agent built as an actor system",
		Long: "Odin plans with your model, delegates to specialist agents (search, code, review, test, docs, QA...) and enforces review and QA on multi-file or risky changes.\n\n" +
			"Run it with no arguments for the interactive REPL, `odin \"task\"` for the REPL with a first message, or `odin run \"task\"` (also `odin -p \"task\"`) for one task headless.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if showVersion {
				_, err := fmt.Fprint(stdout, versionLine())
				return err
			}
			// A lone word close to a command's name is a typo, not a prompt;
			// after "--" it is a prompt.
			if len(args) == 1 && cmd.ArgsLenAtDash() < 0 && !strings.ContainsAny(args[0], " \t\n") {
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					return commandUsageError(cmd, false, "unknown command %q; did you mean %s? (to send it as a first message: odin -- %q)", args[0], strings.Join(s, " or "), args[0])
				}
			}
			if resume == pickResume {
				// `odin --resume ID` parses as the bare flag and an argument.
				resume = ""
				if len(args) > 0 {
					resume, args = args[0], args[1:]
				}
			}
			if cont && resume != "" {
				return usageError("use either --continue or --resume, not both")
			}
			o := sessionOptions{Continue: cont, Resume: resume, Pick: cmd.Flags().Changed("resume") && resume == ""}
			return runREPL(cmd, g, o, strings.Join(args, " "), stdin, stdout, stderr)
		},
	}
	root.SuggestionsMinimumDistance = 2
	// --version is Odin's own flag, not cobra's: cobra prints a custom
	// version line through text/template, and a binary that executes
	// templates keeps every exported method of every type it links (see
	// prompts/render.go and test/e2e/deadcode_test.go): 20 MB more.
	root.Flags().BoolVarP(&showVersion, "version", "v", false, "print Odin's version")
	root.Flags().BoolVarP(&cont, "continue", "c", false, "open the REPL on the project's most recent session, showing its last turns")
	root.Flags().StringVar(&resume, "resume", "", "open the REPL on the session with this `ID` or unique prefix; without one, pick from a list")
	root.Flags().Lookup("resume").NoOptDefVal = pickResume
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	g.register(root)
	root.AddCommand(
		newRunCmd(g, stdin, stdout, stderr),
		newReplayCmd(g, stdout, stderr),
		newVersionCmd(stdout),
		newToolsCmd(g, stdout),
		newToolCmd(g, stdout, stderr),
		newAgentsCmd(g, stdout),
		newSessionsCmd(g, stdout),
		newUndoCmd(g, stdout),
		newRewindCmd(g, stdout),
		newCheckpointsCmd(g, stdout),
		newStatsCmd(g, stdout),
		newTrustCmd(g, stdout),
		newInitCmd(g, stdout, stderr),
		newCompactCmd(g, stdout),
		newModelsCmd(g, stdout),
		newDoctorCmd(g, stdout),
		newACPCmd(g, stdin, stdout),
		newServeCmd(g, stdout, stderr),
		newAttachCmd(g, stdin, stdout, stderr),
		newWorkerCmd(g, stdout, stderr),
		newViewCmd(g, stdout, stderr),
		newMCPCmd(g, stdout),
		newPluginCmd(g, stdout),
		newImportCmd(g, stdout),
	)
	guardCommands(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return commandUsageError(c, false, "%s", flagProblem(err))
	})
	if completing {
		registerCompletions(root, g)
	}
	return root
}

// pickResume is --resume given without an ID: pick the session from a
// list. No session ID is "pick" (IDs are UUIDs, and a prefix of one is hex).
const pickResume = "pick"
