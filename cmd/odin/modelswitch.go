package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/odin-code/odin/internal/term"
)

// roleModel returns the model id /model chose for role ("main" or
// "small") in this process, else role itself, which ResolveModel maps to
// the configured model; any other name is returned unchanged.
func (a *app) roleModel(role string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id, ok := a.roles[role]; ok {
		return id
	}
	return role
}

// currentModel is the id role resolves to now.
func (a *app) currentModel(role string) string {
	if id := a.roleModel(role); id != role {
		return id
	}
	if role == "small" {
		return a.cfg.Models.Small
	}
	return a.cfg.Models.Main
}

// switchModel makes role ("main" or "small") resolve to id from the next
// turn on. The id must resolve through the configuration as --model's
// would (a provider that exists and has its key); an id that neither
// model_info nor the catalogue describes is accepted, since a provider
// may serve any name, with a warning that its context window and price
// are guesses and the catalogue's nearest ids.
func (a *app) switchModel(role, id string) (string, error) {
	ref, err := a.cfg.ResolveModel(id)
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, inCatalog := a.catalog().Lookup(ref.ID, ref.ProviderName)
	if a.roles == nil {
		a.roles = map[string]string{}
	}
	a.roles[role] = ref.ID
	text := fmt.Sprintf("%s model: %s (provider %s) from the next turn on", role, ref.ID, ref.ProviderName)
	if !ref.Known && !inCatalog {
		text += fmt.Sprintf("\n\nWarning: neither model_info nor the model catalogue knows %q: its context window is taken as %d tokens and its price is unknown.", ref.ID, ref.ContextWindow)
		var near []string
		for _, m := range a.catalog().Filter(strings.NewReplacer("-", " ", "_", " ", ".", " ").Replace(ref.ID)) {
			if len(near) == 5 {
				break
			}
			near = append(near, "`"+m.ID+"`")
		}
		if len(near) > 0 {
			text += " Known ids like it: " + strings.Join(near, ", ") + "."
		}
	}
	return text, nil
}

// modelCommand is /model: show the main and small models, or switch one
// for the rest of this REPL (new conversations included).
func (r *repl) modelCommand() term.Command {
	a := r.a
	return term.Command{Name: "model", Usage: "/model [main|small] [NAME]",
		Description: "show the models, or switch the main (or small) one for the rest of the session",
		Run: func(_ context.Context, args string) (term.Result, error) {
			f := strings.Fields(args)
			role := "main"
			if len(f) > 0 && (f[0] == "main" || f[0] == "small") {
				role, f = f[0], f[1:]
			}
			switch len(f) {
			case 0:
				return term.Result{Text: fmt.Sprintf("main model: %s\nsmall model: %s\n\n`/model NAME` or `/model small NAME` switches one from the next turn on.",
					a.currentModel("main"), a.currentModel("small"))}, nil
			case 1:
				text, err := a.switchModel(role, f[0])
				return term.Result{Text: text}, err
			}
			return term.Result{}, fmt.Errorf("usage: /model [main|small] [NAME]")
		}}
}
