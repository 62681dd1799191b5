package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

func newSessionsCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var all bool
	limit := 20
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, export and remove sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(g, func(ctx context.Context, a *app, st store.Store) error {
				q := store.SessionQuery{Project: a.root, Limit: limit}
				if all {
					q.Project = ""
				}
				list, err := st.Sessions(ctx, q)
				if err != nil {
					return err
				}
				if len(list) == 0 {
					fmt.Fprintln(stdout, "No sessions yet. Start one with odin or odin run \"task\".")
					return nil
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tUPDATED\tMESSAGES\tTOKENS\tCOST\tTITLE")
				for _, s := range list {
					title := s.Title
					if all {
						title += "  (" + s.Project + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.MessageCount,
						present.Tokens(s.PromptTokens+s.CompletionTokens), present.Cost(s.Cost, !a.modelPriced(s.Model)), firstLine(title))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "list sessions of every project")
	cmd.Flags().VarP((*countValue)(&limit), "limit", "n", "how many sessions to list (0: all)")
	cmd.AddCommand(newSessionsShowCmd(g, stdout), newSessionsExportCmd(g, stdout), newSessionsImportCmd(g, stdout), newSessionsRmCmd(g, stdout))
	return cmd
}

func newSessionsShowCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID|PREFIX",
		Short: "Print a session with its specialists' transcripts (Markdown)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withStore(g, func(ctx context.Context, a *app, st store.Store) error {
				id, err := resolveSession(ctx, st, args[0])
				if err != nil {
					return err
				}
				if err := store.ExportMarkdownPriced(ctx, st, stdout, id, a.modelPriced); err != nil {
					return notFound(err, args[0])
				}
				runs, err := storedAgentRuns(ctx, st, id)
				if err != nil {
					return err
				}
				if len(runs) > 0 {
					fmt.Fprintf(stdout, "\n## Agent runs\n\n%s\n", agentRunsText(runs, time.Now()))
				}
				return nil
			})
		},
	}
}

// storedAgentRuns reads a session's agent-run registry from the store.
func storedAgentRuns(ctx context.Context, st store.Store, sessionID string) ([]messages.AgentRun, error) {
	recs, err := st.AgentRuns(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var runs []messages.AgentRun
	for _, rec := range recs {
		var run messages.AgentRun
		if err := json.Unmarshal(rec.Data, &run); err != nil {
			return nil, fmt.Errorf("agent run %s of session %s: %w", rec.ID, sessionID, err)
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// agentRunsText renders agent runs as a fenced table, for Markdown.
func agentRunsText(runs []messages.AgentRun, now time.Time) string {
	return "```\n" + agentRunsTable(runs, now) + "\n```"
}

// agentRunsTable renders agent runs (the AgentMonitor) as aligned plain
// text: running ones first, then finished ones newest first, each with
// its last activities.
func agentRunsTable(runs []messages.AgentRun, now time.Time) string {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b messages.AgentRun) int {
		if a.Finished() != b.Finished() {
			if !a.Finished() {
				return -1
			}
			return 1
		}
		return b.Started.Compare(a.Started)
	})
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tELAPSED\tTOKENS\tDESCRIPTION")
	for _, r := range sorted {
		status := string(r.Status)
		if r.Background {
			status += " (background)"
		}
		if r.Detached {
			status += " (detached)"
		}
		if r.Resumes > 0 {
			status += fmt.Sprintf(" (resumed %d×)", r.Resumes)
		}
		handle := r.Handle
		if handle == "" {
			handle = r.Agent
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", handle, status, r.Elapsed(now).Round(100*time.Millisecond), r.Tokens, oneLineTitle(r.Description))
		if len(r.Activities) > 0 {
			fmt.Fprintf(tw, "  last: %s\t\t\t\t\n", oneLineTitle(strings.Join(r.Activities, "; ")))
		}
	}
	_ = tw.Flush()
	return termsafe.Text(strings.TrimRight(b.String(), "\n"))
}

func newSessionsExportCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "export ID|PREFIX",
		Short: "Export a session and its specialists' transcripts as Markdown or JSONL",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withStore(g, func(ctx context.Context, a *app, st store.Store) error {
				id, err := resolveSession(ctx, st, args[0])
				if err != nil {
					return err
				}
				switch format {
				case "md", "markdown":
					return notFound(store.ExportMarkdownPriced(ctx, st, stdout, id, a.modelPriced), args[0])
				case "jsonl":
					return notFound(store.ExportJSONL(ctx, st, stdout, id), args[0])
				}
				return usageError("--format must be markdown or jsonl")
			})
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "markdown", "markdown or jsonl")
	return cmd
}

func newSessionsImportCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE.jsonl",
		Short: "Import sessions exported with odin sessions export --format jsonl",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withStore(g, func(ctx context.Context, a *app, st store.Store) error {
				f, err := os.Open(args[0])
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				defer f.Close()
				ids, err := store.ImportJSONL(ctx, st, f)
				if errors.Is(err, store.ErrExists) {
					return &exitError{code: exitFailed, err: fmt.Errorf("%s: a session in it already exists here (odin sessions rm it first): %w", args[0], err)}
				}
				if err != nil {
					return &exitError{code: exitFailed, err: fmt.Errorf("%s: %w", args[0], err)}
				}
				fmt.Fprintf(stdout, "imported %d session(s): %s\n", len(ids), strings.Join(ids, ", "))
				return nil
			})
		},
	}
}

func newSessionsRmCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID|PREFIX...",
		Short: "Delete sessions (with their transcripts, tool history and checkpoints)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withStore(g, func(ctx context.Context, a *app, st store.Store) error {
				// Every ID is resolved before any is deleted, so a typo
				// deletes nothing.
				ids := make([]string, len(args))
				for i, typed := range args {
					id, err := resolveSession(ctx, st, typed)
					if err != nil {
						return err
					}
					ids[i] = id
				}
				for _, id := range ids {
					if err := notFound(st.DeleteSession(ctx, id), id); err != nil {
						return err
					}
					fmt.Fprintf(stdout, "deleted %s\n", id)
				}
				return nil
			})
		},
	}
}

func notFound(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return &exitError{code: exitFailed, err: fmt.Errorf("no session %q (odin sessions lists them)", id)}
	}
	return err
}

// withApp loads the project for a command and closes it afterwards.
func withApp(g *globalFlags, fn func(a *app) error) error {
	a, err := loadApp(g)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a)
}

// withStore loads the project and opens its store for fn.
func withStore(g *globalFlags, fn func(context.Context, *app, store.Store) error) error {
	return withApp(g, func(a *app) error {
		ctx := context.Background()
		st, err := a.openStore(ctx)
		if err != nil {
			return &exitError{code: exitFailed, err: fmt.Errorf("session store: %w", err)}
		}
		return fn(ctx, a, st)
	})
}

func newUndoCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "undo",
		Short: "Restore the files of the last change set exactly as they were",
		Long:  "Restore every file the last change set touched (content and mode; files it created are removed). Refuses when a file changed since, unless --force.",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withApp(g, func(a *app) error {
				msg, err := a.undo(context.Background(), force)
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				fmt.Fprintln(stdout, msg)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "restore even files that changed after the change set")
	return cmd
}

func newCheckpointsCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "checkpoints",
		Short: "List the project's change sets that odin undo can restore",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withStore(g, func(ctx context.Context, a *app, st store.Store) error {
				list, err := st.Checkpoints(ctx, a.root)
				if err != nil {
					return err
				}
				if len(list) == 0 {
					fmt.Fprintln(stdout, "No checkpoints: no change has been made in this project yet.")
					return nil
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tCREATED\tFILES\tSTATE\tCHANGE")
				for _, c := range list {
					state := "undoable"
					if !c.RestoredAt.IsZero() {
						state = "restored " + c.RestoredAt.Local().Format("15:04")
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", c.ID, c.CreatedAt.Local().Format("2006-01-02 15:04"), c.Files, state, firstLine(c.Label))
				}
				return tw.Flush()
			})
		},
	}
}

func newStatsCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var by string
	days := 30
	var all bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show token use and cost by day, model or agent, or prompt tokens by part",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			switch by {
			case "day", "model", "agent", "part":
			default:
				return usageError("--by must be day, model, agent or part")
			}
			return withStore(g, func(ctx context.Context, a *app, st store.Store) error {
				q := store.StatsQuery{Project: a.root, GroupBy: by}
				if all {
					q.Project = ""
				}
				if days > 0 {
					q.Since = time.Now().AddDate(0, 0, -days)
				}
				rows, err := st.Stats(ctx, q)
				if err != nil {
					return err
				}
				if by == store.GroupByPart {
					return printPartStats(stdout, rows)
				}
				unpriced, err := unpricedModels(ctx, a, st, q)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintf(tw, "%s\tCALLS\tINPUT\tCACHED\tOUTPUT\tCOST\t\n", strings.ToUpper(by))
				var total store.StatsRow
				for _, r := range rows {
					unknown := by == "model" && !a.modelPriced(r.Key)
					if by != "model" && len(unpriced) > 0 && r.Cost == 0 && r.PromptTokens+r.CompletionTokens > 0 {
						// A day's or an agent's tokens priced at nothing while
						// some model had no known price: unknown, not free.
						unknown = true
					}
					cost := present.Cost(r.Cost, unknown)
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", r.Key, r.Calls, present.Tokens(r.PromptTokens), present.Tokens(r.CachedTokens), present.Tokens(r.CompletionTokens), cost)
					total.Calls += r.Calls
					total.PromptTokens += r.PromptTokens
					total.CachedTokens += r.CachedTokens
					total.CompletionTokens += r.CompletionTokens
					total.Cost += r.Cost
				}
				fmt.Fprintf(tw, "total\t%d\t%s\t%s\t%s\t%s\t\n", total.Calls, present.Tokens(total.PromptTokens), present.Tokens(total.CachedTokens), present.Tokens(total.CompletionTokens), present.Cost(total.Cost, len(unpriced) > 0))
				if err := tw.Flush(); err != nil {
					return err
				}
				if len(unpriced) > 0 {
					fmt.Fprintf(stdout, "Cost excludes models with no known price: %s (set model_info.<id>.price in odin.yaml).\n", strings.Join(unpriced, ", "))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&by, "by", "day", "group by day, model or agent; part: prompt tokens by part of the request (system, tools, history, context, input)")
	cmd.Flags().Var((*countValue)(&days), "days", "only the last N days (0: all)")
	cmd.Flags().BoolVar(&all, "all", false, "every project, not just this one")
	return cmd
}

// unpricedModels lists the models of the usage q covers that neither
// odin.yaml nor the catalogue prices.
func unpricedModels(ctx context.Context, a *app, st store.Store, q store.StatsQuery) ([]string, error) {
	q.GroupBy = "model"
	rows, err := st.Stats(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		if !a.modelPriced(r.Key) {
			out = append(out, r.Key)
		}
	}
	return out, nil
}

func newTrustCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var revoke, show bool
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Trust what this project's config and files would run, send or replace",
		Long: "Until you trust a project, Odin ignores everything it supplies that could run code, send data or " +
			"a key somewhere, change the model endpoint or a mode, or replace a built-in agent: odin.yaml keys " +
			"(providers, web.search, quality commands, hooks, allowed commands...), agent files that replace a " +
			"built-in, command files that set a mode, and the check commands of ODIN.md, package.json or a Makefile. " +
			"`odin trust` lists exactly what it will honour, with the values, and records it; any change asks again. " +
			"It also pins the project files each MCP server and hook executes (srv.py of `python3 srv.py`, a hook's script): " +
			"when one changes, that entry stops running until you trust again. --show lists without trusting.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			g.trusting = true
			return withApp(g, func(a *app) error {
				ts := policy.NewTrustStore(a.stateDir, nil)
				if revoke {
					if _, was := ts.Previous(a.root); !was {
						fmt.Fprintf(stdout, "%s was not trusted; nothing to revoke.\n", a.root)
						return nil
					}
					if err := ts.Revoke(a.root); err != nil {
						return err
					}
					fmt.Fprintf(stdout, "%s is no longer trusted.\n", a.root)
					return nil
				}
				if len(a.trust.items) == 0 {
					fmt.Fprintln(stdout, "This project supplies nothing that needs trust.")
					return nil
				}
				if show {
					state := "not trusted: Odin ignores"
					if a.trust.trusted {
						state = "trusted: Odin honours"
					}
					fmt.Fprintf(stdout, "%s is %s:\n", a.root, state)
					for _, it := range a.trust.items {
						fmt.Fprintf(stdout, "  %s\n", it)
					}
					printPins(stdout, a.trust.entries)
					return nil
				}
				if err := ts.TrustPinned(a.root, a.trust.fingerprint, entryPins(a.trust.entries), a.trust.shown()...); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "Trusted %s. Odin now honours:\n", a.root)
				for _, it := range a.trust.items {
					fmt.Fprintf(stdout, "  %s\n", it)
				}
				printPins(stdout, a.trust.entries)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "stop trusting this project")
	cmd.Flags().BoolVar(&show, "show", false, "list what needs trust and whether it is trusted, without trusting")
	return cmd
}

func newCompactCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var resume string
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Summarise the older history of a session (the latest, or --resume ID) with the small model",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withApp(g, func(a *app) error {
				if err := a.checkProvider(); err != nil {
					return err
				}
				ctx := context.Background()
				live, err := a.startSession(ctx, sessionOptions{Continue: resume == "", Resume: resume, Purpose: "compact"})
				if err != nil {
					return err
				}
				defer live.Close(ctx)
				res, err := live.Session.Compact(ctx)
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				switch {
				case res.Err != "":
					return &exitError{code: exitFailed, err: fmt.Errorf("compaction failed: %s", res.Err)}
				case res.Skipped != "":
					fmt.Fprintf(stdout, "Nothing compacted: %s.\n", res.Skipped)
				default:
					fmt.Fprintf(stdout, "Compacted %d messages of session %s: about %s → %s tokens.\n", res.Compacted.Messages, live.ID,
						present.Tokens(res.Compacted.TokensBefore), present.Tokens(res.Compacted.TokensAfter))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&resume, "resume", "", "the session to compact (default: the project's latest)")
	return cmd
}

// printPartStats prints the summed token ledgers: each part's estimated
// prompt tokens, how many a prefix cache served, and its share of all.
func printPartStats(w io.Writer, rows []store.StatsRow) error {
	var total store.StatsRow
	for _, r := range rows {
		total.PromptTokens += r.PromptTokens
		total.CachedTokens += r.CachedTokens
		total.Calls = max(total.Calls, r.Calls)
	}
	share := func(n, of int64) string {
		if of <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "PART\tCALLS\tINPUT\tCACHED\tUNCACHED\tSHARE\tCACHED%%\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", r.Key, r.Calls, present.Tokens(r.PromptTokens), present.Tokens(r.CachedTokens),
			present.Tokens(r.PromptTokens-r.CachedTokens), share(r.PromptTokens, total.PromptTokens), share(r.CachedTokens, r.PromptTokens))
	}
	fmt.Fprintf(tw, "total\t%d\t%s\t%s\t%s\t%s\t%s\t\n", total.Calls, present.Tokens(total.PromptTokens), present.Tokens(total.CachedTokens),
		present.Tokens(total.PromptTokens-total.CachedTokens), share(total.PromptTokens, total.PromptTokens), share(total.CachedTokens, total.PromptTokens))
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "No model call with a token ledger in this window.")
		return err
	}
	_, err := fmt.Fprintln(w, "Tokens are Odin's estimates (bytes/4) of each part; cached: what the provider reported, counted from the start of the request.")
	return err
}

// countValue is an int flag that takes 0 or more, 0 meaning "all": a
// negative count was read as "all" too, so a typo listed everything
// instead of being told.
type countValue int

func (c *countValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number (0: all)")
	}
	if n < 0 {
		return errors.New("must be 0 or more (0: all)")
	}
	*c = countValue(n)
	return nil
}

func (c *countValue) String() string { return strconv.Itoa(int(*c)) }

func (c *countValue) Type() string { return "int" }
