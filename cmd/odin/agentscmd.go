package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/messages"
)

func newAgentsCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "agents",
		Short: "List and validate the specialist roster (built-in, odin.yaml, .odin/agents/*.md)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withApp(g, func(a *app) error {
				deps, err := a.buildDeps(events.New("cli", nil), a.headlessApprover())
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tSOURCE\tMODEL\tTIMEOUT\tASK/PLAN\tTOOLS")
				for _, def := range deps.Roster.Agents() {
					model := def.Model
					if m, err := a.cfg.ResolveModel(def.Model); err == nil && m.ID != def.Model {
						model += " (" + m.ID + ")"
					}
					ro := "no"
					if actors.ReadOnlyAgent(deps.Tools, def) {
						ro = "yes"
					}
					names := actors.FilterTools(deps.Tools, def, messages.ModeEdit, true).Names()
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%s\t%s\n", def.Name, def.Source, model, def.Timeout, def.MaxTimeout, ro, strings.Join(names, ","))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "\n%d agents, roster valid.\n", len(deps.Roster.Agents()))
				for _, w := range deps.Roster.Warnings() {
					fmt.Fprintln(stdout, "warning:", config.Printable(w))
				}
				return nil
			})
		},
	}
}
