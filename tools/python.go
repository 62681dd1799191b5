package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed python.md
var pythonDescription string

// PythonInput is the Python tool's input. The policy decides "code" as it
// decides running python3.
type PythonInput struct {
	Code        string `json:"code,omitempty" jsonschema:"Python 3 code to run in the persistent interpreter; the value of a trailing expression is returned"`
	Restart     bool   `json:"restart,omitempty" jsonschema:"Start a fresh interpreter first (all variables are lost)"`
	Timeout     int    `json:"timeout,omitempty" jsonschema:"Timeout in ms"`
	Description string `json:"description,omitempty" jsonschema:"What it does, in 5-10 words, for the user"`
}

// PythonOutcome is the Python tool's Result.Meta.
type PythonOutcome struct {
	// Value is repr() of the trailing expression's value, "" when there is
	// none or it is None.
	Value string
	// Exception is the formatted traceback of an exception the code raised.
	Exception string
	TimedOut  bool
	Restarted bool
	// Output is what the code printed (stdout and stderr).
	Output string
}

// pythonDriver runs in python3 -c. It takes the request pipe off fd 0 (so
// input() reads /dev/null, never a request) and the control pipe off fd 2
// (stderr then goes where stdout goes), and runs each request's code in
// one namespace: a trailing expression is evaluated and its repr
// returned. A timeout raises TimeoutError in the code through SIGALRM;
// the interpreter survives it.
const pythonDriver = `
import ast, json, os, signal, sys, traceback
_req = os.fdopen(os.dup(0), "rb", buffering=0)
_ctl = os.fdopen(os.dup(2), "w")
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.dup2(1, 2)
sys.stdin = open(os.devnull)
sys.stderr = sys.stdout
class _OdinTimeout(BaseException):
    pass
def _alarm(signum, frame):
    raise _OdinTimeout()
signal.signal(signal.SIGALRM, _alarm)
_ns = {"__name__": "__main__"}
def _line():
    b = bytearray()
    while True:
        c = _req.read(1)
        if not c:
            return None
        if c == b"\n":
            return bytes(b)
        b += c
while True:
    raw = _line()
    if raw is None:
        break
    r = json.loads(raw)
    res = {"value": "", "exception": "", "timeout": False}
    try:
        signal.setitimer(signal.ITIMER_REAL, r["timeout"])
        try:
            tree = ast.parse(r["code"], "<snippet>", "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, "<snippet>", "exec"), _ns)
            if last is not None:
                v = eval(compile(last, "<snippet>", "eval"), _ns)
                if v is not None:
                    res["value"] = repr(v)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _OdinTimeout:
        res["timeout"] = True
        res["exception"] = "".join(traceback.format_exc(limit=-3))
        _ctl.write("\x01%s timeout \x00" % r["nonce"])
        _ctl.flush()
    except SystemExit as e:
        res["exception"] = "SystemExit(%r) (the interpreter keeps running)" % (e.code,)
    except BaseException:
        et, ev, tb = sys.exc_info()
        res["exception"] = "".join(traceback.format_exception(et, ev, tb.tb_next if tb else None))
    try:
        sys.stdout.flush()
    except Exception:
        pass
    os.write(1, ("\n%s\n" % r["nonce"]).encode())
    _ctl.write("\x01%s done %s\x00" % (r["nonce"], json.dumps(res)))
    _ctl.flush()
`

type pythonTool struct {
	opts   ExecuteCommandOptions
	pool   *sessionPool
	warned atomic.Bool
}

// NewPython returns the Python tool: a python3 interpreter per agent run,
// launched like ShellSession's shell (same sandbox, environment and
// limits), whose variables, imports and definitions persist across calls.
func NewPython(opts ExecuteCommandOptions, sessions *Sessions) tool.Tool {
	opts = opts.withDefaults()
	if sessions == nil {
		sessions = NewSessions()
	}
	sessions.init()
	x := &pythonTool{opts: opts, pool: sessions.pythons}
	schema := tool.WithSchema(func(s *jsonschema.Schema) {
		setMinimum(s, "timeout", 0)
		s.Properties["timeout"].Description = fmt.Sprintf("Milliseconds (default %d, max %d)",
			opts.DefaultTimeout.Milliseconds(), opts.MaxTimeout.Milliseconds())
	})
	if def := (ExecuteCommandOptions{}).withDefaults(); opts.DefaultTimeout != def.DefaultTimeout || opts.MaxTimeout != def.MaxTimeout {
		return tool.New[PythonInput](NamePython, tool.ClassExecute, pythonDescription, x.run, schema)
	}
	return newBuiltin[PythonInput](NamePython, tool.ClassExecute, pythonDescription, x.run, schema)
}

