package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/sys/unix"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed exec.md
var executeCommandDescription string

// ExecuteCommand defaults.
const (
	DefaultCommandTimeout   = 2 * time.Minute
	DefaultMaxCommandTime   = 10 * time.Minute
	DefaultMaxCommandOutput = 30000
	DefaultCommandKillGrace = 2 * time.Second
	// execDrainWait is how long output may stay open after the shell
	// exits: long enough for children finishing their last write, short
	// enough that a background job holding the pipe does not stall the
	// agent.
	execDrainWait = 500 * time.Millisecond
)

// ExecuteCommandInput is ExecuteCommand's input. It is exported so the
// command policy can decode a call and check Command before it runs.
type ExecuteCommandInput struct {
	Command     string `json:"command"`
	Timeout     int    `json:"timeout,omitempty" jsonschema:"Timeout in ms"`
	Description string `json:"description,omitempty" jsonschema:"5-10 words for the user"`
}

// ExecuteCommandOptions configure ExecuteCommand. Zero fields take the
// defaults above.
type ExecuteCommandOptions struct {
	// DefaultTimeout applies when the call gives none.
	DefaultTimeout time.Duration
	// MaxTimeout caps the timeout a call may ask for.
	MaxTimeout time.Duration
	// MaxOutput caps the output shown, in bytes; the head and the tail
	// are kept.
	MaxOutput int
	// KillGrace is the time between SIGTERM and SIGKILL when the process
	// group is stopped.
	KillGrace time.Duration
	// Env is added to the sandbox's filtered environment of every command
	// (the policy's git hardening, for one).
	Env []string
	// Launcher starts the commands inside the session's sandbox; nil runs
	// them unconfined (with the environment still filtered), for tests.
	Launcher *sandbox.Launcher
	// Terminal, when set, runs commands in the editor's terminals (ACP
	// terminal/*), where the user watches them live. They run there only
	// when the Launcher can hand a command off (bubblewrap): the editor
	// starts Odin's own binary, which sets the same sandbox up; otherwise
	// they run here as without a Terminal.
	Terminal CommandTerminal
	// HandoffDir is where the one-use files of handed-off commands are
	// written (under Odin's state directory); without one the Terminal
	// is not used.
	HandoffDir string
}

// CommandTerminal creates terminals in the editor Odin runs in. The
// command it is given is already approved and sandboxed; it runs it as
// given, never through a shell of its own.
type CommandTerminal interface {
	// CreateTerminal starts argv in dir in a new terminal whose retained
	// output is capped at outputLimit bytes (the editor drops the
	// beginning), shows it on the card of the tool call ctx runs for,
	// and returns it. An error means nothing was started.
	CreateTerminal(ctx context.Context, argv []string, dir string, outputLimit int) (TerminalHandle, error)
}

// TerminalHandle is a terminal CreateTerminal started.
type TerminalHandle interface {
	// WaitForExit returns the command's exit code, or the signal that
	// killed it, once it has exited, or ctx's error.
	WaitForExit(ctx context.Context) (code *int, signal *string, err error)
	// Output returns the retained output and whether the editor dropped
	// the beginning of it.
	Output(ctx context.Context) (output string, truncated bool, err error)
	// Kill kills the command; the terminal stays.
	Kill(ctx context.Context) error
	// Release kills the command if it still runs and frees the terminal;
	// the editor keeps showing its output.
	Release(ctx context.Context) error
}

func (o ExecuteCommandOptions) withDefaults() ExecuteCommandOptions {
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = DefaultCommandTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = DefaultMaxCommandTime
	}
	if o.DefaultTimeout > o.MaxTimeout {
		o.DefaultTimeout = o.MaxTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxCommandOutput
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultCommandKillGrace
	}
	return o
}

// CommandOutcome is ExecuteCommand's Result.Meta.
type CommandOutcome struct {
	// ExitCode is the shell's exit status; a process killed by a signal
	// gets 128+signal, as shells report it.
	ExitCode int
	// TimedOut: the timeout expired and the process group was killed.
	TimedOut bool
	// Cancelled: the call's context ended and the process group was killed.
	Cancelled bool
	// Output is the combined stdout and stderr as shown to the model.
	Output string
	// TruncatedBytes is how much output was dropped from the middle.
	TruncatedBytes int64
	Elapsed        time.Duration
}

