package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed shellsession.md
var shellSessionDescription string

// ShellSession actions.
const (
	shellRun     = "run"
	shellJobs    = "jobs"
	shellKill    = "kill"
	shellRestart = "restart"
)

// ShellSessionInput is ShellSession's input. Command is the field the
// command policy checks, as for ExecuteCommand.
type ShellSessionInput struct {
	Command     string `json:"command,omitempty" jsonschema:"For action run"`
	Action      string `json:"action,omitempty" jsonschema:"run (default); jobs: list background jobs; kill: stop job number job and all it started; restart: a fresh shell"`
	Job         int    `json:"job,omitempty" jsonschema:"Job number (1 for [1])"`
	Timeout     int    `json:"timeout,omitempty" jsonschema:"Timeout in ms"`
	Description string `json:"description,omitempty" jsonschema:"5-10 words for the user"`
}

// ShellOutcome is ShellSession's Result.Meta.
type ShellOutcome struct {
	// ExitCode is the command's exit status ($?).
	ExitCode int
	// Cwd is the shell's working directory after the command.
	Cwd string
	// TimedOut: the timeout expired and the foreground command was
	// interrupted.
	TimedOut bool
	// Restarted: the shell was (re)started for this call; earlier state
	// is gone.
	Restarted bool
	// Output is what the command printed, as shown to the model.
	Output         string
	TruncatedBytes int64
}

// Sessions owns the interpreters of ShellSession and Python: one per
// agent run and tool, killed when the run ends (tool.Env.Done) and all of
// them on Close. The zero value is ready to use; it is safe for
// concurrent use and must not be copied.
type Sessions struct {
	once            sync.Once
	shells, pythons *sessionPool
}

// NewSessions returns an empty Sessions.
func NewSessions() *Sessions { return &Sessions{} }

func (s *Sessions) init() {
	s.once.Do(func() { s.shells, s.pythons = newSessionPool(), newSessionPool() })
}

// DialLoopback connects to addr, a loopback address and port, inside the
// sandbox of the run's shell (key: runKey), else of its Python
// interpreter: to the dev server an agent started there. It returns an
// error matching web.ErrNoLoopback when neither is running with a relay
// or listens on addr (the Landlock fallback shares the host's loopback:
// its servers are reached there). WebBrowser's page requests come here for
// allowed loopback ports only.
func (s *Sessions) DialLoopback(ctx context.Context, key string, addr netip.AddrPort) (net.Conn, error) {
	s.init()
	for _, pool := range []*sessionPool{s.shells, s.pythons} {
		ss := pool.get(key)
		if ss == nil || !ss.alive() {
			continue
		}
		c, err := ss.proc.DialLoopback(ctx, addr)
		switch {
		case err == nil:
			return c, nil
		case errors.Is(err, sandbox.ErrNoRelay), errors.Is(err, syscall.ECONNREFUSED):
			continue
		default:
			return nil, err
		}
	}
	return nil, web.ErrNoLoopback
}

// Close kills every session and refuses new ones: call it when the tool
// set is done with (Odin's exit).
func (s *Sessions) Close() {
	s.init()
	s.shells.Close()
	s.pythons.Close()
}

type shellTool struct {
	opts   ExecuteCommandOptions
	pool   *sessionPool
	warned atomic.Bool
}

// NewShellSession returns ShellSession: a bash that persists across the
// calls of one agent run, in the same sandbox, with the same environment,
// limits and (through the permission decorator, checked in the shell's
// current directory) the same policy as ExecuteCommand.
func NewShellSession(opts ExecuteCommandOptions, sessions *Sessions) tool.Tool {
	opts = opts.withDefaults()
	if sessions == nil {
		sessions = NewSessions()
	}
	sessions.init()
	x := &shellTool{opts: opts, pool: sessions.shells}
	schema := tool.WithSchema(func(s *jsonschema.Schema) {
		setMinimum(s, "timeout", 0)
		setMinimum(s, "job", 0)
		s.Properties["action"].Enum = []any{shellRun, shellJobs, shellKill, shellRestart}
		s.Properties["timeout"].Description = fmt.Sprintf("Milliseconds (default %d, max %d)",
			opts.DefaultTimeout.Milliseconds(), opts.MaxTimeout.Milliseconds())
	})
	if def := (ExecuteCommandOptions{}).withDefaults(); opts.DefaultTimeout != def.DefaultTimeout || opts.MaxTimeout != def.MaxTimeout {
		return &shellSessionTool{Tool: tool.New[ShellSessionInput](NameShellSession, tool.ClassExecute, shellSessionDescription, x.run, schema), x: x}
	}
	return &shellSessionTool{Tool: newBuiltin[ShellSessionInput](NameShellSession, tool.ClassExecute, shellSessionDescription, x.run, schema), x: x}
}