func (x *pythonTool) run(ctx context.Context, env *tool.Env, in PythonInput) (tool.Result, error) {
	if env == nil || env.Root == "" {
		return tool.Result{}, fmt.Errorf("tools: %s: env has no project root", NamePython)
	}
	if strings.TrimSpace(in.Code) == "" && !in.Restart {
		return tool.Errorf("code is empty; give the Python code to run"), nil
	}
	timeout, notes := callTimeout(x.opts, in.Timeout)
	st := x.opts.Launcher.Status()
	if st.Refuse {
		return tool.Errorf("code is refused because no sandbox is available: %s. Tell the user: install bubblewrap, or change permissions.sandbox (see `odin doctor`)", st), nil
	}
	if st.Degraded() && x.warned.CompareAndSwap(false, true) {
		notes = append(notes, "odin: code runs with a weaker sandbox: "+st.String())
		if env.Publish != nil {
			env.Publish(messages.Notice{Level: "warn", Text: "commands run with a weaker sandbox: " + st.String() + " (see `odin doctor`)"})
		}
	}
	key := runKey(env)
	write := writeMode(env.Mode) && !env.ReadOnlyCommands
	s := x.pool.get(key)
	var oc PythonOutcome
	switch {
	case s != nil && in.Restart:
		x.pool.drop(key, s)
		s = nil
	case s != nil && !s.alive():
		notes = append(notes, "the previous interpreter had exited; this is a new one: earlier variables are gone")
		x.pool.drop(key, s)
		s = nil
	case s != nil && s.write != write:
		notes = append(notes, fmt.Sprintf("the interpreter was restarted because the mode changed to %s: earlier variables are gone", env.Mode))
		x.pool.drop(key, s)
		s = nil
	}
	if s == nil {
		var err error
		s, err = startSession(x.opts.Launcher, sessionSpec{
			spec: sandbox.Spec{Args: []string{"python3", "-u", "-c", pythonDriver}, Dir: env.Root,
				Env: append(commandEnv(), x.opts.Env...), Write: write, Agent: env.Agent, LoopbackRelay: true},
		}, write)
		if err != nil {
			return tool.Errorf("cannot start python3: %v", err), nil
		}
		if err := x.pool.put(key, s, env.Done); err != nil {
			return tool.Errorf("cannot start python3: %v", err), nil
		}
		oc.Restarted = true
	}
	if strings.TrimSpace(in.Code) == "" {
		return tool.Result{Output: "started a fresh Python interpreter", Meta: oc}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	nonce := newNonce()
	req, err := json.Marshal(map[string]any{"nonce": nonce, "code": in.Code, "timeout": timeout.Seconds()})
	if err != nil {
		return tool.Result{}, err
	}
	grace := max(1, int(math.Ceil(x.opts.KillGrace.Seconds())))
	hard := timeout + time.Duration(grace)*time.Second + 5*time.Second
	ex, err := s.request(ctx, nonce, string(req)+"\n", nil, hard, x.opts.MaxOutput)
	oc.Output = ex.output
	var b strings.Builder
	lost := false
	var res struct {
		Value     string `json:"value"`
		Exception string `json:"exception"`
		Timeout   bool   `json:"timeout"`
	}
	switch {
	case ex.cancelled:
		b.WriteString("Cancelled; the interpreter was killed (the next call starts a fresh one).\n")
		lost = true
	case err != nil || !ex.ok:
		if s.alive() || err == nil {
			fmt.Fprintf(&b, "Timed out after %s and could not be interrupted; the interpreter was killed (the next call starts a fresh one).\n", timeout)
		} else {
			fmt.Fprintf(&b, "The interpreter exited%s (os._exit or a crash); its variables are gone (the next call starts a fresh one).\n", exitNote(s))
		}
		lost = true
	default:
		if jerr := json.Unmarshal([]byte(ex.payload), &res); jerr != nil {
			return tool.Result{}, fmt.Errorf("tools: Python: bad driver record: %w", jerr)
		}
		oc.Value, oc.Exception, oc.TimedOut = res.Value, res.Exception, res.Timeout
	}
	if oc.TimedOut {
		fmt.Fprintf(&b, "Timed out after %s; the code was interrupted (TimeoutError). The interpreter survives with its variables.\n", timeout)
	}
	if oc.Output != "" {
		b.WriteString(oc.Output)
		if !strings.HasSuffix(oc.Output, "\n") {
			b.WriteByte('\n')
		}
	}
	if oc.Exception != "" && !oc.TimedOut {
		b.WriteString("Exception:\n" + oc.Exception)
		if !strings.HasSuffix(oc.Exception, "\n") {
			b.WriteByte('\n')
		}
	}
	if oc.Value != "" {
		b.WriteString("Value: " + oc.Value + "\n")
	}
	if oc.Restarted && !lost {
		notes = append(notes, "started a new interpreter")
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "(%s)\n", n)
	}
	out := strings.TrimRight(b.String(), "\n")
	if out == "" {
		out = "(no output, no value)"
	}
	if lost {
		x.pool.drop(key, s)
	}
	return tool.Result{Output: out, IsError: lost || oc.Exception != "", Meta: oc}, nil
}
