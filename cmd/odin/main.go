package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/sandbox"
)

// Exit codes.
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2 // bad flags or configuration
	exitGate      = 3 // a mandatory quality gate failed after the fix rounds
	exitCancelled = 130
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func main() {
	// When started as the write sandbox's helper, this confines itself and
	// becomes the command; otherwise it returns at once.
	sandbox.Main()
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Main runs odin with args and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "odin:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "odin:", err)
	// Cobra's own errors (unknown flag, bad arguments) are usage errors.
	return exitUsage
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globalFlags{}
	var cont bool
	var resume string
	root := &cobra.Command{
		Use:           "odin",
		Short:         "A terminal coding agent built as an actor system",
		Long:          "Odin plans with your model, delegates to specialist agents (search, code, review, test, docs, QA...) and enforces review and QA on multi-file or risky changes.\n\nRun it with no arguments for the interactive REPL, or `odin run \"task\"` for one task.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cont && resume != "" {
				return usageError("use either --continue or --resume, not both")
			}
			return runREPL(cmd, g, sessionOptions{Continue: cont, Resume: resume}, stdin, stdout, stderr)
		},
	}
	root.Flags().BoolVarP(&cont, "continue", "c", false, "open the REPL on the project's most recent session")
	root.Flags().StringVar(&resume, "resume", "", "open the REPL on the session with this ID")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	g.register(root)
	root.AddCommand(
		newRunCmd(g, stdin, stdout, stderr),
		newVersionCmd(stdout),
		newToolsCmd(g, stdout),
		newToolCmd(g, stdout, stderr),
		newAgentsCmd(g, stdout),
		newSessionsCmd(g, stdout),
		newUndoCmd(g, stdout),
		newCheckpointsCmd(g, stdout),
		newStatsCmd(g, stdout),
		newTrustCmd(g, stdout),
		newInitCmd(g, stdout, stderr),
		newCompactCmd(g, stdout),
		newMCPCmd(g, stdout),
	)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v (see odin %s --help)", err, c.Name())
	})
	return root
}