// shellSessionTool adds WorkDir to the typed tool.
type shellSessionTool struct {
	tool.Tool
	x *shellTool
}

// WorkDir implements tool.WorkDirer: the directory the run's shell is in.
func (t *shellSessionTool) WorkDir(env *tool.Env) string {
	if s := t.x.pool.get(runKey(env)); s != nil && s.alive() {
		return s.workDir()
	}
	return ""
}

// shellPrelude defines the driver's functions in the fresh shell. A
// command runs as
//
//	__odin_pre NONCE; eval $'COMMAND' </dev/null 2>&1; __odin_st=$?; trap - ...; __odin_post NONCE $__odin_st
//
// at the top level (so cd, export, source and job control act on the
// shell itself). __odin_pre reports the shell's PID ($$), by which Odin
// finds the foreground command once the call's timeout passes
// (watchdog): Odin, unconfined, reads /proc and signals every process of
// the shell's process group but the shell, its parent (the sandbox's init
// helper) and the background jobs (which, job control being off, ignore
// SIGINT). A watchdog inside the shell would need every process's
// /proc/PID, which the Landlock fallback can open to a command only by
// opening the whole machine's (other users' command lines, socket
// names). The shell survives: it traps SIGINT.
//
// The traps a command set are reset and __odin_post drops the functions
// and aliases it defined:
// the policy judges each call on its own, and a function approved once
// (or an alias, a DEBUG trap) would otherwise run, under a harmless name,
// in later calls it never saw. Its `declare -F` runs in a subshell that
// ignores SIGINT: a timeout that passes while __odin_post runs would
// otherwise interrupt it (the subshell is in the shell's process group)
// and leave the command's functions defined.
//
// __odin_jobpids reports the PIDs of a background job; Odin kills them
// and all they started (sandbox.Process.KillTrees), then the shell reaps
// the job (action kill).
const shellPrelude = `trap : INT
__odin_pre() {
  printf '\1%s pid %d\0' "$1" "$$" >&2
}
__odin_post() {
  local s=$2 f dropped=
  while read -r _ _ f; do
    [[ $f == __odin_* ]] && continue
    unset -f "$f"; dropped+=" $f"
  done < <(trap '' INT; declare -F)
  unalias -a 2>/dev/null
  [[ -n $dropped ]] && printf '[odin: shell functions do not outlive the call that defines them (each call is checked on its own); dropped:%s]\n' "$dropped"
  printf '\n%s\n' "$1"
  printf '\1%s done %d %s\0' "$1" "$s" "$PWD" >&2
}
__odin_jobpids() {
  local all
  all=$(jobs -p "%$2" 2>/dev/null) || all=
  if [[ -z $all ]]; then printf 'no background job %%%s; see action jobs\n' "$2"; return 1; fi
  printf '\1%s pids %s\0' "$1" "$(echo $all)" >&2
}
`

// jobKillGrace is how long a killed background job has between SIGTERM
// and SIGKILL.
const jobKillGrace = 2 * time.Second

