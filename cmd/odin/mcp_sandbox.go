package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// mcpWritable is what a stdio MCP server may write besides the project's
// private cache: the directories mcp.servers.NAME.writable grants, which
// only the user's own config may do and only for a server no project file
// touches (a project that could name the command of a server with a grant
// would run its own program with the user's write access), plus the
// server's data directory. env are the variables pointing the server at
// its data directory (the server's own env wins over them).
func (a *app) mcpWritable(server string, argv []string) (dirs, env []string, err error) {
	cfg := a.cfg.MCP.Servers[server]
	if len(cfg.Writable) > 0 {
		key := "mcp.servers." + server + ".writable"
		origin := a.src.Origin(key)
		userFile := a.src.UserFile
		if userFile == "" {
			userFile = filepath.Join(a.userDir, config.FileName)
		}
		switch {
		case a.editorMCP[server]:
			return nil, nil, fmt.Errorf("%s: an editor's server cannot be granted directories; declare the server in %s", key, userFile)
		case isProjectLabel(origin):
			file := filepath.Join(a.root, origin)
			if origin == config.FileName && a.src.ProjectFile != "" {
				file = a.src.ProjectFile
			}
			return nil, nil, fmt.Errorf("%s is set in %s, a project's config: a project cannot let an MCP server write outside the sandbox; move the key to %s", key, file, userFile)
		case origin == "":
			return nil, nil, fmt.Errorf("%s comes from a plugin: only %s can let an MCP server write", key, userFile)
		case serverIsProject(server, a.src, a.plugins, a.editorMCP):
			return nil, nil, fmt.Errorf("%s: the project's config also sets keys of the server %q, and a directory is granted only to a server wholly from %s", key, server, userFile)
		}
		for _, d := range cfg.Writable {
			fi, err := os.Stat(d)
			if err != nil || !fi.IsDir() {
				return nil, nil, fmt.Errorf("%s: %s is not a directory (create it, or fix the key in %s)", key, d, origin)
			}
			dirs = append(dirs, d)
		}
	}
	data := a.mcpDataDir(server)
	if data == "" {
		return dirs, nil, nil
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, nil, fmt.Errorf("data directory: %w", err)
	}
	return append(dirs, data), mcp.DataEnv(argv, data), nil
}

// mcpDataDir is where a stdio server keeps what it persists, under Odin's
// state directory: one per server of the user's, and one per project for
// a project's server, so that a project naming its server like the user's
// never reads the user's server's data.
func (a *app) mcpDataDir(server string) string {
	if a.stateDir == "" {
		return ""
	}
	if serverIsProject(server, a.src, a.plugins, a.editorMCP) {
		sum := sha256.Sum256([]byte(a.root))
		return filepath.Join(a.stateDir, "mcp-data", "projects", filepath.Base(a.root)+"-"+hex.EncodeToString(sum[:6]), server)
	}
	return filepath.Join(a.stateDir, "mcp-data", "user", server)
}

// mcpVisible are the paths of a stdio server's program that the sandbox
// must keep readable although they lie under the private /tmp: the program
// and every argument naming an existing path there. For a path below a
// directory of /tmp the whole top directory is kept (a script's
// node_modules, a virtualenv's lib), for a file directly in /tmp the file.
func mcpVisible(argv []string, dir string) []string {
	tmp := "/tmp"
	var out []string
	add := func(p string) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		for _, c := range []string{filepath.Clean(p), realPath(p)} {
			if c == "" || !strings.HasPrefix(c, tmp+"/") {
				continue
			}
			if _, err := os.Stat(c); err != nil {
				continue
			}
			top := c
			if rel, _ := filepath.Rel(tmp, c); strings.Contains(rel, "/") {
				top = filepath.Join(tmp, strings.SplitN(rel, "/", 2)[0])
			}
			if !slices.Contains(out, top) {
				out = append(out, top)
			}
		}
	}
	for i, a := range argv {
		// Flags with a value (--config=/tmp/x.json) name it after "=".
		if _, v, ok := strings.Cut(a, "="); ok && i > 0 && strings.HasPrefix(a, "-") {
			a = v
		}
		if i == 0 || strings.HasPrefix(a, "/") || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
			add(a)
		}
	}
	return out
}

