package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/compat"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/helperproc"
	"github.com/odin-code/odin/internal/instructions"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/logging"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/models"
	"github.com/odin-code/odin/internal/plugin"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/qa"
	"github.com/odin-code/odin/internal/readdeny"
	"github.com/odin-code/odin/internal/repomap"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/internal/worktree"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// globalFlags are the flags every command shares.
type globalFlags struct {
	dir      string
	model    string
	small    string
	mode     string
	maxTurns int
	maxUSD   float64 // odin run's --max-budget-usd (budget.session.usd)
	allow    []string
	forbid   []string // --disallowedTools 'Bash(...)': permissions.forbidden_commands
	addDirs  []string
	// appendSystem is --append-system-prompt.
	appendSystem string
	// transport, when set, carries every model request (odin run
	// --record's recorder, odin replay's player); overrides are further
	// config keys set by a command (odin replay's provider address).
	transport http.RoundTripper
	overrides map[string]any
	yolo      bool
	logFile   string
	logLevel  string
	// store is `odin serve --store` (store.url), made absolute when a
	// relative file path.
	store string

	// trusting is set by `odin trust`, which must load a project whose
	// config is valid only with the settings that wait for trust.
	trusting bool
	// doctoring is set by `odin doctor`, which checks the rest of the
	// machine and project when the configuration does not load.
	doctoring bool

	// rates are the process's rate-limit buckets. They ride with the flags
	// because every app of the process (each session of `odin serve` loads
	// its own) is built from a copy of them: all draw from one quota.
	rates *llm.RateLimits

	// profile is --profile: a Codex profile's model and provider.
	profile string
	// configs, when set, keeps the projects' loaded configuration
	// between loads: a cluster worker loads the same projects for every
	// activation.
	configs *config.Cache
}

func (g *globalFlags) register(c *cobra.Command) {
	f := c.PersistentFlags()
	f.StringVarP(&g.dir, "dir", "C", "", "project directory (default: the current directory)")
	f.StringVarP(&g.model, "model", "m", "", "main model (models.main)")
	f.StringVar(&g.small, "small-model", "", "small model (models.small)")
	f.StringVar(&g.mode, "mode", "", "mode of the message: ask, plan or edit (default from config: edit)")
	f.IntVar(&g.maxTurns, "max-turns", 0, "maximum model calls of the Orchestrator per message (max_turns)")
	f.StringArrayVar(&g.allow, "allow", nil, "allow commands matching this pattern without asking, e.g. 'go test *' (repeatable)")
	f.StringArrayVar(&g.addDirs, "add-dir", nil, "let tools use this directory outside the project (repeatable)")
	f.BoolVar(&g.yolo, "yolo", false, "allow every command and path except forbidden commands and protected files (dangerous)")
	f.StringVar(&g.logFile, "log-file", "", "log file (log.file; default $XDG_STATE_HOME/odin/odin.log)")
	f.StringVar(&g.logLevel, "log-level", "", "log level: debug, info, warn, error (log.level)")
	f.StringVar(&g.profile, "profile", "", "use this profile of Codex's ~/.codex/config.toml (its model and provider)")
}

// flagOverrides maps the set flags to config keys (the highest layer).
func (g *globalFlags) flagOverrides() map[string]any {
	m := g.typedFlags()
	for k, v := range g.overrides {
		m[k] = v
	}
	return m
}

// typedFlags maps the config keys the user's flags set to the values
// given (configFlags names each key's flag).
func (g *globalFlags) typedFlags() map[string]any {
	m := map[string]any{}
	if g.model != "" {
		m["models.main"] = g.model
	}
	if g.small != "" {
		m["models.small"] = g.small
	}
	if g.mode != "" {
		m["mode"] = g.mode
	}
	if g.maxTurns != 0 {
		m["max_turns"] = g.maxTurns
	}
	if g.maxUSD > 0 {
		m["budget.session.usd"] = g.maxUSD
	}
	if g.logFile != "" {
		m["log.file"] = g.logFile
	}
	if g.logLevel != "" {
		m["log.level"] = g.logLevel
	}
	if g.store != "" {
		m["store.url"] = g.store
	}
	return m
}