func (x *shellTool) run(ctx context.Context, env *tool.Env, in ShellSessionInput) (tool.Result, error) {
	if env == nil || env.Root == "" {
		return tool.Result{}, fmt.Errorf("tools: %s: env has no project root", NameShellSession)
	}
	action := in.Action
	if action == "" {
		action = shellRun
	}
	switch action {
	case shellRun:
		if strings.TrimSpace(in.Command) == "" {
			return tool.Errorf("command is empty; give the bash command to run, or an action (jobs, kill, restart)"), nil
		}
		if strings.ContainsRune(in.Command, 0) {
			return tool.Errorf("the command contains a NUL byte, which bash cannot take"), nil
		}
	case shellJobs, shellRestart:
		if in.Command != "" {
			return tool.Errorf("action %s takes no command; send the command in a call of its own", action), nil
		}
	case shellKill:
		if in.Command != "" {
			return tool.Errorf("action kill takes no command; give the job number in job"), nil
		}
		if in.Job <= 0 {
			return tool.Errorf("action kill needs job, the number of the background job (see action jobs)"), nil
		}
	default:
		return tool.Errorf("unknown action %q; use run, jobs, kill or restart", in.Action), nil
	}
	timeout, notes := callTimeout(x.opts, in.Timeout)
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

	key := runKey(env)
	write := writeMode(env.Mode) && !env.ReadOnlyCommands
	s := x.pool.get(key)
	var oc ShellOutcome
	switch {
	case action == shellRestart:
		if s != nil {
			x.pool.drop(key, s)
		}
		s = nil
	case s != nil && !s.alive():
		notes = append(notes, "the previous shell had exited (exit or exec in a command?); this is a new shell: cwd, variables and jobs are reset")
		x.pool.drop(key, s)
		s = nil
	case s != nil && s.write != write:
		notes = append(notes, fmt.Sprintf("the shell was restarted because the mode changed to %s (a shell keeps the confinement it started with): cwd, variables and jobs are reset", env.Mode))
		x.pool.drop(key, s)
		s = nil
	}
	if s == nil {
		if action == shellJobs || action == shellKill {
			return tool.Result{Output: "no shell is running for this agent, so there are no background jobs"}, nil
		}
		var err error
		s, err = startSession(x.opts.Launcher, sessionSpec{
			spec: sandbox.Spec{Args: []string{"bash", "--noprofile", "--norc", "-s"}, Dir: env.Root,
				Env: append(commandEnv(), x.opts.Env...), Write: write, Agent: env.Agent,
				// A dev server the shell starts is what WebBrowser opens.
				LoopbackRelay: true},
			prelude: shellPrelude,
		}, write)
		if err != nil {
			return tool.Errorf("cannot start the shell: %v", err), nil
		}
		s.setWorkDir(env.Root)
		if err := x.pool.put(key, s, env.Done); err != nil {
			return tool.Errorf("cannot start the shell: %v", err), nil
		}
		oc.Restarted = true
		if action == shellRestart {
			return tool.Result{Output: "started a fresh shell in " + env.Root, Meta: oc}, nil
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	// The policy checked the command in the directory the shell was in
	// then; a parallel call may have moved it since.
	if action == shellRun {
		if checked := tool.WorkDir(ctx); checked != "" && checked != s.workDir() {
			return tool.Errorf("the shell's working directory changed to %s while this command was being checked in %s; send it again", s.workDir(), checked), nil
		}
	}
	nonce := newNonce()
	var script string
	var w *watchdog
	// At least a second, as before the watchdog moved out of the shell.
	grace := max(time.Second, x.opts.KillGrace)
	switch action {
	case shellRun:
		// Traps are reset at the top level: a function cannot clear a
		// DEBUG trap for its caller.
		script = fmt.Sprintf("__odin_pre %s; eval %s </dev/null 2>&1; __odin_st=$?; trap - DEBUG RETURN ERR EXIT; trap : INT; __odin_post %s $__odin_st\n",
			nonce, bashQuote(in.Command), nonce)
		w = &watchdog{after: timeout, grace: grace}
	case shellJobs:
		script = fmt.Sprintf("__odin_pre %s; jobs -l 2>&1; __odin_post %s $?\n", nonce, nonce)
	case shellKill:
		script = fmt.Sprintf("__odin_pre %s; __odin_jobpids %s %d; __odin_post %s $?\n", nonce, nonce, in.Job, nonce)
	}
	hard := timeout + grace + 5*time.Second
	ex, err := s.request(ctx, nonce, script, w, hard, x.opts.MaxOutput)
	if action == shellKill && err == nil && ex.ok && ex.jobPids != "" {
		ex, err = s.killJob(ctx, in.Job, ex, hard, x.opts.MaxOutput)
	}
	oc.Output, oc.TruncatedBytes = ex.output, ex.truncated
	var b strings.Builder
	lost := false
	switch {
	case ex.cancelled:
		b.WriteString("Command cancelled; the shell and everything it started were killed (the next call starts a fresh shell).\n")
		lost = true
	case err != nil || !ex.ok:
		if ex.timedOut || !s.alive() && err == nil {
			fmt.Fprintf(&b, "Command timed out after %s and did not stop when interrupted; the shell and everything it started were killed (the next call starts a fresh shell).\n", timeout)
		} else {
			fmt.Fprintf(&b, "The shell exited%s; cwd, variables and jobs are gone (the next call starts a fresh shell).\n", exitNote(s))
		}
		lost = true
	case ex.timedOut:
		oc.TimedOut = true
		fmt.Fprintf(&b, "Command timed out after %s; the foreground command was interrupted (SIGINT, then SIGKILL). The shell survives with its cwd, variables and background jobs.\n", timeout)
	}
	if ex.ok {
		code, cwd, _ := strings.Cut(ex.payload, " ")
		oc.ExitCode, _ = strconv.Atoi(code)
		if cwd != "" {
			s.setWorkDir(cwd)
		}
	}
	oc.Cwd = s.workDir()
	if oc.Output == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(oc.Output)
		if !strings.HasSuffix(oc.Output, "\n") {
			b.WriteByte('\n')
		}
	}
	if oc.Restarted && !lost {
		notes = append(notes, "started a new shell in "+env.Root)
	}
	// A limit hit (the shell's processes share the limits of one
	// command) is named with the key that raises it.
	limitNote := x.opts.Launcher.LimitNote(oc.Output, oc.ExitCode)
	if limitNote != "" {
		notes = append(notes, limitNote)
	}
	if st.Kind != sandbox.KindNone && oc.ExitCode != 0 && limitNote == "" && sandboxRefusal(oc.Output) {
		if write {
			notes = append(notes, "the shell runs in Odin's sandbox: it may write only in the project (not .git, .odin or odin.yaml) and permissions.additional_dirs")
		} else {
			notes = append(notes, "the shell runs in Odin's sandbox with the project read-only")
		}
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "(%s)\n", n)
	}
	if ex.ok {
		fmt.Fprintf(&b, "Exit code: %d\nWorking directory: %s", oc.ExitCode, oc.Cwd)
	}
	if lost {
		x.pool.drop(key, s)
	}
	return tool.Result{Output: strings.TrimRight(b.String(), "\n"), IsError: !ex.ok || oc.TimedOut, Meta: oc}, nil
}