func realPath(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

func (a *app) rememberMCPSpec(server string, spec sandbox.Spec) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mcpSpecs == nil {
		a.mcpSpecs = map[string]sandbox.Spec{}
	}
	a.mcpSpecs[server] = spec
}

// mcpExplain is mcp.Options.Explain: the first path a server's errors
// name that the sandbox hid or kept read-only, said in one sentence with
// the setting that would let it through.
func (a *app) mcpExplain(server string, problems []mcp.PathProblem) string {
	a.mu.Lock()
	spec, ok := a.mcpSpecs[server]
	a.mu.Unlock()
	if !ok {
		return "" // not launched by Odin's sandbox (http, or a test's transport)
	}
	userFile := a.src.UserFile
	if userFile == "" {
		userFile = filepath.Join(a.userDir, config.FileName)
	}
	key := "mcp.servers." + server + ".writable"
	grant := fmt.Sprintf("add %%s to %s in %s", key, userFile)
	if serverIsProject(server, a.src, a.plugins, a.editorMCP) {
		grant = fmt.Sprintf("declare the server in %s and add %%s to %s there (a project's server is granted nothing)", userFile, key)
	}
	l := a.sandbox()
	for _, p := range problems {
		b, blocked := l.Explain(p.Path, p.Write, spec)
		if !blocked {
			continue
		}
		dir := existingDir(p.Path)
		switch {
		case b.DenyRule != "":
			return fmt.Sprintf("the sandbox hid %s from the server: the read deny list's rule %q (permissions.deny_read) covers it", p.Path, b.DenyRule)
		case b.Hidden:
			return fmt.Sprintf("the sandbox hid %s from the server (%s); move it out of there, or %s", p.Path, b.Why, fmt.Sprintf(grant, dir))
		case b.ReadOnly && strings.HasPrefix(b.Why, "Odin protects"):
			return fmt.Sprintf("the sandbox keeps %s read-only for the server: %s, for every program it runs", p.Path, b.Why)
		case b.ReadOnly:
			return fmt.Sprintf("the sandbox keeps %s read-only for the server (%s); to let it write there, %s", p.Path, b.Why, fmt.Sprintf(grant, dir))
		}
	}
	return ""
}

// existingDir is p when it is a directory, else its nearest existing
// parent directory.
func existingDir(p string) string {
	for d := p; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		if d == filepath.Dir(d) {
			return d
		}
	}
}

// mcpNotice tells the user about an MCP server on the bus of the session
// being listened to, or once one listens (mcpListening).
func (a *app) mcpNotice(level, text string) {
	a.mu.Lock()
	bus := a.mcpBus
	if bus == nil {
		a.mcpPending = append(a.mcpPending, text)
	}
	a.mu.Unlock()
	bus.Publish(messages.Notice{Level: level, Text: text})
}

// reportSlowMCP says which servers the session starts without (still
// connecting after mcp.connect_timeout, as a first `npx -y` that installs
// its package is on a busy machine), and says again when each is ready:
// its tools are in the next model request from then on.
func (a *app) reportSlowMCP(m *mcp.Manager) {
	for _, name := range m.Starting() {
		a.mcpNotice("warn", fmt.Sprintf("MCP server %s is still starting after %s (mcp.connect_timeout); its tools will join the session when it is ready", name, a.cfg.MCP.ConnectTimeout))
		go func() {
			n, err := m.AwaitReady(context.Background(), name)
			if err != nil {
				return // a failure is reported by the manager itself
			}
			a.mcpNotice("info", fmt.Sprintf("MCP server %s is ready; its %d tools joined the session", name, n))
		}()
	}
}

// mcpTool starts the MCP server that offers name (mcp__SERVER__TOOL), in
// its sandbox as a session would, and returns the tool decorated as the
// session's are (hooks, permission): what `odin tool` runs.
func (a *app) mcpTool(ctx context.Context, deps *actors.Deps, name string) (tool.Tool, error) {
	m := a.mcpManager()
	server, ok := m.ServerOf(name)
	if !ok {
		return nil, usageError("no MCP server offers %q: the middle of the name must be a server of mcp.servers (odin mcp list shows them)", name)
	}
	cctx, cancel := context.WithTimeout(ctx, a.mcpConnectTimeout())
	defer cancel()
	if err := m.Connect(cctx, server); err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	for _, t := range deps.MCP() {
		if t.Info().Name == name {
			return t, nil
		}
	}
	var names []string
	for _, st := range m.Status() {
		if st.Name == server {
			names = st.Tools
		}
	}
	return nil, usageError("the MCP server %s has no tool %q (it offers: %s)", server, name, strings.Join(names, ", "))
}

