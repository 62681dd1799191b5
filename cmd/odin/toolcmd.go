package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

func newToolsCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools agents can use",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withApp(g, func(a *app) error {
				set := a.baseTools()
				if asJSON {
					var infos []tool.Info
					for _, t := range set.All() {
						infos = append(infos, t.Info())
					}
					writeJSON(stdout, infos)
					return nil
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tCLASS\tDESCRIPTION")
				for _, t := range set.All() {
					info := t.Info()
					fmt.Fprintf(tw, "%s\t%s\t%s\n", info.Name, info.Class, firstSentence(info.Description))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print names, classes, descriptions and input schemas as JSON")
	return cmd
}

func firstSentence(s string) string {
	s = firstLine(s)
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

// toolOutput is `odin tool --json`'s document.
type toolOutput struct {
	OK     bool     `json:"ok"`
	Denied bool     `json:"denied"`
	Output string   `json:"output"`
	Files  []string `json:"files,omitempty"`
}

func newToolCmd(g *globalFlags, stdout, stderr io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tool NAME 'JSON'",
		Short: "Run one tool in this project exactly as an agent would",
		Long: `Run one tool with a JSON input, through the same permission path an agent
uses in the mode given by --mode or the configuration (edit by default;
headless: anything needing approval is denied unless --allow, --add-dir or
--yolo widen it). In ask and plan modes commands run with the project
read-only, as in a session. Exits 0 on success and 1 on a tool error.

Agents give absolute paths; here a relative "path" or "file_path" is taken
from the current directory, as a shell would.`,
		Example: `  odin tool LS '{"path":"."}'
  odin tool mcp__memory__read_graph '{}'
  odin tool ReadFile '{"file_path":"cmd/odin/main.go","limit":20}'
  odin tool Grep '{"pattern":"func main","output_mode":"content","-n":true}'`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			return withApp(g, func(a *app) error {
				input := "{}"
				if len(args) == 2 {
					input = args[1]
				}
				if input == "-" {
					// Read no more than a tool accepts: a bigger input is
					// refused before it costs its size in memory.
					data, err := io.ReadAll(io.LimitReader(os.Stdin, tool.MaxInputBytes+1))
					if err != nil {
						return err
					}
					if len(data) > tool.MaxInputBytes {
						return &exitError{code: exitFailed, err: fmt.Errorf("the input on stdin is more than the %d MiB a tool call takes; split the work into smaller calls", tool.MaxInputBytes>>20)}
					}
					input = string(data)
				}
				input, err := absolutePaths(input)
				if err != nil {
					return usageError("tool input: %v", err)
				}
				deps, err := a.buildDeps(events.New("cli", nil), a.headlessApprover())
				if err != nil {
					return err
				}
				ctx, stop := signal.NotifyContext(a.log.WithContext(context.Background()), os.Interrupt)
				defer stop()
				set := deps.Tools
				if mcp.IsToolName(args[0]) {
					t, err := a.mcpTool(ctx, deps, args[0])
					if err != nil {
						return err
					}
					set = set.With(t)
				}
				if _, ok := set.Get(args[0]); !ok {
					return usageError("unknown tool %q (odin tools lists them)", args[0])
				}
				// The mode decides both the check and the sandbox: ask and
				// plan modes run commands with the project read-only, as a
				// session does (ExecuteCommand reads env.Mode for both).
				mode, err := messages.ParseMode(a.cfg.Mode)
				if err != nil {
					return usageError("--mode: %v", err)
				}
				env := &tool.Env{Root: a.root, Agent: "user", AgentID: "cli", SessionID: "cli", Mode: string(mode),
					Reads: tool.NewReadState(), Guard: deps.Guard("user", ""), DenyRead: deps.DenyRead, Small: deps.Small,
					Publish: func(ev any) {
						if n, ok := ev.(messages.Notice); ok {
							fmt.Fprintf(stderr, "%s: %s\n", n.Level, termsafe.Text(n.Text))
						}
					}}
				if n := a.untrustedNotice(); n != "" {
					fmt.Fprintln(stderr, "note:", n)
				}
				preRead(ctx, set, env, args[0], input)
				res, err := set.Run(ctx, env, args[0], json.RawMessage(input))
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				if asJSON {
					writeJSON(stdout, toolOutput{OK: !res.IsError, Denied: res.Denied, Output: res.Output, Files: res.Files})
				} else if res.IsError {
					fmt.Fprintln(stderr, termsafe.Text(strings.TrimRight(res.Output, "\n")))
				} else {
					// What a file or command holds is shown, never obeyed
					// by the terminal; --json keeps it as data.
					fmt.Fprintln(stdout, termsafe.Text(strings.TrimRight(res.Output, "\n")))
				}
				if res.IsError {
					return &exitError{code: exitFailed, err: fmt.Errorf("")}
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"ok":..., "denied":..., "output":...}`)
	return cmd
}

// pathKeys are the input fields of the built-in tools that hold a path.
var pathKeys = []string{"path", "file_path", "notebook_path"}

// absolutePaths makes the path fields of a tool input absolute, from the
// current directory: a human types "cmd/odin/main.go" where an agent
// gives the absolute path. Input that is not a JSON object is left to the
// tool's own validation.
func absolutePaths(input string) (string, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(input), &obj) != nil {
		return input, nil
	}
	changed := false
	for _, k := range pathKeys {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		var p string
		if json.Unmarshal(raw, &p) != nil || p == "" || filepath.IsAbs(p) {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("%s %q: %w", k, p, err)
		}
		obj[k], _ = json.Marshal(abs)
		changed = true
	}
	if !changed {
		return input, nil
	}
	out, err := json.Marshal(obj)
	return string(out), err
}

// preRead makes a write tool usable from the command line: each odin tool
// call is a fresh agent with nothing read, so the file a write tool targets
// is read first (through the same guard), as an agent would have done.
func preRead(ctx context.Context, set tools.Set, env *tool.Env, name, input string) {
	switch name {
	case tools.NameWriteFile, tools.NameEditTool, tools.NameMultiEditTool:
	default:
		return
	}
	var in struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal([]byte(input), &in) != nil || in.FilePath == "" {
		return
	}
	if _, err := os.Stat(in.FilePath); err != nil {
		return
	}
	raw, _ := json.Marshal(map[string]any{"file_path": in.FilePath, "limit": 1})
	_, _ = set.Run(ctx, env, tools.NameReadFile, raw)
}
