package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/termsafe"
)

// maxStdin caps what is read from a pipe: a task or its context, not a
// data set.
const maxStdin = 16 << 20

// stdinPiped reports whether stdin carries input to read: a pipe or a
// redirected file. A terminal or /dev/null (a character device) does not,
// so `odin run "task"` from a shell or a script never waits on it.
func stdinPiped(r io.Reader) bool {
	if r == nil {
		return false
	}
	f, ok := r.(*os.File)
	if !ok {
		return true
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeNamedPipe != 0 || fi.Mode().IsRegular()
}

func readStdin(r io.Reader) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxStdin+1))
	if err != nil {
		return "", fmt.Errorf("reading stdin: %w", err)
	}
	if len(data) > maxStdin {
		return "", usageError("stdin is over %d MiB: pass a file path in the task instead", maxStdin>>20)
	}
	return string(data), nil
}

// taskInput builds the task of a headless run, as `claude -p` does: the
// arguments are the task, and piped stdin is context appended to it; with
// no argument (or "-") stdin is the task itself.
func taskInput(args []string, stdin io.Reader) (string, error) {
	fromStdin := len(args) == 0 || (len(args) == 1 && args[0] == "-")
	if fromStdin {
		if len(args) == 0 && !stdinPiped(stdin) {
			return "", usageError("no task given: odin run \"what to do\" (or pipe it: echo \"what to do\" | odin run)")
		}
		data, err := readStdin(stdin)
		if err != nil {
			return "", err
		}
		task := strings.TrimSpace(data)
		if task == "" {
			return "", usageError("no task given: stdin was empty")
		}
		return task, nil
	}
	task := strings.TrimSpace(strings.Join(args, " "))
	if task == "" {
		return "", usageError("no task given: odin run \"what to do\" (or - to read it from stdin)")
	}
	if !stdinPiped(stdin) {
		return task, nil
	}
	data, err := readStdin(stdin)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(data) == "" {
		return task, nil
	}
	return task + "\n\nInput piped to odin on stdin:\n" + fenced(data), nil
}

// fenced wraps text in a Markdown code fence longer than any backtick run
// inside it, so the text cannot close the fence early.
func fenced(text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

// printAlias turns `odin -p ARGS` (or --print) into `odin run ARGS`, the
// spelling Claude Code and Gemini CLI users type for a headless run. It
// leaves alone a command line whose -p belongs to a subcommand.
func printAlias(args []string, subcommands map[string]bool) []string {
	for i, a := range args {
		if a == "--" {
			return args
		}
		if subcommands[a] {
			return args
		}
		if a == "-p" || a == "--print" {
			out := append([]string{"run"}, args[:i]...)
			return append(out, args[i+1:]...)
		}
	}
	return args
}

// resolveSession turns a typed session ID or unique prefix into the full
// ID, with errors that say what to do. An unknown ID exits 1 (what
// odin sessions show/rm always did); resolveResume's exits 2.
func resolveSession(ctx context.Context, st store.Store, typed string) (string, error) {
	return resolveSessionCode(ctx, st, typed, exitFailed)
}

// resolveResume is resolveSession for --resume, where an unknown ID is a
// usage error (exit 2), as it was before prefixes were accepted.
func resolveResume(ctx context.Context, st store.Store, typed string) (string, error) {
	return resolveSessionCode(ctx, st, typed, exitUsage)
}

func resolveSessionCode(ctx context.Context, st store.Store, typed string, notFoundCode int) (string, error) {
	id, err := store.ResolveSessionID(ctx, st, typed)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", &exitError{code: notFoundCode, err: fmt.Errorf("no session %q (odin sessions lists them)", typed)}
	case errors.Is(err, store.ErrAmbiguous):
		return "", &exitError{code: exitUsage, err: fmt.Errorf("%v: type more of the ID", err)}
	}
	return id, err
}

// pickSession lists the project's recent sessions and reads the number of
// the one to resume: `odin --resume` without an ID, in a terminal.
func (a *app) pickSession(ctx context.Context, in io.Reader, out io.Writer) (string, error) {
	st, err := a.openStore(ctx)
	if err != nil {
		return "", err
	}
	list, err := st.Sessions(ctx, store.SessionQuery{Project: a.root, Limit: 30})
	if err != nil {
		return "", err
	}
	var cands []store.Session
	for _, s := range list {
		if s.MessageCount > 0 && len(cands) < 15 {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return "", &exitError{code: exitFailed, err: fmt.Errorf("no session to resume in %s", a.root)}
	}
	fmt.Fprintf(out, "Sessions of %s, newest first:\n", a.root)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for i, s := range cands {
		fmt.Fprintf(tw, "  %d)\t%s\t%s\t%d msgs\t%s\n", i+1, shortID(s.ID), s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.MessageCount, oneLineTitle(s.Title))
	}
	_ = tw.Flush()
	rd := bufio.NewReader(in)
	for {
		fmt.Fprintf(out, "Resume which? [1-%d, Enter to cancel] ", len(cands))
		line, err := rd.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" {
			if err != nil && !errors.Is(err, io.EOF) {
				return "", err
			}
			return "", &exitError{code: exitCancelled, err: fmt.Errorf("no session chosen")}
		}
		if n, convErr := strconv.Atoi(line); convErr == nil && n >= 1 && n <= len(cands) {
			return cands[n-1].ID, nil
		}
		if id, rerr := store.ResolveSessionID(ctx, st, line); rerr == nil {
			return id, nil
		}
		fmt.Fprintf(out, "%q is neither a number from the list nor a session ID.\n", line)
		if err != nil {
			return "", &exitError{code: exitCancelled, err: fmt.Errorf("no session chosen")}
		}
	}
}