// app is a loaded project: its root, configuration and log.
type app struct {
	flags *globalFlags
	// foreign is what other agents' files supplied (foreign.go).
	foreign  compat.Result
	root     string
	cfg      *config.Config
	src      *config.Sources
	env      config.EnvFunc
	stateDir string
	userDir  string
	dataDir  string // installed plugins (config.DataDir)
	log      zerolog.Logger
	closers  []io.Closer

	// taskScratch is set in the app of a remote specialist's task
	// (specialistDeps), whose root is a tree under the state directory:
	// the task's private directory, its commands' build cache.
	taskScratch string

	st     store.Store // opened on first use
	stores *storePool  // set by front ends serving many sessions: st is shared
	actors *actorPool  // set by front ends serving many sessions: one actor system
	// editor and editorMCP are what an editor (odin acp) brings: its
	// buffers for the file tools, and the names of the MCP servers it
	// declared, which are the user's own.
	editor    tool.Editor
	terminal  tools.CommandTerminal // the editor's terminals (odin acp), nil without
	editorMCP map[string]bool
	cat       *models.Catalog // parsed on first use (catalog)
	catOnce   sync.Once

	mu      sync.Mutex
	clients map[string]llm.Client
	roles   map[string]string // /model's choices for "main" and "small" (modelswitch.go)

	// trust is what the project supplies that waits for `odin trust`, and
	// whether the user trusted it; instr are the instruction files read.
	trust    projectTrust
	instr    instructions.Result
	warnings []string // shown with the untrusted notice: files not read, agent problems
	// configFail is why the configuration did not load, when `odin
	// doctor` went on with the sources that do (loadLeavingOut).
	configFail *configFailure

	launcherOnce sync.Once
	// probeLive makes the launcher probe bwrap itself, not believe a
	// recorded pass (odin doctor); set before the first sandbox().
	probeLive bool
	launcher  *sandbox.Launcher
	// worktreeMgr holds isolated specialists' worktrees (worktrees.go).
	worktreeOnce sync.Once
	worktreeMgr  *worktree.Manager
	// denyRead is the read deny list: the file tools, @ mentions, the
	// repo map and the sandbox all hide it.
	denyRead *readdeny.Rules

	// remote places specialists on other nodes (a session hosted on a
	// cluster: odin worker, serve --cluster); nil runs them here.
	remote actors.RemoteSpecialists

	// blobs are the workspace copies of command checkpoints (undowatch.go).
	blobsOnce sync.Once
	blobs     *checkpoint.Blobs

	repoMapsOnce sync.Once
	repoMapPool  *repomap.Pool
	repoMapCtx   context.Context // cancelled when the app closes

	browsersOnce sync.Once
	browserPool  *browser.Pool // WebBrowser's browsers (browser.go)
	// sessions are ShellSession's shells and Python's interpreters, one
	// set per app, killed when it closes.
	sessions tools.Sessions

	// plugins are the enabled plugins whose parts this app uses
	// (plugin.go); disabled ones are not here.
	plugins     []*plugin.Plugin
	pluginNotes []pluginNote // shown once by untrustedNotice

	mcp *mcp.Manager // built on first use; closed with the app
	// mcpBus is the bus of the session a frontend listens to (nil before
	// one subscribes); mcpPending are the server failures reported before
	// that, which would otherwise be published to nobody.
	mcpBus     *events.Bus
	mcpPending []string
	mcpSpecs   map[string]sandbox.Spec // each stdio server's last launch (mcpExplain)
	// elicitor asks the user MCP servers' questions (elicitation): set by
	// a session whose front end can show a form (the terminal REPL, odin
	// serve); nil declines each request with elicitNoWhy's reason.
	elicitor    *mcp.BusElicitor
	elicitNoWhy string
	// sampleApprover asks whether a server may use the model (sampling):
	// the newest session's approver behind a memory of "for this session".
	sampleApprover policy.Approver
}

// sandbox is the session's one launcher for child processes: commands,
// QA checks, hooks and git all start through it.
func (a *app) sandbox() *sandbox.Launcher {
	a.launcherOnce.Do(func() {
		perms := a.cfg.Permissions
		var secrets []string
		for _, p := range a.cfg.Providers {
			if p.APIKeyEnv != "" {
				secrets = append(secrets, p.APIKeyEnv)
			}
		}
		if a.cfg.Web.Search.APIKeyEnv != "" {
			secrets = append(secrets, a.cfg.Web.Search.APIKeyEnv)
		}
		var protected []string
		for _, d := range []string{a.userDir, a.stateDir, a.dataDir} {
			if d != "" {
				protected = append(protected, d)
			}
		}
		agentDomains, noNetwork, agentSockets := a.agentNetworks()
		cache := sandbox.CacheDirFor(a.stateDir, a.root)
		if a.taskScratch != "" {
			// A remote task's tree is made per commit: a cache per tree
			// would outlive it, and one shared by tasks would let one
			// plant build outputs another uses.
			cache = a.taskScratch
		}
		// A bwrap probe passed on this host is believed for a while
		// (sandbox.Options.ProbeRecord); doctor probes afresh.
		var probeRecord string
		if a.stateDir != "" && !a.probeLive {
			probeRecord = filepath.Join(a.stateDir, "sandbox-probe")
		}
		a.launcher = sandbox.New(sandbox.Options{
			Mode:         sandbox.Mode(perms.Sandbox),
			ProbeRecord:  probeRecord,
			Root:         a.root,
			AddDirs:      append(append([]string(nil), perms.AdditionalDirs...), a.flags.addDirs...),
			Protected:    protected,
			CacheDir:     cache,
			PassEnv:      perms.Env,
			SecretEnv:    secrets,
			Domains:      perms.Network.AllowedDomains,
			AgentDomains: agentDomains,
			NoNetwork:    noNetwork,
			// Sockets the user allowed (a project's wait for trust).
			AllowUnixSockets: perms.Network.AllowUnixSockets,
			AgentUnixSockets: agentSockets,
			DenyRead:         a.denyRead,
			Limits:           sandboxLimits(perms.SandboxLimits),
		})
		// The probe (bwrap run once in new namespaces) costs a fork and
		// an exec, 5–8 ms: it runs beside start-up, and the first
		// child process waits for it.
		launcher, log := a.launcher, a.log
		go func() { log.Info().Str("sandbox", launcher.Status().String()).Msg("sandbox") }()
	})
	return a.launcher
}