// exitNote says how the session's interpreter ended, when it has.
func exitNote(s *session) string {
	select {
	case <-s.exited:
	default:
		return ""
	}
	if c, _ := exitCode(s.waitErr, nil); c != 0 {
		return fmt.Sprintf(" (status %d)", c)
	}
	return ""
}

// callTimeout is the timeout of a call asking for ms milliseconds (0: the
// default), capped as ExecuteCommand caps it.
func callTimeout(opts ExecuteCommandOptions, ms int) (time.Duration, []string) {
	if ms <= 0 {
		return opts.DefaultTimeout, nil
	}
	if int64(ms) > opts.MaxTimeout.Milliseconds() {
		return opts.MaxTimeout, []string{fmt.Sprintf("timeout %dms exceeds the maximum; used %dms", ms, opts.MaxTimeout.Milliseconds())}
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// bashQuote quotes s as a bash $'...' word: printable ASCII as is, the
// quote and the backslash escaped, every other byte (newlines, UTF-8) as
// \xHH, so no byte of s can end the word or the line it is sent on.
func bashQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "\\x%02x", c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// killJob stops the background job whose PIDs the shell reported in
// first, with everything they started, and has the shell reap it. Odin
// finds the job's descendants in /proc: the shell, confined like any
// command, cannot read another process's /proc/PID under the Landlock
// fallback. first's output comes first in the returned exchange.
func (s *session) killJob(ctx context.Context, job int, first exchange, hard time.Duration, maxOut int) (exchange, error) {
	var pids []int
	for _, f := range strings.Fields(first.jobPids) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	killed := s.proc.KillTrees(pids, jobKillGrace)
	list := make([]string, len(killed))
	for i, p := range killed {
		list[i] = strconv.Itoa(p)
	}
	nonce := newNonce()
	script := fmt.Sprintf("__odin_pre %s; wait %%%d 2>/dev/null; printf 'killed job %%%%%d (processes %s)\\n'; __odin_post %s 0\n",
		nonce, job, job, strings.Join(list, " "), nonce)
	ex, err := s.request(ctx, nonce, script, nil, hard, maxOut)
	ex.output = first.output + ex.output
	ex.truncated += first.truncated
	return ex, err
}