// replayTurns are the last turns of a resumed session as banner lines, so
// that `odin -c` shows where the conversation was.
func (a *app) replayTurns(ctx context.Context, id string, turns int) []string {
	st, err := a.openStore(ctx)
	if err != nil {
		return nil
	}
	msgs, err := st.Messages(ctx, id)
	if err != nil {
		return nil
	}
	type turn struct{ user, answer string }
	var list []turn
	for _, m := range msgs {
		text := strings.TrimSpace(m.Text())
		if text == "" {
			continue
		}
		switch m.Role {
		case llm.RoleUser:
			for _, p := range m.Parts {
				if im, ok := p.(store.ImagePart); ok {
					text += " " + termsafe.Line(im.Image().Label())
				}
			}
			list = append(list, turn{user: text})
		case llm.RoleAssistant:
			if len(list) > 0 {
				list[len(list)-1].answer = text // the last reply of the turn is its answer
			}
		}
	}
	if len(list) == 0 {
		return nil
	}
	skipped := max(0, len(list)-turns)
	out := []string{fmt.Sprintf("── resumed session %s: the last %d of %s ──", shortID(id), len(list)-skipped, present.Plural(len(list), "turn"))}
	for _, t := range list[skipped:] {
		out = append(out, "❯ "+clip(t.user, 3))
		if t.answer != "" {
			out = append(out, "odin: "+clip(t.answer, 8))
		}
	}
	return append(out, "──")
}

// clip keeps the first n lines of s, saying how many were left out.
func clip(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… (%d more lines)", len(lines)-n)
}

// Shell completion of flag values and session IDs.

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeSessions offers the project's session IDs with their titles.
func completeSessions(g *globalFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		_ = withStore(g, func(ctx context.Context, a *app, st store.Store) error {
			list, err := st.Sessions(ctx, store.SessionQuery{Project: a.root, Limit: 50})
			if err != nil {
				return err
			}
			for _, s := range list {
				if strings.HasPrefix(s.ID, toComplete) {
					out = append(out, s.ID+"\t"+oneLineTitle(s.Title))
				}
			}
			return nil
		})
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeModels offers the models odin.yaml describes and the catalogue's.
func completeModels(g *globalFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		seen := map[string]bool{}
		_ = withApp(g, func(a *app) error {
			for id := range a.cfg.ModelInfo {
				seen[id] = true
			}
			for _, m := range a.catalog().All() {
				seen[m.ID] = true
			}
			return nil
		})
		var out []string
		for id := range seen {
			if strings.HasPrefix(strings.ToLower(id), strings.ToLower(toComplete)) {
				out = append(out, id)
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// registerCompletions attaches value completion to the flags of root and
// its subcommands that take a fixed set of values, a model or a session.
func registerCompletions(root *cobra.Command, g *globalFlags) {
	sessions := completeSessions(g)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for flag, fn := range map[string]func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective){
			"resume":          sessions,
			"output":          fixedCompletion("text", "json", "stream-json", "odin-stream"),
			"output-format":   fixedCompletion("text", "json", "stream-json", "odin-stream"),
			"input-format":    fixedCompletion("text", "stream-json"),
			"permission-mode": fixedCompletion("default", "acceptEdits", "plan", "bypassPermissions"),
			"mode":            fixedCompletion("ask", "plan", "edit"),
			"log-level":       fixedCompletion("debug", "info", "warn", "error"),
			"model":           completeModels(g),
			"small-model":     completeModels(g),
			"by":              fixedCompletion("day", "model", "agent"),
			"format":          fixedCompletion("markdown", "jsonl"),
		} {
			if c.LocalFlags().Lookup(flag) != nil || (c == root && c.PersistentFlags().Lookup(flag) != nil) {
				_ = c.RegisterFlagCompletionFunc(flag, fn)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, path := range [][]string{{"sessions", "show"}, {"sessions", "export"}, {"sessions", "rm"}} {
		if c, _, err := root.Find(path); err == nil && c.Name() == path[len(path)-1] {
			c.ValidArgsFunction = sessions
		}
	}
}

// replayedTurns is how many turns of a resumed session the REPL shows.
const replayedTurns = 3

// pick resolves `odin --resume` without an ID: a list to choose from in a
// terminal, an error that says what to type elsewhere.
func (r *repl) pick(ctx context.Context, o *sessionOptions, stdin io.Reader, stdout io.Writer) error {
	if !o.Pick {
		return nil
	}
	if !r.interactive {
		return usageError("--resume needs a session ID when not in a terminal (odin sessions lists them)")
	}
	id, err := r.a.pickSession(ctx, stdin, stdout)
	if err != nil {
		return err
	}
	o.Resume, o.Pick = id, false
	return nil
}