// skillDirs are where skills are found: the project's .odin/skills, then
// the user's config dir's skills.
func (a *app) skillDirs() []string {
	dirs := []string{filepath.Join(a.root, ".odin", "skills"), filepath.Join(a.root, ".claude", "skills")}
	if a.userDir != "" {
		dirs = append(dirs, filepath.Join(a.userDir, "skills"))
	}
	if home, ok := a.env("HOME"); ok && home != "" {
		dirs = append(dirs, filepath.Join(home, ".claude", "skills"))
	}
	return dirs
}

// userAgentDirs are the user's own agent folders, Odin's first, then
// Claude Code's and opencode's: agents for every project, shadowed by a
// project's own.
func (a *app) userAgentDirs() []string {
	var dirs []string
	if a.userDir != "" {
		dirs = append(dirs, filepath.Join(a.userDir, "agents"))
	}
	return append(dirs, a.foreignUserDirs("agents")...)
}

// rosterOptions are the options the roster is loaded with: odin.yaml's
// agents and the agent files, trust included.
func (a *app) rosterOptions() actors.RosterOptions {
	cfgFile := "odin.yaml"
	if a.src != nil && a.src.ProjectFile != "" {
		cfgFile = a.src.ProjectFile
	}
	return actors.RosterOptions{Config: a.cfg, ConfigFile: cfgFile, ConfigDir: a.root,
		AgentDirs: a.agentDirs(), UserAgentDirs: a.userAgentDirs(), Untrusted: !a.trust.trusted, Locate: a.configLocator()}
}

// agentNetworks resolves each agent's network: permissions.network.agents
// plus the sandbox profile of its definition (odin.yaml agents or an agent
// file, read as the roster reads them, trust included), and the unix
// sockets the profile allows. A roster that does not load is reported by
// buildDeps; its profiles are left out here.
func (a *app) agentNetworks() (map[string][]string, map[string]bool, map[string][]string) {
	domains := a.cfg.Permissions.Network.AgentDomains()
	off := map[string]bool{}
	sockets := map[string][]string{}
	roster, err := actors.LoadRoster(a.rosterOptions())
	if err != nil {
		return domains, off, sockets
	}
	for _, def := range roster.Agents() {
		domains[def.Name] = append(domains[def.Name], def.Sandbox.AllowedDomains...)
		if def.Sandbox.Network == "off" {
			off[def.Name] = true
		}
		if len(def.Sandbox.AllowUnixSockets) > 0 {
			sockets[def.Name] = def.Sandbox.AllowUnixSockets
		}
	}
	return domains, off, sockets
}