// NewExecuteCommand returns ExecuteCommand: bash -c in the project root
// with stdin from /dev/null, in its own process group so that a timeout or
// cancellation stops everything it started.
//
// A non-zero exit is not an error result: the model needs the output of a
// failing build or test as much as that of a passing one, and the exit
// code is in the output. A timeout or cancellation is an error result.
// Permission checks are not done here; a decorator wraps this tool.
func NewExecuteCommand(opts ExecuteCommandOptions) tool.Tool {
	opts = opts.withDefaults()
	x := &executor{opts: opts}
	schema := tool.WithSchema(func(s *jsonschema.Schema) {
		setMinimum(s, "timeout", 0)
		s.Properties["timeout"].Description = fmt.Sprintf("Milliseconds (default %d, max %d)",
			opts.DefaultTimeout.Milliseconds(), opts.MaxTimeout.Milliseconds())
	})
	// The schema states the limits: the shipped one has the default ones,
	// other limits derive their own.
	if def := (ExecuteCommandOptions{}).withDefaults(); opts.DefaultTimeout != def.DefaultTimeout || opts.MaxTimeout != def.MaxTimeout {
		return tool.New[ExecuteCommandInput](NameExecuteCommand, tool.ClassExecute, executeCommandDescription, x.run, schema)
	}
	return newBuiltin[ExecuteCommandInput](NameExecuteCommand, tool.ClassExecute, executeCommandDescription, x.run, schema)
}

type executor struct {
	opts ExecuteCommandOptions
	// warned is set once the user was told that the sandbox is missing.
	warned atomic.Bool
}

func (x *executor) run(ctx context.Context, env *tool.Env, in ExecuteCommandInput) (tool.Result, error) {
	if strings.TrimSpace(in.Command) == "" {
		return tool.Errorf("command is empty; give the shell command to run"), nil
	}
	if env == nil || env.Root == "" {
		return tool.Result{}, errors.New("tools: ExecuteCommand: env has no project root")
	}
	timeout := x.opts.DefaultTimeout
	var notes []string
	if in.Timeout > 0 {
		// Compared in milliseconds first: a huge value would overflow the
		// Duration into a negative timeout.
		if int64(in.Timeout) > x.opts.MaxTimeout.Milliseconds() {
			notes = append(notes, fmt.Sprintf("timeout %dms exceeds the maximum; used %dms", in.Timeout, x.opts.MaxTimeout.Milliseconds()))
			timeout = x.opts.MaxTimeout
		} else {
			timeout = time.Duration(in.Timeout) * time.Millisecond
		}
	}

	// The sandbox's writable root is the Env's: an isolated specialist's
	// commands write its worktree, not the project.
	if launcher := x.opts.Launcher.WithRoot(env.Root); launcher != x.opts.Launcher {
		cp := &executor{opts: x.opts}
		cp.opts.Launcher = launcher
		cp.warned.Store(x.warned.Load())
		x = cp
	}
	st := x.opts.Launcher.Status()
	if st.Refuse {
		return tool.Errorf("commands are refused because no sandbox is available: %s. Tell the user: install bubblewrap, or change permissions.sandbox (see `odin doctor`)", st), nil
	}
	if st.Degraded() && x.warned.CompareAndSwap(false, true) {
		notes = append(notes, "odin: commands run with a weaker sandbox: "+st.String())
		if env.Publish != nil {
			env.Publish(messages.Notice{Level: "warn", Text: "commands run with a weaker sandbox: " + st.String() + " (see `odin doctor`)"})
		}
	}
	start := time.Now()
	out := newHeadTail(x.opts.MaxOutput)
	spec := sandbox.Spec{Args: []string{"bash", "-c", in.Command}, Dir: env.Root,
		Env: append(commandEnv(), x.opts.Env...), Write: writeMode(env.Mode) && !env.ReadOnlyCommands, Agent: env.Agent}
	var state runState
	var waitErr error
	var blocked []string
	var err error
	code := 0
	if x.opts.Terminal != nil && x.opts.HandoffDir != "" && x.opts.Launcher.CanHandoff() {
		state, code, blocked, err = x.executeInTerminal(ctx, spec, timeout, out)
		if err != nil {
			return tool.Errorf("cannot start the command in the editor's terminal: %v", err), nil
		}
	} else {
		state, waitErr, blocked, err = x.execute(ctx, spec, timeout, out)
		if err != nil {
			return tool.Errorf("cannot start the command: %v", err), nil
		}
		code, notes = exitCode(waitErr, notes)
	}
	if len(blocked) > 0 {
		notes = append(notes, fmt.Sprintf("the sandbox's proxy refused %s; if the command needs it, ask the user to add it to %s",
			strings.Join(blocked, ", "), sandbox.DomainsKey))
	}
	oc := CommandOutcome{
		TimedOut:  state == stateTimedOut,
		Cancelled: state == stateCancelled,
		Elapsed:   time.Since(start),
	}
	oc.Output, oc.TruncatedBytes = out.String()
	oc.ExitCode = code
	// A resource limit hit is the sandbox's doing, not the command's
	// fault: the model is told which limit and that it is an error, not
	// left guessing from "fork: retry" or "Killed".
	limitNote := x.opts.Launcher.LimitNote(oc.Output, oc.ExitCode)
	if limitNote != "" {
		notes = append(notes, limitNote)
	}
	if st.Kind != sandbox.KindNone && oc.ExitCode != 0 && limitNote == "" {
		switch {
		case sandboxRefusal(oc.Output) && env.ReadOnlyCommands && writeMode(env.Mode):
			notes = append(notes, "the command ran in Odin's sandbox with the project read-only: the "+env.Agent+" agent writes files only with its write tools, which allow only the files it may change")
		case sandboxRefusal(oc.Output) && !writeMode(env.Mode):
			notes = append(notes, "the command ran in Odin's sandbox in "+env.Mode+" mode, where nothing may be written")
		case sandboxRefusal(oc.Output):
			notes = append(notes, "the command ran in Odin's sandbox: it may write only in the project (not .git, .odin or odin.yaml) and permissions.additional_dirs; "+
				"if it must write elsewhere, ask the user to add that directory to permissions.additional_dirs (or --add-dir)")
		case len(blocked) == 0 && networkRefusal(oc.Output):
			notes = append(notes, "the sandbox has no network unless domains are allowed; if the command needs a host, ask the user to add it to "+sandbox.DomainsKey)
		}
	}

	var b strings.Builder
	switch state {
	case stateTimedOut:
		fmt.Fprintf(&b, "Command timed out after %s; it and every process it started were killed. Run long jobs with a larger timeout or in smaller steps.\n", timeout)
	case stateCancelled:
		b.WriteString("Command cancelled; it and every process it started were killed.\n")
	}
	if oc.Output == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(oc.Output)
		if !strings.HasSuffix(oc.Output, "\n") {
			b.WriteByte('\n')
		}
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "(%s)\n", n)
	}
	if state == stateExited {
		fmt.Fprintf(&b, "Exit code: %d", oc.ExitCode)
	}
	return tool.Result{
		Output:  strings.TrimRight(b.String(), "\n"),
		IsError: state != stateExited || limitNote != "",
		Meta:    oc,
	}, nil
}

