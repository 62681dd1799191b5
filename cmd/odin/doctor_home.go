package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/repomap"
	"github.com/odin-code/odin/internal/termsafe"
)

// doctorProbeTimeout bounds the provider check's one request.
const doctorProbeTimeout = 10 * time.Second

// checkConfigFiles says which config files were found and read, which
// project settings wait for `odin trust` (ignored until then), and the
// environment variables that set keys.
func checkConfigFiles(a *app, w io.Writer) (bool, string) {
	fmt.Fprintln(w, "config:")
	// A file that exists but was not read is one that does not load.
	absent := func(path string) string {
		if _, err := os.Stat(path); err == nil {
			return "not read"
		}
		return "not found"
	}
	if a.src != nil && a.src.UserFile != "" {
		fmt.Fprintf(w, "  read: %s (yours)\n", a.src.UserFile)
	} else if dir := config.UserDir(a.env); dir != "" {
		path := filepath.Join(dir, "odin.yaml")
		fmt.Fprintf(w, "  %s: %s (yours; optional)\n", absent(path), path)
	}
	if a.src != nil && a.src.ProjectFile != "" {
		fmt.Fprintf(w, "  read: %s (the project's)\n", a.src.ProjectFile)
	} else {
		path := filepath.Join(a.root, "odin.yaml")
		fmt.Fprintf(w, "  %s: %s (the project's; optional)\n", absent(path), path)
	}
	if a.src != nil && len(a.src.Env) > 0 {
		fmt.Fprintf(w, "  from the environment: %s\n", strings.Join(a.src.Env, ", "))
	}
	if a.src != nil && len(a.src.Dropped) > 0 {
		fmt.Fprintf(w, "  ignored until `odin trust`: %s\n", strings.Join(a.src.Dropped, ", "))
	}
	for _, warn := range a.warnings {
		fmt.Fprintf(w, "  note: %s\n", firstLine(warn))
	}
	checkAdditionalDirs(a, w)
	// The agents (odin.yaml's and the agent files) load as a session
	// loads them: a broken agent file stops every run.
	if _, err := actors.LoadRoster(a.rosterOptions()); err != nil {
		fmt.Fprintln(w, "  agents do not load:")
		for l := range strings.SplitSeq(err.Error(), "\n") {
			fmt.Fprintf(w, "    %s\n", termsafe.Line(l))
		}
		if a.configFail == nil {
			return false, "fix the agent definition above (it names its file and line); odin agents lists the agents"
		}
	}
	if f := a.configFail; f != nil {
		// The other checks ran with what does load (loadLeavingOut).
		fmt.Fprintln(w, "  does not load:")
		for l := range strings.SplitSeq(f.err.Error(), "\n") {
			fmt.Fprintf(w, "    %s\n", termsafe.Line(l))
		}
		if len(f.leftOut) > 0 {
			fmt.Fprintf(w, "  the other checks ran without: %s\n", strings.Join(f.leftOut, ", "))
		}
		return false, "fix the problems above (each names its file and line); odin doctor config checks again"
	}
	return true, ""
}

// checkTrust says whether the project is trusted and what waits for it.
func checkTrust(a *app, w io.Writer) (bool, string) {
	switch {
	case len(a.trust.items) == 0:
		fmt.Fprintln(w, "trust: the project supplies nothing that needs trust")
	case a.trust.trusted:
		fmt.Fprintf(w, "trust: this project is trusted (%d item%s honoured)\n", len(a.trust.items), pluralS(len(a.trust.items)))
	default:
		n := len(a.trust.items)
		verb := "wait"
		if n == 1 {
			verb = "waits"
		}
		fmt.Fprintf(w, "trust: not trusted; %d item%s %s for `odin trust` (odin trust --show lists them)\n", n, pluralS(n), verb)
	}
	return true, ""
}

