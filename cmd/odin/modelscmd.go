package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/models"
)

func newModelsCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var asJSON bool
	var provider string
	cmd := &cobra.Command{
		Use:   "models [FILTER...]",
		Short: "List the model catalogue: prices, context window, images and tools",
		Long: `List the models Odin knows a price and window for: the models.dev catalogue
shipped in the binary (refreshed with make models), filtered by words that
must all appear in "provider/id". Prices are US dollars per million tokens.

A price in odin.yaml (model_info.<id>.price) overrides the catalogue. A model
found in neither shows "cost unknown" wherever cost is reported, never $0;
a model described in odin.yaml without a price counts as free (local models).`,
		Example: `  odin models claude sonnet
  odin models --provider openrouter gemini
  odin models --json gpt-4.1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(g, func(a *app) error {
				var list []models.Model
				for _, m := range a.catalog().Filter(strings.Join(args, " ")) {
					if provider == "" || strings.EqualFold(m.Provider, provider) {
						list = append(list, m)
					}
				}
				if asJSON {
					if list == nil {
						list = []models.Model{}
					}
					writeJSON(stdout, list)
					return nil
				}
				if len(list) == 0 {
					what := "no model"
					if provider != "" {
						what += fmt.Sprintf(" of provider %q", provider)
					}
					if len(args) > 0 {
						what += fmt.Sprintf(" matches %q", strings.Join(args, " "))
					}
					return &exitError{code: exitFailed, err: fmt.Errorf("%s in the catalogue (%s)", what, a.catalog().Source())}
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "PROVIDER\tMODEL\tINPUT\tCACHED\tOUTPUT\tCONTEXT\tMAX OUT\tIMAGES\tTOOLS")
				for _, m := range list {
					in, cached, out := "?", "?", "?"
					if m.Priced {
						in, cached, out = price(m.Input), price(m.CachedInput), price(m.Output)
						if m.CachedInput == 0 {
							cached = "-"
						}
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Provider, m.ID, in, cached, out,
						tokens(m.Context), tokens(m.MaxOutput), yesNo(m.Images), yesNo(m.Tools))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "%d model(s); prices in $ per million tokens, ? = no price; from %s.\n", len(list), a.catalog().Source())
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the entries as JSON")
	cmd.Flags().StringVar(&provider, "provider", "", "only this catalogue provider (openai, anthropic, openrouter, groq...)")
	_ = cmd.RegisterFlagCompletionFunc("provider", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		c, err := models.New()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		seen := map[string]bool{}
		var out []string
		for _, m := range c.All() {
			if !seen[m.Provider] {
				seen[m.Provider] = true
				out = append(out, m.Provider)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func price(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func tokens(n int) string {
	switch {
	case n == 0:
		return "-"
	case n%1000 == 0 || n >= 100000:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