// loadApp finds the project root and loads the configuration. Errors are
// usage errors (exit 2) that name the file and key.
func loadApp(g *globalFlags) (*app, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	dir := g.dir
	if dir == "" {
		dir = wd
	}
	root, err := workspace.Resolve(wd, dir)
	if err != nil {
		return nil, usageError("project directory %s: %v", dir, err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usageError("project directory %s does not exist", dir)
		}
		return nil, usageError("project directory %s is not a directory", dir)
	}
	if err := checkAddDirs(root, g.addDirs); err != nil {
		return nil, err
	}
	env := config.EnvFunc(os.LookupEnv)
	userDir := config.UserDir(env)
	opts := config.LoadOptions{Root: root, UserDir: userDir, LookupEnv: env, Environ: os.Environ, Flags: g.flagOverrides()}
	store := policy.NewTrustStore(config.StateDir(env), nil)
	foreign, err := readForeign(&opts, g, root, env)
	if err != nil {
		return nil, err
	}
	cfg, src, err := loadConfig(g.configs, &opts, &foreign)
	var configFail *configFailure
	if err != nil && g.doctoring {
		cfg, src, configFail, err = loadLeavingOut(g.configs, &opts, &foreign, err)
		configFail = g.flagFailure(configFail)
	}
	if err != nil {
		return nil, g.configError(err)
	}
	home, _ := env("HOME")
	// An instruction file that cannot be read must not stop the user's
	// work: the run goes on without instructions and says why.
	instr, instrErr := instructions.Load(instructions.Options{Root: root, UserDir: userDir, Home: home})
	// One rule for everything the project supplies: what can run code,
	// send data, change the endpoint or a mode, or replace a built-in
	// agent waits for trust, fingerprinted together.
	dataDir := config.DataDir(env)
	plugins, pluginProblems := plugin.Discover(dataDir, plugin.ProjectDirs(root))
	pt := collectTrust(root, src, instr, plugins)
	pt.addForeign(root, foreign)
	pt.trusted = len(pt.items) == 0 || store.Trusted(root, pt.fingerprint)
	// What the project's servers and hooks execute is pinned from the
	// configuration with its settings, trusted or not: `odin trust`
	// records it, a trusted session compares (enforcePins).
	pt.entries = projectEntries(root, cfg, src, plugins, newSecretGuard(cfg, env, func(server string) bool {
		return serverIsProject(server, src, plugins, nil)
	}))
	pt.stored, pt.pinned = store.Pinned(root)
	if prev, ok := store.Previous(root); ok && !pt.trusted {
		pt.previous = append([]string{}, prev...)
	}
	if !pt.trusted {
		opts.IgnoreProjectWidening = true
		ucfg, usrc, err := loadConfig(g.configs, &opts, &foreign)
		switch {
		case err == nil:
			cfg, src = ucfg, usrc
		case !g.trusting:
			return nil, &exitError{code: exitUsage, err: err}
		default:
			// `odin trust` runs nothing, so a project whose config only
			// validates with its untrusted settings can still be trusted;
			// it must not write where that config says, though.
			cfg.Log.File, cfg.Store.Path = "", ""
		}
	}
	a := &app{flags: g, root: root, cfg: cfg, src: src, env: env, userDir: userDir,
		stateDir: config.StateDir(env), dataDir: dataDir, clients: map[string]llm.Client{}, trust: pt, instr: instr,
		configFail: configFail}
	if a.denyRead, err = newDenyRead(home, root, []string{a.stateDir, userDir, dataDir}, cfg.Store.Path, cfg.Permissions); err != nil {
		if !g.doctoring {
			return nil, &exitError{code: exitUsage, err: err}
		}
		// doctor reports the bad pattern and checks the rest with the
		// built-in deny list.
		a.configFail = a.configFail.add(err, "permissions.deny_read")
		perms := cfg.Permissions
		perms.DenyRead, perms.ProjectDenyRead = nil, nil
		if a.denyRead, err = newDenyRead(home, root, []string{a.stateDir, userDir, dataDir}, cfg.Store.Path, perms); err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
	}
	if a.stateDir != "" {
		// Transcripts, log and history live here: owner-only. Failing is
		// not fatal (the store reports a real problem when it opens).
		_ = fsutil.PrivateDir(a.stateDir)
	}
	if instrErr != nil {
		a.warn(instrErr.Error())
	}
	for _, sk := range instr.Skipped {
		a.warn(sk.String())
	}
	for _, p := range pluginProblems {
		a.warn(p)
	}
	a.applyForeign(foreign)
	a.usePlugins(plugins)
	a.enforcePins()
	a.guardProjectServers()
	logPath := cfg.Log.File
	if logPath == "" && a.stateDir != "" {
		logPath = filepath.Join(a.stateDir, "odin.log")
	}
	log, closer, err := logging.Open(logPath, cfg.Log.Level)
	if err != nil {
		// A log that cannot be opened must not stop the user's work.
		log = zerolog.Nop()
	} else {
		a.closers = append(a.closers, closer)
	}
	a.log = log
	return a, nil
}

func (a *app) Close() {
	a.sessions.Close()
	for i := len(a.closers) - 1; i >= 0; i-- {
		_ = a.closers[i].Close()
	}
}

// untrustedNotice says, once, what the untrusted project supplies that Odin
// ignores (with the values), how to trust it, and which files it did not
// read; "" when there is nothing to say.
func (a *app) untrustedNotice() string {
	var b strings.Builder
	if !a.trust.trusted {
		if a.trust.previous == nil {
			b.WriteString("this project is not trusted, so Odin ignores what it would run, where it would send data and what it would replace:")
		} else {
			b.WriteString("this project changed since you trusted it, so Odin ignores what it would run, where it would send data and what it would replace:")
		}
		for _, it := range a.trust.items {
			line := it.String()
			if a.trust.previous != nil && !slices.Contains(a.trust.previous, line) {
				line += "  [new or changed]"
			}
			b.WriteString("\n  " + line)
		}
		b.WriteString("\nRun `odin trust` to honour them.")
	}
	for _, w := range append(slices.Clone(a.warnings), a.takePluginNotes()...) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(config.Printable(w))
	}
	a.foreignNotesSaid()
	return b.String()
}

// warn records a warning for the notice, once.
func (a *app) warn(w string) {
	if !slices.Contains(a.warnings, w) {
		a.warnings = append(a.warnings, w)
	}
}