type runState int

const (
	stateExited runState = iota
	stateTimedOut
	stateCancelled
)

// writeMode reports whether commands of a message in mode may write the
// project: not in ask or plan mode.
func writeMode(mode string) bool {
	return mode != string(messages.ModeAsk) && mode != string(messages.ModePlan)
}

// execute runs spec in the sandbox and copies its combined output to out.
// It returns how the run ended, the error of cmd.Wait and the hosts the
// proxy refused; err is set only when the command could not start.
func (x *executor) execute(ctx context.Context, spec sandbox.Spec, timeout time.Duration, out io.Writer) (state runState, waitErr error, blocked []string, err error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, nil, nil, err
	}
	defer pr.Close()
	// Cancellation is handled below (the whole group, with a grace
	// period), not by the launcher's context.
	proc, err := x.opts.Launcher.Command(context.WithoutCancel(ctx), spec)
	if err != nil {
		pw.Close()
		return 0, nil, nil, err
	}
	defer proc.Release()
	cmd := proc.Cmd
	cmd.Stdin = nil // /dev/null: a command waiting for input must not hang
	cmd.Stdout, cmd.Stderr = pw, pw
	err = cmd.Start()
	pw.Close() // the children hold the write end now
	if err != nil {
		return 0, nil, nil, err
	}

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _ = io.Copy(out, pr)
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case waitErr = <-waitDone:
	case <-timer.C:
		state = stateTimedOut
		waitErr = x.stopGroup(proc, waitDone)
	case <-ctx.Done():
		state = stateCancelled
		waitErr = x.stopGroup(proc, waitDone)
	}

	// The shell is gone, but a background job may still hold the output
	// open; it does not outlive the command.
	drain := time.NewTimer(execDrainWait)
	defer drain.Stop()
	select {
	case <-readDone:
	case <-drain.C:
		x.stopStragglers(proc)
		// A process that left the group (setsid) could keep the pipe
		// open forever; stop reading rather than wait for it.
		_ = pr.SetReadDeadline(time.Now())
		<-readDone
	}
	proc.Release()
	if removed := proc.Removed(); len(removed) > 0 {
		fmt.Fprintf(out, "\n[odin: removed what this command planted where git would run it outside the sandbox: %s. A new repository may hold only what `git init` makes; ask the user to create or configure it]\n", strings.Join(removed, "; "))
	}
	return state, waitErr, proc.Blocked(), nil
}