// checkProvider asks the provider for its model list (GET /models, no
// tokens spent): it shows the endpoint answers, the key is accepted and
// the configured models are offered.
func checkProvider(a *app, w io.Writer) (bool, string) {
	ref, err := a.cfg.ResolveModel(a.roleModel("main"))
	if err != nil {
		fmt.Fprintf(w, "provider: not configured: %v\n", firstLine(err.Error()))
		return false, "set OPENAI_API_KEY (and OPENAI_BASE_URL for another server), or configure providers in odin.yaml; see docs/config.md"
	}
	p := ref.Provider
	fmt.Fprintf(w, "provider: %s at %s\n", ref.ProviderName, p.BaseURL)
	keyVar := p.APIKeyEnv
	switch {
	case keyVar == "":
		fmt.Fprintln(w, "  key: none configured (fine for local servers)")
	case os.Getenv(keyVar) == "":
		fmt.Fprintf(w, "  key: $%s is not set\n", keyVar)
	default:
		fmt.Fprintf(w, "  key: from $%s\n", keyVar)
	}
	ctx, cancel := context.WithTimeout(context.Background(), doctorProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(p.BaseURL, "/")+"/models", nil)
	if err != nil {
		return false, fmt.Sprintf("the base URL %q is not a URL: fix providers.%s.base_url (or OPENAI_BASE_URL)", p.BaseURL, ref.ProviderName)
	}
	if p.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.APIKey)
	}
	for k, v := range p.Headers {
		req.Header.Set(k, v)
	}
	hc := http.DefaultClient
	if a.flags.transport != nil {
		hc = &http.Client{Transport: a.flags.transport}
	}
	resp, err := hc.Do(req)
	if err != nil {
		fmt.Fprintf(w, "  reachable: no (%v)\n", err)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return false, fmt.Sprintf("nothing answers at %s: start the server, or set providers.%s.base_url (or OPENAI_BASE_URL) to where it listens", p.BaseURL, ref.ProviderName)
		}
		return false, fmt.Sprintf("check the network and the base URL %s (providers.%s.base_url or OPENAI_BASE_URL)", p.BaseURL, ref.ProviderName)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		fmt.Fprintf(w, "  reachable: yes; key: refused (HTTP %d)\n", resp.StatusCode)
		if keyVar == "" {
			return false, fmt.Sprintf("the server wants a key: set providers.%s.api_key_env to the variable that holds it", ref.ProviderName)
		}
		return false, fmt.Sprintf("check the key in $%s (providers.%s.api_key_env)", keyVar, ref.ProviderName)
	case resp.StatusCode == http.StatusNotFound:
		fmt.Fprintln(w, "  reachable: yes, but GET /models is not found")
		return false, fmt.Sprintf("check the base URL %s: most servers' URLs end in /v1 (providers.%s.base_url or OPENAI_BASE_URL)", p.BaseURL, ref.ProviderName)
	case resp.StatusCode >= 300:
		fmt.Fprintf(w, "  reachable: yes, but GET /models answered HTTP %d\n", resp.StatusCode)
		return true, ""
	}
	fmt.Fprintln(w, "  reachable: yes; key: accepted")
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil || len(list.Data) == 0 {
		fmt.Fprintln(w, "  models: the server did not list any")
		return true, ""
	}
	ids := make([]string, len(list.Data))
	for i, m := range list.Data {
		ids[i] = m.ID
	}
	ok := true
	var missing []string
	for _, role := range []string{"main", "small"} {
		r, err := a.cfg.ResolveModel(a.roleModel(role))
		if err != nil || r.ProviderName != ref.ProviderName {
			continue
		}
		if slices.Contains(ids, r.ID) {
			fmt.Fprintf(w, "  model %s (%s): offered\n", r.ID, role)
		} else {
			fmt.Fprintf(w, "  model %s (%s): not in the server's list of %d\n", r.ID, role, len(ids))
			missing = append(missing, r.ID)
			ok = false
		}
	}
	if !ok {
		return false, fmt.Sprintf("choose a model the server offers (--model, models.main/models.small); `odin models` lists the ones Odin knows. Not offered: %s", strings.Join(missing, ", "))
	}
	return true, ""
}

