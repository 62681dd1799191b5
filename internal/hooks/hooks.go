package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/tools/tool"
)

// Hook events.
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
	SubagentStart    = "SubagentStart"
	SubagentStop     = "SubagentStop"
	Stop             = "Stop"
	PreCompact       = "PreCompact"
)

// Events lists the events hooks can be configured for.
func Events() []string {
	return []string{PreToolUse, PostToolUse, UserPromptSubmit, SubagentStart, SubagentStop, Stop, PreCompact}
}

// DefaultTimeout bounds a hook without a timeout of its own.
const DefaultTimeout = 30 * time.Second

// maxHookOutput caps what is kept of a hook's stdout and of its stderr.
const maxHookOutput = 64 << 10

// Input is the event a hook receives as JSON on its standard input.
type Input struct {
	SessionID string `json:"session_id"`
	// Event is the event's name (PreToolUse, ...).
	Event string `json:"hook_event_name"`
	// Cwd is the project root, where the hook runs.
	Cwd string `json:"cwd"`
	// Agent is the agent concerned: the caller of a tool, the specialist
	// of SubagentStart/SubagentStop ("orchestrator" for the main agent).
	Agent  string `json:"agent,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	// ToolName and ToolInput for PreToolUse and PostToolUse.
	ToolName  string          `json:"tool_name,omitempty"`
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	// CommandDir is where the call's command runs when that is not the
	// project root: the working directory a ShellSession's shell was left
	// in by earlier calls. Empty for every other call.
	CommandDir string `json:"command_dir,omitempty"`
	// ToolResult for PostToolUse.
	ToolResult *ToolResult `json:"tool_result,omitempty"`
	// Prompt is the user's message (UserPromptSubmit) or the specialist's
	// brief (SubagentStart).
	Prompt string `json:"prompt,omitempty"`
	// Summary is a specialist's report summary (SubagentStop) or the
	// answer (Stop).
	Summary string `json:"summary,omitempty"`
	// Trigger says why compaction runs (PreCompact): "auto" or "manual".
	Trigger string `json:"trigger,omitempty"`
}

// ToolResult is a tool call's outcome as PostToolUse hooks see it.
type ToolResult struct {
	Output  string   `json:"output"`
	IsError bool     `json:"is_error"`
	Files   []string `json:"files,omitempty"`
}

// Result is what a session's hooks decided about one event.
type Result struct {
	// Blocked: a hook exited 2. What that means depends on the event:
	// PreToolUse — the tool does not run and Feedback is the model's tool
	// result; PostToolUse — Feedback is shown to the model; UserPromptSubmit
	// — the prompt is not processed and Feedback is shown to the user;
	// SubagentStart — the specialist does not start and Feedback goes to the
	// Orchestrator's model; SubagentStop and Stop — the agent does not stop
	// yet and Feedback is its next instruction; PreCompact — compaction is
	// skipped.
	Blocked bool
	// Feedback is the blocking hook's stderr.
	Feedback string
	// Context is the stdout of hooks that exited 0, for the events whose
	// output reaches the model (UserPromptSubmit, SubagentStart,
	// PostToolUse); empty for the others.
	Context string
	// Warnings are for the user: hooks that failed to start, timed out or
	// exited with another code. They never block.
	Warnings []string
}

// Options configure Hooks.
type Options struct {
	// Root is the project root: hooks run there and get it as cwd.
	Root string
	// SessionID is used when an event does not carry one.
	SessionID string
	// Shell runs the hook commands with -c. Default "bash".
	Shell string
	// Env is added to the sandbox's filtered environment of hooks.
	Env []string
	// Launcher runs the hooks in the session's sandbox, with edit-mode
	// rights; nil runs them unconfined with a filtered environment.
	Launcher *sandbox.Launcher
	// Visible are directories the hooks' scripts live in (plugins'), kept
	// readable in the sandbox even under /tmp (sandbox.Spec.Visible).
	Visible []string
	// Check, when set, is asked before each run of a hook of event: an
	// error keeps the hook from running and is its warning (a project
	// hook whose pinned files changed since `odin trust`).
	Check func(event string, hk config.Hook) error
}

// Hooks runs the user's hook commands (config.Hooks) on session events.
// Each hook runs with the shell's -c in the project root, inside the session's sandbox (its
// whole process tree dies with it), with the event as JSON on stdin and ODIN_PROJECT_DIR,
// ODIN_SESSION_ID and ODIN_HOOK_EVENT in its environment. The hooks matching
// an event run one after another in configuration order; the first that
// exits 2 blocks and ends the run. Exit 0 continues (stdout becomes context
// where the event allows it); any other exit code, a failure to start and a
// timeout (after which the whole process group is killed) are warnings.
//
// Hooks from a project's odin.yaml must only be passed here once the project
// is trusted (TrustStore). Hooks is immutable and safe for concurrent use;
// it implements tool.HookRunner.
type Hooks struct {
	byEvent map[string][]config.Hook
	opts    Options
}

var _ tool.HookRunner = (*Hooks)(nil)

// New validates hooks (known event names, non-empty commands,
// non-negative timeouts) and returns a runner.
func New(hooks map[string][]config.Hook, opts Options) (*Hooks, error) {
	if opts.Shell == "" {
		opts.Shell = "bash"
	}
	h := &Hooks{byEvent: map[string][]config.Hook{}, opts: opts}
	var problems []string
	for event, list := range hooks {
		if !slices.Contains(Events(), event) {
			problems = append(problems, fmt.Sprintf("hooks.%s: unknown event (want one of %s)", event, strings.Join(Events(), ", ")))
			continue
		}
		for i, hk := range list {
			if strings.TrimSpace(hk.Command) == "" {
				problems = append(problems, fmt.Sprintf("hooks.%s[%d].command: empty", event, i))
			}
			if hk.Timeout < 0 {
				problems = append(problems, fmt.Sprintf("hooks.%s[%d].timeout: negative", event, i))
			}
		}
		h.byEvent[event] = slices.Clone(list)
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return nil, fmt.Errorf("policy: %s", strings.Join(problems, "; "))
	}
	return h, nil
}

// Has reports whether any hook is configured for event.
func (h *Hooks) Has(event string) bool { return h != nil && len(h.byEvent[event]) > 0 }

// Run runs the hooks of in.Event that match it. It never fails: problems
// with hooks are warnings. It returns early when ctx ends.
func (h *Hooks) Run(ctx context.Context, in Input) Result {
	var res Result
	if h == nil {
		return res
	}
	if in.SessionID == "" {
		in.SessionID = h.opts.SessionID
	}
	if in.Cwd == "" {
		in.Cwd = h.opts.Root
	}
	subject := ""
	switch in.Event {
	case PreToolUse, PostToolUse:
		subject = in.ToolName
	case SubagentStart, SubagentStop:
		subject = in.Agent
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s hooks: cannot encode the event: %v", in.Event, err))
		return res
	}
	var context []string
	for _, hk := range h.byEvent[in.Event] {
		alias := ""
		if subject != "" && !hookMatches(hk.Matcher, subject) {
			if alias = CommandAlias(in.ToolName); subject != in.ToolName || alias == "" || !hookMatches(hk.Matcher, alias) {
				continue
			}
		}
		if ctx.Err() != nil {
			return res
		}
		event := stdin
		name, ok := hk.ToolNames[in.ToolName]
		if !ok && in.ToolName == shellSession && alias != "" {
			// A hook written for another agent's shell tool (Claude
			// Code's Bash) sees ShellSession under that name: its input,
			// command and timeout, is the same shape.
			name, ok = hk.ToolNames[alias]
		}
		if ok && in.ToolName != "" {
			renamed := in
			renamed.ToolName = name
			if b, err := json.Marshal(renamed); err == nil {
				event = b
			}
		}
		out := h.runOne(ctx, hk, in.Event, in.SessionID, event)
		switch {
		case out.err != nil:
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s hook %q could not run: %v", in.Event, hk.Command, out.err))
		case out.timedOut:
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s hook %q timed out after %s and was killed", in.Event, hk.Command, out.timeout))
		case ctx.Err() != nil:
			return res
		case out.code == 0:
			if s := strings.TrimSpace(out.stdout); s != "" && contextEvent(in.Event) {
				context = append(context, s)
			}
		case out.code == 2:
			res.Blocked = true
			res.Feedback = strings.TrimSpace(out.stderr)
			if res.Feedback == "" {
				res.Feedback = fmt.Sprintf("hook %q exited 2 without a message", hk.Command)
			}
			res.Context = strings.Join(context, "\n")
			return res
		default:
			msg := fmt.Sprintf("%s hook %q exited with status %d", in.Event, hk.Command, out.code)
			if s := strings.TrimSpace(out.stderr); s != "" {
				msg += ": " + firstLines(s, 5)
			}
			res.Warnings = append(res.Warnings, msg)
		}
	}
	res.Context = strings.Join(context, "\n")
	return res
}

// Tool names hooks know (the tools package's, which this package does not
// import).
const (
	executeCommand = "ExecuteCommand"
	shellSession   = "ShellSession"
	python         = "Python"
)

// CommandAlias is the tool name a hook's matcher also catches tool under:
// "ExecuteCommand" for ShellSession and Python, which run commands in the
// same sandbox under the same policy (a persistent shell, a persistent
// interpreter); "" for any other tool. A hook guarding ExecuteCommand must
// not be side-stepped by sending the same command line to ShellSession.
// The hook still gets the tool's real name and input (ShellSession:
// command, action, job, timeout; Python: code, restart, timeout).
func CommandAlias(tool string) string {
	switch tool {
	case shellSession, python:
		return executeCommand
	}
	return ""
}

// PreToolUse implements tool.HookRunner.
func (h *Hooks) PreToolUse(ctx context.Context, env *tool.Env, info tool.Info, input json.RawMessage) tool.HookVerdict {
	if !h.Has(PreToolUse) {
		return tool.HookVerdict{}
	}
	in := toolHookInput(ctx, env, PreToolUse, info, input)
	return verdictOf(h.Run(ctx, in))
}

// PostToolUse implements tool.HookRunner.
func (h *Hooks) PostToolUse(ctx context.Context, env *tool.Env, info tool.Info, input json.RawMessage, r tool.Result) tool.HookVerdict {
	if !h.Has(PostToolUse) {
		return tool.HookVerdict{}
	}
	in := toolHookInput(ctx, env, PostToolUse, info, input)
	in.ToolResult = &ToolResult{Output: r.Output, IsError: r.IsError, Files: r.Files}
	return verdictOf(h.Run(ctx, in))
}

func toolHookInput(ctx context.Context, env *tool.Env, event string, info tool.Info, input json.RawMessage) Input {
	in := Input{Event: event, ToolName: info.Name, CommandDir: tool.WorkDir(ctx)}
	if json.Valid(input) {
		in.ToolInput = input
	} else if len(input) > 0 {
		quoted, _ := json.Marshal(string(input))
		in.ToolInput = quoted
	}
	if env != nil {
		in.SessionID, in.Cwd, in.Agent, in.TaskID = env.SessionID, env.Root, env.Agent, env.AgentID
	}
	return in
}

func verdictOf(r Result) tool.HookVerdict {
	return tool.HookVerdict{Block: r.Blocked, Message: r.Feedback, Context: r.Context, Warnings: r.Warnings}
}

// contextEvent reports whether hook stdout reaches the model for event.
func contextEvent(event string) bool {
	return event == UserPromptSubmit || event == SubagentStart || event == PostToolUse
}

// hookMatches applies a config.Hook matcher: empty or "*" matches every
// name; otherwise a "|"-separated list of exact names.
func hookMatches(matcher, name string) bool {
	matcher = strings.TrimSpace(matcher)
	if matcher == "" || matcher == "*" {
		return true
	}
	for _, m := range strings.Split(matcher, "|") {
		if strings.TrimSpace(m) == name {
			return true
		}
	}
	return false
}

type hookOutcome struct {
	code           int
	stdout, stderr string
	timedOut       bool
	timeout        time.Duration
	err            error
}

func (h *Hooks) runOne(ctx context.Context, hk config.Hook, event, session string, stdin []byte) hookOutcome {
	timeout := hk.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	out := hookOutcome{timeout: timeout}
	if h.opts.Check != nil {
		if err := h.opts.Check(event, hk); err != nil {
			out.err = err
			return out
		}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// CLAUDE_PROJECT_DIR too, so hooks written for Claude Code (plugins')
	// find the project as they expect.
	env := append([]string{"ODIN_PROJECT_DIR=" + h.opts.Root, "CLAUDE_PROJECT_DIR=" + h.opts.Root,
		"ODIN_SESSION_ID=" + session, "ODIN_HOOK_EVENT=" + event}, h.opts.Env...)
	if hk.PluginRoot != "" {
		env = append(env, "CLAUDE_PLUGIN_ROOT="+hk.PluginRoot)
	}
	proc, err := h.opts.Launcher.Command(cctx, sandbox.Spec{Args: []string{h.opts.Shell, "-c", hk.Command}, Dir: h.opts.Root,
		Env: env, Write: true, Agent: "hooks", Visible: h.opts.Visible})
	if err != nil {
		out.err = err
		return out
	}
	defer proc.Release()
	cmd := proc.Cmd
	cmd.Stdin = bytes.NewReader(stdin)
	stdout, stderr := &cappedBuffer{max: maxHookOutput}, &cappedBuffer{max: maxHookOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Grandchildren holding the pipes open must not hold the hook up once
	// the sandbox is killed.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	out.stdout, out.stderr = stdout.String(), stderr.String()
	if cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		out.timedOut = true
		return out
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		out.code = exitErr.ExitCode()
	default:
		out.err = err
	}
	return out
}

// cappedBuffer keeps the first max bytes written and counts the rest.
type cappedBuffer struct {
	buf     bytes.Buffer
	max     int
	dropped int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room >= len(p) {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += len(p) - max(room, 0)
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	if c.dropped == 0 {
		return c.buf.String()
	}
	return fmt.Sprintf("%s\n… %d bytes truncated", c.buf.String(), c.dropped)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}