// model resolves a model and its client; clients are shared per provider.
func (a *app) model(name string) (actors.Model, error) {
	ref, err := a.cfg.ResolveModel(a.roleModel(name))
	if err != nil {
		return actors.Model{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.clients[ref.ProviderName]
	if !ok {
		p := ref.Provider
		var hc *http.Client // nil: the process's shared pool
		if a.flags.transport != nil {
			hc = &http.Client{Transport: a.flags.transport}
		}
		c = llm.NewOpenAI(llm.OpenAIOptions{BaseURL: p.BaseURL, APIKey: p.APIKey, Timeout: p.Timeout,
			IdleTimeout: p.IdleTimeout, IdleConnTimeout: p.IdleConnTimeout, Budget: p.Budget, Provider: ref.ProviderName, KeyEnv: p.APIKeyEnv,
			MaxRetries: p.MaxRetries, Headers: p.Headers, Limiter: a.limiter(ref), HTTPClient: hc})
		a.clients[ref.ProviderName] = c
	}
	m := actors.Model{Client: c, ID: ref.ID, ContextWindow: ref.ContextWindow, MaxOutput: ref.MaxOutput, Price: ref.Price}
	a.applyCatalog(&m, ref)
	return m, nil
}

// limiter is the shared quota of ref's provider: one bucket per provider
// name and endpoint in the process, and one per model of model_info with
// a rate_limit of its own.
func (a *app) limiter(ref config.ModelRef) *llm.Limiter {
	rates := a.flags.rates
	if rates == nil {
		rates = llm.NewRateLimits()
		a.flags.rates = rates
	}
	key := ref.ProviderName + " " + ref.Provider.BaseURL
	models := map[string]*llm.Bucket{}
	for id, info := range a.cfg.ModelInfo {
		prov := info.Provider
		if prov == "" {
			prov = a.cfg.Provider
		}
		if prov == ref.ProviderName && !info.RateLimit.IsZero() {
			models[id] = rates.Bucket(key+" "+strings.ToLower(id), llm.RateLimit(info.RateLimit))
		}
	}
	return llm.NewLimiter(rates.Bucket(key, llm.RateLimit(ref.Provider.RateLimit)), models)
}

// checkProvider fails early, with the message that says what to set, when
// no model can be reached.
func (a *app) checkProvider() error {
	if _, err := a.cfg.ResolveModel("main"); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	return nil
}

// smallModel adapts the small model to tools.SmallModel.
type smallModel struct {
	a *app
}

func (s smallModel) Complete(ctx context.Context, system, user string) (string, error) {
	text, _, _, err := s.CompleteWithUsage(ctx, system, user)
	return text, err
}

// CompleteWithUsage also says what the call cost, so that the agent whose
// tool used the small model is charged for it.
func (s smallModel) CompleteWithUsage(ctx context.Context, system, user string) (string, messages.Usage, string, error) {
	m, err := s.a.model("small")
	if err != nil {
		return "", messages.Usage{}, "", err
	}
	resp, err := m.Client.Stream(ctx, llm.Request{Model: m.ID, Agent: "small", MaxTokens: m.MaxOutput,
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}}}, nil)
	if err != nil {
		return "", messages.Usage{}, m.ID, err
	}
	return resp.Text, m.Usage(resp.Usage, resp.UsageReported), m.ID, nil
}

// approver is how a session asks for permission: headless runs never
// wait (--yolo widens them), the REPL asks the user through the bus.
func (a *app) headlessApprover() policy.Approver { return policy.Headless{Yolo: a.flags.yolo} }

// permissionHook lets a test put a failing check in front of the session's
// policy (serve's panic test); it returns p unchanged otherwise.
var permissionHook = func(p tool.Permission) tool.Permission { return p }