// checkMCP starts every configured MCP server, as a session would (in the
// sandbox, with its auth), and says which answered with tools; a server
// that failed, needs a login or is still connecting fails the check with
// what it said. Servers the project declares wait for `odin trust` and
// are named, not started.
func checkMCP(a *app, w io.Writer) (bool, string) {
	var waiting []string
	if a.src != nil {
		for _, k := range a.src.Dropped {
			if name, ok := strings.CutPrefix(k, "mcp.servers."); ok {
				waiting = append(waiting, name)
			}
		}
	}
	waiting = append(waiting, a.trust.refusedServers...)
	if len(a.cfg.MCP.Servers) == 0 && len(waiting) == 0 {
		fmt.Fprintln(w, "mcp: no servers configured")
		return true, ""
	}
	m := a.mcpManager()
	m.StartAll()
	m.WaitSettled(context.Background(), a.cfg.MCP.ConnectTimeout)
	list := m.Status()
	slices.SortFunc(list, func(x, y mcp.Status) int { return strings.Compare(x.Name, y.Name) })
	fmt.Fprintf(w, "mcp: %d server%s configured\n", len(list), pluralS(len(list)))
	var bad, advice []string
	for _, st := range list {
		switch st.State {
		case mcp.StateReady:
			fmt.Fprintf(w, "  %s (%s): ready, %d tool%s\n", st.Name, st.Transport, len(st.Tools), pluralS(len(st.Tools)))
			continue
		case mcp.StateDisabled:
			fmt.Fprintf(w, "  %s (%s): disabled\n", st.Name, st.Transport)
			continue
		case mcp.StateNeedsLogin:
			fmt.Fprintf(w, "  %s (%s): needs login\n", st.Name, st.Transport)
			advice = append(advice, "odin mcp login "+st.Name)
		default:
			why := st.Err
			if why == "" {
				why = "no answer within mcp.connect_timeout (" + a.cfg.MCP.ConnectTimeout.String() + ")"
			}
			state := string(st.State)
			if st.State == mcp.StateConnecting && st.Err != "" {
				state = "failing, restarting"
			}
			fmt.Fprintf(w, "  %s (%s): %s: %s\n", st.Name, st.Transport, state, termsafe.Line(why))
			if n := len(st.Stderr); n > 0 && !strings.Contains(why, st.Stderr[n-1]) {
				fmt.Fprintf(w, "    its last stderr line: %s\n", termsafe.Line(st.Stderr[n-1]))
			}
			if st.Log != "" {
				advice = append(advice, "read "+st.Log+" for "+st.Name)
			}
		}
		bad = append(bad, st.Name)
	}
	slices.Sort(waiting)
	for _, name := range waiting {
		fmt.Fprintf(w, "  %s: not started: declared by the project, waiting for `odin trust`\n", name)
	}
	if len(bad) > 0 {
		return false, fmt.Sprintf("MCP server%s not ready: %s; %s (odin mcp list shows them all)", pluralS(len(bad)), strings.Join(bad, ", "), strings.Join(append(advice, "fix the command or URL in mcp.servers"), "; "))
	}
	return true, ""
}

// checkSitter says whether repo maps cover languages other than Go.
func checkSitter(_ *app, w io.Writer) (bool, string) {
	if p := repomap.SitterPath(); p != "" {
		fmt.Fprintf(w, "odin-sitter: %s (repo maps of Python, JS/TS, Rust and Java)\n", p)
	} else {
		fmt.Fprintln(w, "odin-sitter: not found beside odin or on PATH; repo maps cover Go only (make install puts it beside odin)")
	}
	return true, ""
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// checkAdditionalDirs warns of each permissions.additional_dirs entry
// that is missing or not a directory, naming the key, the file and line
// that set it, and the path: the path guard would grant nothing there,
// and the user would not learn why a tool cannot reach it. A warning,
// not a failure: a directory on a drive not mounted today is legitimate.
func checkAdditionalDirs(a *app, w io.Writer) {
	if a.cfg == nil {
		return
	}
	locate := a.configLocator()
	for i, d := range a.cfg.Permissions.AdditionalDirs {
		problem := ""
		switch fi, err := os.Stat(d); {
		case errors.Is(err, fs.ErrNotExist):
			problem = "does not exist"
		case err != nil:
			problem = "cannot be read: " + err.Error()
		case !fi.IsDir():
			problem = "is not a directory"
		default:
			continue
		}
		key := fmt.Sprintf("permissions.additional_dirs[%d]", i)
		where := "flags or environment"
		if file, line := locate(key); file != "" {
			where = file
			if line > 0 {
				where += ":" + strconv.Itoa(line)
			}
		}
		fmt.Fprintf(w, "  warning: %s: %s: %s %s; tools get no access there\n", where, key, termsafe.Line(d), problem)
	}
}
