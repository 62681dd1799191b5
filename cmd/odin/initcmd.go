package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/odinmd"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/messages"
)

func newInitCmd(g *globalFlags, stdout, stderr io.Writer) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Analyse the project and write (or revise) its ODIN.md",
		Long: `Run the Init agent: it reads the project's manifests, configs, docs, Makefile
and tree, and returns the sections of ODIN.md (objective, stack, dependencies,
architecture, practices, commands, sensitive points, tree...). Odin writes the
file: on an existing ODIN.md only the generated sections (between odin markers)
are replaced; hand-written text is kept. The agent never sees the old file.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withApp(g, func(a *app) error {
				if err := a.checkProvider(); err != nil {
					return err
				}
				ctx := context.Background()
				live, err := a.startSession(ctx, sessionOptions{Mode: string(messages.ModeAsk)})
				if err != nil {
					return err
				}
				var r *renderer
				if !quiet {
					r = newRenderer("text", false, a.root, stdout, stderr)
				}
				res, err := a.runInit(ctx, live, r)
				a.dropEmptySession(ctx, live)
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				printInit(stdout, res)
				return nil
			})
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "do not print the agent's progress")
	return cmd
}

// runInit runs the Init agent in live and writes ODIN.md. Progress goes to
// r when it is not nil.
func (a *app) runInit(ctx context.Context, live *liveSession, r *renderer) (*messages.InitResult, error) {
	path := filepath.Join(a.root, "ODIN.md")
	// An ODIN.md that links outside the project would be read and then
	// written back into it, where the next prompt picks it up.
	if real, err := workspace.Resolve(a.root, path); err != nil || !workspace.Within(a.root, real) {
		return nil, fmt.Errorf("init: %s leads outside the project; remove the link first", path)
	}
	existing, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	mode := "create"
	if len(existing) > 0 {
		mode = "update"
	}
	brief := fmt.Sprintf(`Analyse the project at %s and produce the sections of its ODIN.md.

Mode: %s (you are not shown any existing ODIN.md on purpose: describe the project as it is now).
Token budget for the whole document: target %d-%d tokens, hard cap %d. Be dense: tables and terse lists, major.minor versions only, a TREE of depth 2-3.
Required sections: %s. Add Endpoints, Environment Variables, External Integrations when the project has them.
Collect the signals first (manifests, configs, docs, Makefile or scripts, a sample of the core code, the tree), then call Report with one entry per section (name, Markdown content without the heading, source, confidence).`,
		a.root, mode, odinmd.TargetMin, odinmd.Budget.Target, odinmd.Budget.HardCap, strings.Join(odinmd.Required, ", "))

	evs := live.Bus.Subscribe(ctx, 256, true)
	msg := live.Session.RunAgent("init", brief, messages.ModeAsk)
	var result messages.TurnResult
	for env := range evs {
		if r != nil {
			r.event(env)
		}
		if tf, ok := env.Event.(messages.TurnFinished); ok && tf.Result.Input.ID == msg.ID {
			result = tf.Result
			break
		}
	}
	if result.Status != messages.TurnDone || result.Report == nil || len(result.Report.Result) == 0 {
		why := result.Error
		if why == "" {
			why = "the Init agent returned no sections"
		}
		return nil, fmt.Errorf("init: %s", why)
	}
	var ir messages.InitResult
	if err := json.Unmarshal(result.Report.Result, &ir); err != nil {
		return nil, fmt.Errorf("init: the agent's report is not an InitResult: %w", err)
	}
	doc := odinmd.Assemble(string(existing), ir.Sections)
	if err := fsutil.WriteFileAtomic(path, []byte(doc.Doc), fsutil.ModeOr(path, 0o644)); err != nil {
		return nil, err
	}
	ir.Mode, ir.Path, ir.TokenCount, ir.TokenBudget = doc.Mode, path, doc.Tokens, odinmd.Budget
	ir.Sections, ir.ChangesFromPrev = doc.Sections, doc.Changes
	ir.Warnings = append(ir.Warnings, doc.Warnings...)
	return &ir, nil
}

// dropEmptySession closes the session odin init ran in and deletes it when
// it holds no conversation: the Init agent works in a child session, and
// an empty parent would be listed by odin sessions and picked by
// --continue. Its usage stays counted by odin stats.
func (a *app) dropEmptySession(ctx context.Context, live *liveSession) {
	_ = live.Close(ctx)
	st, err := a.openStore(ctx)
	if err != nil {
		return
	}
	if s, err := st.Session(ctx, live.ID); err == nil && s.MessageCount == 0 {
		if err := st.DeleteSession(ctx, live.ID); err != nil {
			a.log.Warn().Err(err).Str("session", live.ID).Msg("init: removing its empty session")
		}
	}
}

func printInit(w io.Writer, ir *messages.InitResult) {
	verb := "Wrote"
	if ir.Mode == "update" {
		verb = "Revised"
	}
	fmt.Fprintf(w, "%s %s: %d sections, %d tokens (target %d-%d, hard cap %d)\n", verb, ir.Path, len(ir.Sections), ir.TokenCount,
		odinmd.TargetMin, ir.TokenBudget.Target, ir.TokenBudget.HardCap)
	for _, s := range ir.Sections {
		fmt.Fprintf(w, "  %-22s %5d tokens  %s\n", s.Name, s.TokenCount, s.Source)
	}
	for _, c := range ir.ChangesFromPrev {
		fmt.Fprintf(w, "  change: %s\n", c)
	}
	for _, warn := range ir.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
}