// buildDeps wires the actors' dependencies: the tools with the session's
// permission policy and hooks, the roster, instructions and checkpoints.
func (a *app) buildDeps(bus *events.Bus, approver policy.Approver) (*actors.Deps, error) {
	var protected []string
	if a.userDir != "" {
		protected = append(protected, a.userDir)
	}
	// A remote task's tree lies in the state directory: protecting all
	// of it would refuse every write of the task's isolated writer,
	// whose project copy is that tree. The guard still refuses writes
	// outside the tree (a task has no additional directories), and the
	// sandbox keeps the state directory read-only to commands.
	if a.stateDir != "" && !(a.taskScratch != "" && workspace.Within(a.stateDir, a.root)) {
		protected = append(protected, a.stateDir)
	}
	if a.dataDir != "" {
		protected = append(protected, a.dataDir)
	}
	perms := a.cfg.Permissions
	perms.AllowedCommands = append(append([]string(nil), perms.AllowedCommands...), a.flags.allow...)
	perms.AdditionalDirs = append(append([]string(nil), perms.AdditionalDirs...), a.flags.addDirs...)
	perms.ForbiddenCommands = append(append([]string(nil), perms.ForbiddenCommands...), a.flags.forbid...)
	pol, err := policy.New(policy.Options{Root: a.root, Permissions: perms, Protected: protected, Approver: approver, TestFiles: a.cfg.Quality.TestFiles})
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	launcher := a.sandbox()
	go func() {
		// Never a silent downgrade, nor a silent "off": the user hears it
		// once per session, as soon as the probe (running beside the
		// first request) knows it; subscribers replay it.
		if st := launcher.Status(); st.Degraded() || st.Refuse || st.Kind == sandbox.KindNone {
			bus.Publish(messages.Notice{Level: "warn", Text: "sandbox: " + st.String() + " (see `odin doctor`)"})
		}
	}()
	hooks, err := policy.NewHooks(a.cfg.Hooks, policy.HooksOptions{Root: a.root, Launcher: launcher, Visible: a.pluginDirs(),
		Check: a.checkHookPins})
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	// Permission is outermost but for WithRecover: a denied call never
	// reaches hooks or the tool, and a panic in the check itself (a
	// command that crashes the shell parser's walk) fails that call alone.
	// A command's checkpoint brackets its hooks, whose changes undo
	// restores with the command's.
	set := a.baseTools().Map(tools.WithHooks(hooks), tools.WithCommandCheckpoint, tools.WithPermission(permissionHook(pol)), tools.WithRecover)
	mgr := a.mcpManager()
	mcpTools := func() []tool.Tool {
		return tools.NewSet(mgr.Tools()...).Map(tools.WithHooks(hooks), tools.WithPermission(permissionHook(pol)), tools.WithRecover).All()
	}
	cfgFile := "odin.yaml"
	if a.src.ProjectFile != "" {
		cfgFile = a.src.ProjectFile
	}
	roster, err := actors.LoadRoster(actors.RosterOptions{Config: a.cfg, ConfigFile: cfgFile, ConfigDir: a.root,
		AgentDirs: a.agentDirs(), UserAgentDirs: a.userAgentDirs(), ToolNames: set.Names(), Untrusted: !a.trust.trusted, SkillDirs: a.skillDirs(),
		Locate: a.configLocator()})
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	for _, w := range roster.Warnings() {
		a.warn(w)
	}
	instr := instructions.Join(a.instr.Sources)
	checks := &qa.Runner{Root: a.root, Quality: a.cfg.Quality, Instructions: instructions.Join(instructions.User(a.instr.Sources)),
		ProjectInstructions: a.trust.commandsText, ProjectTrusted: a.trust.trusted, Launcher: launcher}
	deps := &actors.Deps{
		Root: a.root, Config: a.cfg, Models: actors.ModelFunc(a.model), Tools: set, Roster: roster, Bus: bus,
		Guard:    func(agent, taskID string) tool.PathGuard { return pol.GuardFor(agent, taskID) },
		DenyRead: a.denyRead,
		MCP:      mcpTools,
		Small:    smallModel{a}, Instructions: instr, AppendSystem: a.flags.appendSystem, Changes: newChangeSets(a.root, nil, "", nil), Hooks: hooks,
		Checks: checks, Lint: checks, Coverage: checks,
		Log: a.log, NewID: newID, OS: runtime.GOOS + "/" + runtime.GOARCH, Remote: a.remote,
		Worktrees: a.worktrees(),
	}
	if b := a.browsers(); b != nil {
		deps.EndRun = b.End
	}
	return deps, nil
}

// repoMaps is the process's repo map pool, nil without a state directory.
// Parsed trees are cached per project under the state directory, so a new
// session maps an unchanged project without reparsing.
func (a *app) repoMaps() *repomap.Pool {
	a.repoMapsOnce.Do(func() {
		if a.stateDir == "" {
			return
		}
		a.repoMapPool = repomap.NewPool(repomap.Options{CacheDir: filepath.Join(a.stateDir, "repomap"), Launch: a.helperLaunch,
			Exclude: a.denyRead.Hides})
		ctx, cancel := context.WithCancel(context.Background())
		a.repoMapCtx = ctx
		// Closers run last to first: a prewarm still working is cancelled
		// before the pool waits for it.
		a.closers = append(a.closers, closerFunc(a.repoMapPool.Close), closerFunc(cancel))
	})
	return a.repoMapPool
}

// baseTools are the built-in tools before the session's decorators: web
// fetches are cached in the session store, and web search uses the backend
// configured in web.search, if any.
func (a *app) baseTools() tools.Set {
	opts := tools.BuiltinOptions{ExecuteCommand: tools.ExecuteCommandOptions{
		// Commands never run repository hooks or fsmonitor through git, and
		// a CDPATH cannot send cd elsewhere.
		Env:      append(policy.CommandGitEnv(), "CDPATH="),
		Launcher: a.sandbox(),
		// The editor's terminals, when it offers them: commands run there
		// handed off, in the same sandbox.
		Terminal: a.terminal,
	}}
	if a.stateDir != "" {
		opts.ExecuteCommand.HandoffDir = filepath.Join(a.stateDir, "handoff")
	}
	opts.RepoMaps = a.repoMaps()
	opts.Browsers = a.browsers()
	// ShellSession's shells and Python's interpreters die with the app
	// (and, after a kill -9, with their sandbox's parent).
	opts.Sessions = &a.sessions
	webOpts := []web.Option{web.WithVersion(versionString()), web.WithLaunch(a.helperLaunch)}
	var cache web.Cache = web.NewMemoryCache(0)
	if st, err := a.openStore(context.Background()); err == nil {
		cache = web.StoreCache{S: st}
		webOpts = append(webOpts, web.WithCache(cache))
	}
	if f, err := web.NewFetcher(a.cfg.Web, webOpts...); err != nil {
		a.log.Warn().Err(err).Msg("web fetch disabled")
	} else {
		opts.Fetcher = f
		a.closers = append(a.closers, closerFunc(f.Close))
	}
	if s := a.cfg.Web.Search; s.Kind != "" {
		key := ""
		if s.APIKeyEnv != "" {
			key, _ = a.env(s.APIKeyEnv)
		}
		searcher, err := web.NewSearcher(s, key, web.WithVersion(versionString()))
		if err != nil {
			a.log.Warn().Err(err).Msg("web search disabled")
		} else {
			// Search results are cached like pages, per the research TTLs.
			opts.Searcher = &web.CachedSearcher{Searcher: searcher, Cache: cache, TTL: a.cfg.Web.ResearchTTL}
		}
	}
	set := tools.Builtin(opts)
	if opts.Searcher == nil {
		// A model never sees a tool that cannot work.
		set = set.Filter(func(i tool.Info) bool { return i.Name != "WebSearch" })
	}
	return set
}