// terminalOutputFactor is how much more output than MaxOutput the editor's
// terminal keeps: it keeps the end only, and the model is shown the start
// and the end of what it kept.
const terminalOutputFactor = 4

// executeInTerminal runs spec in a terminal of the editor: the sandboxed
// command is handed off (sandbox.Process.Handoff) and the terminal runs
// Odin's binary on it, so the command gets the sandbox and environment it
// would get here. The output read from the terminal is written to out; a
// timeout or cancellation kills the terminal's command, and the terminal
// is always released. It returns how the run ended, the exit code and
// the hosts the proxy refused; err is set when it could not start.
func (x *executor) executeInTerminal(ctx context.Context, spec sandbox.Spec, timeout time.Duration, out io.Writer) (state runState, code int, blocked []string, err error) {
	proc, err := x.opts.Launcher.Command(context.WithoutCancel(ctx), spec)
	if err != nil {
		return 0, 0, nil, err
	}
	// After the terminal's command: the proxy serves it until then.
	defer proc.Release()
	argv, remove, err := proc.Handoff(x.opts.HandoffDir)
	if err != nil {
		return 0, 0, nil, err
	}
	// The file is removed by the command it starts; this removes one the
	// editor never ran.
	defer remove()
	term, err := x.opts.Terminal.CreateTerminal(ctx, argv, spec.Dir, x.opts.MaxOutput*terminalOutputFactor)
	if err != nil {
		return 0, 0, nil, err
	}
	// Cleanup runs after a cancel too, with a bound of its own.
	cleanup := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), x.opts.KillGrace+5*time.Second)
	}
	defer func() {
		cctx, cancel := cleanup()
		defer cancel()
		_ = term.Release(cctx)
	}()

	type exit struct {
		code   *int
		signal *string
		err    error
	}
	waitCtx, stopWait := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWait()
	exited := make(chan exit, 1)
	go func() {
		c, s, err := term.WaitForExit(waitCtx)
		exited <- exit{c, s, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var e exit
	select {
	case e = <-exited:
	case <-timer.C:
		state = stateTimedOut
	case <-ctx.Done():
		state = stateCancelled
	}
	if state != stateExited {
		cctx, cancel := cleanup()
		_ = term.Kill(cctx)
		select {
		case e = <-exited:
		case <-cctx.Done():
		}
		cancel()
	}
	cctx, cancel := cleanup()
	defer cancel()
	text, truncated, oerr := term.Output(cctx)
	if oerr != nil && e.err == nil {
		e.err = oerr
	}
	if truncated {
		fmt.Fprintf(out, "[odin: the editor's terminal kept only the last %d bytes of the output]\n", x.opts.MaxOutput*terminalOutputFactor)
	}
	_, _ = io.WriteString(out, text)
	proc.Release()
	if removed := proc.Removed(); len(removed) > 0 {
		fmt.Fprintf(out, "\n[odin: removed what this command planted where git would run it outside the sandbox: %s. A new repository may hold only what `git init` makes; ask the user to create or configure it]\n", strings.Join(removed, "; "))
	}
	switch {
	case e.code != nil:
		code = *e.code
	case e.signal != nil:
		code = 128 + signalNumber(*e.signal)
		fmt.Fprintf(out, "\n[odin: terminated by signal %s]\n", *e.signal)
	case e.err != nil && state == stateExited:
		return 0, 0, nil, fmt.Errorf("terminal: %w", e.err)
	default:
		code = -1
	}
	return state, code, proc.Blocked(), nil
}

// signalNumber is the number of a signal the editor names ("SIGKILL",
// "KILL", "9"), 0 when unknown.
func signalNumber(name string) int {
	if n, err := strconv.Atoi(name); err == nil {
		return n
	}
	name = strings.TrimPrefix(strings.ToUpper(name), "SIG")
	for i := syscall.Signal(1); i < 65; i++ {
		if strings.TrimPrefix(strings.ToUpper(unix.SignalName(i)), "SIG") == name && name != "" {
			return int(i)
		}
	}
	return 0
}

// stopGroup terminates the process (SIGTERM to its group; at once under
// bubblewrap, see sandbox.Process.Terminate), waits up to KillGrace for the
// group to empty, then kills it. It returns the shell's wait error, read
// from waitDone.
func (x *executor) stopGroup(proc *sandbox.Process, waitDone <-chan error) error {
	_ = proc.Terminate()
	empty, gotWait, waitErr := x.awaitGroup(proc.Process.Pid, waitDone)
	if empty {
		return waitErr
	}
	_ = proc.Kill()
	if !gotWait {
		waitErr = <-waitDone
	}
	return waitErr
}

// stopStragglers ends what is left of the group of a shell that already
// exited (background jobs holding its output open) the way stopGroup
// does; the shell's wait error was read already, so there is none here.
func (x *executor) stopStragglers(proc *sandbox.Process) {
	_ = proc.Terminate()
	if empty, _, _ := x.awaitGroup(proc.Process.Pid, nil); !empty {
		_ = proc.Kill()
	}
}

// awaitGroup waits up to KillGrace for the process group pgid to empty,
// reading the shell's wait error from waitDone on the way (nil: it was
// read already). The group counts as empty only once the shell was
// waited for.
func (x *executor) awaitGroup(pgid int, waitDone <-chan error) (empty, gotWait bool, waitErr error) {
	gotWait = waitDone == nil
	deadline := time.NewTimer(x.opts.KillGrace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case waitErr = <-waitDone:
			gotWait, waitDone = true, nil
		case <-tick.C:
			if gotWait && syscall.Kill(-pgid, 0) != nil {
				return true, true, waitErr
			}
		case <-deadline.C:
			return false, gotWait, waitErr
		}
	}
}

