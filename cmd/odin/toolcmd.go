package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/events"
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
					var infos []tools.Info
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
		Short: "Run one tool in this project exactly as an agent in edit mode would",
		Long: `Run one tool with a JSON input, through the same permission path an agent in
edit mode uses (headless: anything needing approval is denied unless --allow,
--add-dir or --yolo widen it). Exits 0 on success and 1 on a tool error.`,
		Example: `  odin tool LS '{"path":"'$PWD'"}'
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
				deps, err := a.buildDeps(events.New("cli", nil), a.headlessApprover())
				if err != nil {
					return err
				}
				if _, ok := deps.Tools.Get(args[0]); !ok {
					return usageError("unknown tool %q (odin tools lists them)", args[0])
				}
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
				defer stop()
				env := &tools.Env{Root: a.root, Agent: "user", AgentID: "cli", SessionID: "cli", Mode: string(messages.ModeEdit),
					Reads: tools.NewReadState(), Guard: deps.Guard("user", ""), Small: deps.Small,
					Publish: func(ev any) {
						if n, ok := ev.(messages.Notice); ok {
							fmt.Fprintf(stderr, "%s: %s\n", n.Level, n.Text)
						}
					}}
				if n := a.untrustedNotice(); n != "" {
					fmt.Fprintln(stderr, "note:", n)
				}
				preRead(ctx, deps.Tools, env, args[0], input)
				res, err := deps.Tools.Run(ctx, env, args[0], json.RawMessage(input))
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				if asJSON {
					writeJSON(stdout, toolOutput{OK: !res.IsError, Denied: res.Denied, Output: res.Output, Files: res.Files})
				} else if res.IsError {
					fmt.Fprintln(stderr, strings.TrimRight(res.Output, "\n"))
				} else {
					fmt.Fprintln(stdout, strings.TrimRight(res.Output, "\n"))
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

// preRead makes a write tool usable from the command line: each odin tool
// call is a fresh agent with nothing read, so the file a write tool targets
// is read first (through the same guard), as an agent would have done.
func preRead(ctx context.Context, set tools.Set, env *tools.Env, name, input string) {
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