// closerFunc adapts a func() to io.Closer.
type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }

func newID() string { return uuid.NewString() }

// mcpManager returns the app's MCP manager, building it on first use from
// the trusted configuration (a project's servers are absent until `odin
// trust`). Nothing starts here: startMCP starts the servers of a session.
// A server that fails is reported once, as a notice on the bus of the
// session being listened to (see mcpListening).
func (a *app) mcpManager() *mcp.Manager {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mcp != nil {
		return a.mcp
	}
	cache, logs := "", ""
	if a.stateDir != "" {
		cache = filepath.Join(a.stateDir, "mcp-tools")
		logs = filepath.Join(a.stateDir, "mcp-logs")
	}
	a.mcp = mcp.New(mcp.Options{
		Servers: a.cfg.MCP.Servers, DenyTools: a.cfg.MCP.DenyTools, Dir: a.root, LookupEnv: a.env, CacheDir: cache, LogDir: logs,
		ServerLookup: a.secretGuard().lookup,
		Launch:       a.mcpLaunch,
		Roots:        a.mcpRoots(),
		Explain:      a.mcpExplain,
		Elicit:       a.mcpElicit,
		Sample:       a.mcpSample,
		LogLevel:     a.cfg.Log.Level,
		Auth:         a.mcpAuthStore(),
		Version:      versionString(), Log: a.log,
		Report: func(server string, err error) {
			a.log.Warn().Str("mcp_server", server).Err(err).Msg("mcp server failed")
			if errors.Is(err, mcp.ErrNeedsLogin) {
				a.mcpNotice("warn", fmt.Sprintf("MCP server %s %v; its tools are left out", server, err))
				return
			}
			a.mcpNotice("warn", fmt.Sprintf("MCP server %s failed to start (%v); its tools are unavailable", server, err))
		},
	})
	a.closers = append(a.closers, a.mcp)
	return a.mcp
}

// mcpAuthStore keeps MCP servers' OAuth tokens in the state directory's
// mcp-auth (hidden from every sandboxed process: newDenyRead).
func (a *app) mcpAuthStore() mcp.TokenStore {
	if a.stateDir == "" {
		return mcp.TokenStore{}
	}
	return mcp.TokenStore{Dir: filepath.Join(a.stateDir, mcpAuthDir)}
}

// mcpRoots are the directories MCP servers are offered as roots: the
// project root and the added directories (permissions.additional_dirs,
// --add-dir; relative ones against the root, as the path guard takes
// them).
func (a *app) mcpRoots() []string {
	dirs := []string{a.root}
	for _, d := range append(append([]string(nil), a.cfg.Permissions.AdditionalDirs...), a.flags.addDirs...) {
		if !filepath.IsAbs(d) {
			d = filepath.Join(a.root, d)
		}
		dirs = append(dirs, filepath.Clean(d))
	}
	return dirs
}

// mcpListening is called once a frontend has subscribed to bus: the MCP
// failures reported while the session started (startMCP waits for them,
// before anyone listens) are published now, and later ones as they come.
func (a *app) mcpListening(bus *events.Bus) {
	a.mu.Lock()
	a.mcpBus = bus
	pending := a.mcpPending
	a.mcpPending = nil
	a.mu.Unlock()
	for _, text := range pending {
		bus.Publish(messages.Notice{Level: "warn", Text: text})
	}
}