// mcpConnectTimeout bounds starting one server for a command that needs
// it now (odin tool): a first npx start may install its package first.
func (a *app) mcpConnectTimeout() time.Duration {
	return max(a.cfg.MCP.ConnectTimeout, 2*time.Minute)
}

// mcpElicit answers an MCP server's request for input (elicitation):
// the session's front end asks the user when it can show a form (the
// terminal REPL, odin serve); otherwise (odin run, line mode, ACP) the
// request is declined and the user told which server asked what, and why.
func (a *app) mcpElicit(ctx context.Context, e mcp.Elicitation) (*sdkmcp.ElicitResult, error) {
	a.mu.Lock()
	el, why := a.elicitor, a.elicitNoWhy
	a.mu.Unlock()
	if el != nil {
		return el.Elicit(ctx, e)
	}
	if e.Publish == nil {
		e.Publish = func(ev any) {
			if n, ok := ev.(messages.Notice); ok {
				a.mcpNotice(n.Level, n.Text)
			}
		}
	}
	if why == "" {
		why = "this run is headless (odin run, odin tool or line mode): nobody can answer it"
	}
	mcp.DeclineNotice(e, why)
	return &sdkmcp.ElicitResult{Action: mcp.ActionDecline}, nil
}

// mcpSample answers an MCP server's request to use the model (sampling):
// refused outside a tool call (no agent to charge) and when
// mcp.servers.NAME.sampling is deny; otherwise, unless the user's own
// config says allow for a server wholly the user's, the session's approver
// is asked (the REPL and serve show the server and its prompt; headless
// runs decline unless --yolo). The small model answers through the
// calling agent's metered handle, so the tokens count against that
// agent's budgets and cost.
func (a *app) mcpSample(ctx context.Context, s mcp.Sampling) (string, string, error) {
	if s.Env == nil || s.Env.Small == nil {
		return "", "", fmt.Errorf("%w: it came outside a tool call, with no agent to charge", mcp.ErrSamplingRefused)
	}
	setting := a.cfg.MCP.Servers[s.Server].Sampling
	if setting == "allow" && serverIsProject(s.Server, a.src, a.plugins, a.editorMCP) {
		setting = "ask" // a project cannot spend the user's tokens unasked
	}
	switch setting {
	case "deny":
		return "", "", fmt.Errorf("%w: mcp.servers.%s.sampling is deny", mcp.ErrSamplingRefused, s.Server)
	case "allow":
	default:
		a.mu.Lock()
		ap := a.sampleApprover
		a.mu.Unlock()
		if ap == nil {
			ap = policy.NewMemory(a.headlessApprover())
		}
		key := "mcp-sampling:" + s.Server
		prompt := s.Prompt
		if s.System != "" {
			prompt = "[system] " + s.System + "\n" + prompt
		}
		if r := []rune(prompt); len(r) > 600 {
			prompt = string(r[:600]) + "…"
		}
		d, err := ap.Approve(ctx, policy.Request{Kind: policy.KindMCP, Tool: "mcp__" + s.Server + "__sampling",
			Subject: "MCP server " + s.Server + " asks the model: " + prompt,
			Origin:  messages.Origin{Agent: s.Env.Agent, TaskID: s.Env.AgentID},
			Findings: []policy.Finding{{Action: policy.Ask, Rule: "mcp-sampling", Subject: s.Server, Key: key,
				Reason: fmt.Sprintf("the MCP server %s asks to use the model (sampling); set mcp.servers.%s.sampling: allow in your user config to stop asking", s.Server, s.Server)}}})
		if err != nil {
			return "", "", err
		}
		if d != policy.AllowOnce && d != policy.AllowSession {
			return "", "", fmt.Errorf("%w: not approved", mcp.ErrSamplingRefused)
		}
	}
	model := a.cfg.Models.Small
	if ref, err := a.cfg.ResolveModel("small"); err == nil {
		model = ref.ID
	}
	text, err := s.Env.Small.Complete(ctx, s.System, s.Prompt)
	return text, model, err
}