// commandEnv are settings added to the sandbox's environment that keep
// tools from paging, colouring or prompting (later entries win).
func commandEnv() []string {
	return append([]string(nil),
		"ODIN=1",
		"PAGER=cat",
		"GIT_PAGER=cat",
		"NO_COLOR=1",
		"TERM=dumb",
		"GIT_TERMINAL_PROMPT=0",
	)
}

// networkRefusal reports whether output looks like a connection the
// sandbox's empty network refused.
func networkRefusal(output string) bool {
	for _, s := range []string{"Could not resolve host", "Temporary failure in name resolution", "no such host",
		"Network is unreachable", "network is unreachable", "getaddrinfo", "ENOTFOUND", "EAI_AGAIN"} {
		if strings.Contains(output, s) {
			return true
		}
	}
	return false
}

// sandboxRefusal reports whether output looks like a write the sandbox
// refused.
func sandboxRefusal(output string) bool {
	for _, s := range []string{"Permission denied", "Read-only file system", "EACCES", "Operation not permitted", "EPERM"} {
		if strings.Contains(output, s) {
			return true
		}
	}
	return false
}

// exitCode extracts the shell-style exit status from cmd.Wait's error.
func exitCode(waitErr error, notes []string) (int, []string) {
	if waitErr == nil {
		return 0, notes
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) {
		return -1, append(notes, "wait failed: "+waitErr.Error())
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), append(notes, "terminated by signal "+ws.Signal().String())
	}
	return ee.ExitCode(), notes
}

// headTail keeps the first and last max/2 bytes written to it and counts
// the rest: the start of a log says what ran, the end says how it ended.
type headTail struct {
	half  int
	head  []byte
	tail  []byte
	total int64
}

func newHeadTail(max int) *headTail { return &headTail{half: max / 2} }

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	if room := h.half - len(h.head); room > 0 {
		take := min(room, len(p))
		h.head = append(h.head, p[:take]...)
		p = p[take:]
	}
	if len(p) > 0 {
		h.tail = append(h.tail, p...)
		if len(h.tail) > 2*h.half {
			h.tail = append(h.tail[:0], h.tail[len(h.tail)-h.half:]...)
		}
	}
	return n, nil
}

// String returns the kept output as valid UTF-8 and the bytes dropped.
func (h *headTail) String() (string, int64) {
	tail := h.tail
	if len(tail) > h.half {
		tail = tail[len(tail)-h.half:]
	}
	dropped := h.total - int64(len(h.head)) - int64(len(tail))
	if dropped == 0 {
		return strings.ToValidUTF8(string(h.head)+string(tail), "\uFFFD"), 0
	}
	head, _ := splitPartialRune(h.head)
	for len(tail) > 0 && tail[0]&0xC0 == 0x80 { // skip a cut rune's continuation bytes
		tail = tail[1:]
	}
	dropped = h.total - int64(len(head)) - int64(len(tail))
	s := string(head) + fmt.Sprintf("\n… %d bytes truncated …\n", dropped) + string(tail)
	return strings.ToValidUTF8(s, "\uFFFD"), dropped
}