// mcpLaunch builds a stdio MCP server's command in the session's sandbox,
// as issue #16 asks: the root read-only (writable are only the project's
// private cache, the server's data directory and the directories the
// user's config grants it: mcpWritable), the host's network for the user's own servers (a program
// the user configured to talk to its service, not a model's command
// line) but only the proxied allowed domains for a server the project
// declared (mcpNetwork), the sandbox's filtered environment plus the
// server's declared env. A project server whose pinned files changed
// since `odin trust` does not start (checkServerPins). A
// declared variable that looks like a secret, or carries a provider key's
// value, is dropped unless the user's own config declares it for this
// server: a project (or .mcp.json) cannot route a key into a server.
// Where no sandbox works the server is refused, never run plainly.
func (a *app) mcpLaunch(ctx context.Context, server string, argv, env []string, dir string) (*exec.Cmd, func(), error) {
	decl := a.cfg.MCP.Servers[server].Env
	guard := a.secretGuard()
	var declared, keep []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		raw, ok := decl[k]
		if !ok {
			continue // PATH, HOME...: the sandbox passes its own
		}
		if guard.project(server) && len(guard.refused(config.MCPServer{Env: map[string]string{k: raw}})) > 0 {
			continue // a secret the project named: unset, not empty
		}
		declared = append(declared, kv)
		if a.editorMCP[server] {
			keep = append(keep, k)
			continue
		}
		switch a.src.Origin("mcp.servers." + server + ".env." + k) {
		case "", "default", config.FileName, config.ClaudeProjectFile:
		default:
			keep = append(keep, k)
		}
	}
	// Found here, a missing program is a clear error rather than a
	// handshake that ends in EOF when bwrap cannot exec it; and it must be
	// visible: bubblewrap's /tmp is private.
	prog := argv[0]
	if strings.Contains(prog, "/") && !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	var visible []string
	path, err := exec.LookPath(prog)
	if err == nil {
		if abs, err := filepath.Abs(path); err == nil {
			visible = append(visible, abs)
			if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
				visible = append(visible, real)
			}
		}
	} else if _, own := decl["PATH"]; !own {
		return nil, nil, err
	}
	visible = append(visible, mcpVisible(append([]string{prog}, argv[1:]...), dir)...)
	visible = append(visible, a.pluginDirs()...)
	if err := a.checkServerPins(server, argv, dir); err != nil {
		return nil, nil, err
	}
	writable, dataEnv, err := a.mcpWritable(server, argv)
	if err != nil {
		return nil, nil, mcp.Refused(err)
	}
	network, agent := a.mcpNetwork(server)
	l := a.sandbox()
	spec := sandbox.Spec{Args: argv, Dir: dir, Env: append(dataEnv, l.ScrubEnv(declared, keep)...),
		Network: network, Agent: agent, Visible: visible, Writable: writable, Confined: true}
	a.rememberMCPSpec(server, spec)
	p, err := l.Command(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	return p.Cmd, p.Release, nil
}

// helperLaunch starts one of Odin's parser processes — odin-sitter, the
// repo map's tree-sitter parser, and odin-fetch, WebFetch's HTML process —
// in the session's sandbox: read-only, no network, the filtered
// environment. Neither opens a file or a connection itself (Odin sends
// odin-sitter each file's text and makes odin-fetch's requests through its
// address policy), so the confinement only has to hold a parser fed
// untrusted input. Where no sandbox works they are refused, never run
// plainly (helperproc.Sandboxed).
func (a *app) helperLaunch(ctx context.Context, argv []string) (*exec.Cmd, func(), error) {
	return helperproc.Sandboxed(a.sandbox(), sandbox.Spec{Dir: a.root})(ctx, argv)
}

// startMCP starts a session's MCP servers in the background and waits, at
// most mcp.connect_timeout, for those whose tools are not known yet; lazy
// servers with a remembered tool list cost nothing here.
func (a *app) startMCP(ctx context.Context) {
	if len(a.cfg.MCP.Servers) == 0 {
		return
	}
	m := a.mcpManager()
	m.Start()
	m.WaitReady(ctx, a.cfg.MCP.ConnectTimeout)
	a.reportSlowMCP(m)
}

// newDenyRead compiles the read deny list: the defaults, Odin's own
// secrets in its state directory (the serve token, the REPL's input
// history, MCP credentials; the session store, which holds every
// session's transcript of every project, with its journal files, Odin's
// log and the MCP servers' logs), the user's patterns and the project's
// additions. odinDirs (state, config, data; the first is the state
// directory) are not walked for .env files; storePath is store.path.
func newDenyRead(home, root string, odinDirs []string, storePath string, perms config.Permissions) (*readdeny.Rules, error) {
	var private, skip []string
	var stores []string
	if state := odinDirs[0]; state != "" {
		private = append(private, filepath.Join(state, "serve"), filepath.Join(state, "history"), filepath.Join(state, mcpAuthDir),
			filepath.Join(state, "odin.log"), filepath.Join(state, "mcp-logs"), filepath.Join(state, "handoff"))
		stores = append(stores, filepath.Join(state, "odin.db"))
	}
	if conf := odinDirs[1]; conf != "" {
		// The user's own config may hold tokens as literals: a provider's
		// headers, an MCP server's env or headers.
		private = append(private, filepath.Join(conf, "odin.yaml"), filepath.Join(conf, "odin.yml"))
	}
	if abs, err := filepath.Abs(storePath); storePath != "" && err == nil {
		stores = append(stores, abs)
	}
	for _, db := range stores {
		private = append(private, db, db+"-wal", db+"-shm", db+"-journal")
	}
	for _, d := range odinDirs {
		if d != "" {
			skip = append(skip, d)
		}
	}
	return readdeny.New(readdeny.Options{Home: home, Root: root, Private: private,
		User: perms.DenyRead, Project: perms.ProjectDenyRead, SkipDirs: skip})
}
