package main

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// setRole puts back what roleModel returned for role: id, or no choice
// when id is role itself.
func (a *app) setRole(role, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id == role {
		delete(a.roles, role)
		return
	}
	if a.roles == nil {
		a.roles = map[string]string{}
	}
	a.roles[role] = id
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

// setSessionModel switches the main model to id from the next turn on and
// keeps it with the session, for a resume in any process to start in it:
// the REPL's /model and ACP's session/set_model. The id must resolve; it
// is stored first, through the session's journal (its claim), so a model
// the next process would not see is not set.
func (a *app) setSessionModel(ctx context.Context, live *liveSession, id string) (string, error) {
	ref, err := a.cfg.ResolveModel(id)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := live.Session.SetModel(ctx, ref.ID); err != nil {
		return "", fmt.Errorf("the model was not switched: it could not be kept with the session: %w", err)
	}
	return a.switchModel("main", ref.ID)
}

// restoreModel makes stored, the model kept with a session being resumed
// (the one it was created with or last switched to with /model or
// session/set_model), the main model again, as Claude Code's --resume
// does and Codex only warns of. Two things win over it: --model on the
// command line, which chose the model for this run, and a configuration
// that no longer offers it (it does not resolve: its provider is gone or
// has no key), when the configured model runs. It returns the notice that
// says which model runs and why, empty when the stored one runs and is
// the configured one anyway (or none is stored: sessions from before).
func (a *app) restoreModel(stored string) string {
	cur := a.currentModel("main")
	switch {
	case stored == "" || stored == cur:
		return ""
	case a.flags != nil && a.flags.model != "":
		return fmt.Sprintf("model %s from --model; this session last used %s", cur, stored)
	}
	if _, err := a.cfg.ResolveModel(stored); err != nil {
		return fmt.Sprintf("model %s: this session last used %s, which the configuration no longer offers (%v)", cur, stored, err)
	}
	if _, err := a.switchModel("main", stored); err != nil {
		return fmt.Sprintf("model %s: this session's model %s was not restored: %v", cur, stored, err)
	}
	return fmt.Sprintf("model %s, kept with this session (--model or /model chooses another)", stored)
}

// modelCommand is /model: show the main and small models, or switch one
// for the rest of this REPL (new conversations included).
func (r *repl) modelCommand() term.Command {
	a := r.a
	return term.Command{Name: "model", Usage: "/model [main|small] [NAME]",
		Description: "show the models, or switch the main (or small) one; the main one is kept with the session for a resume",
		Run: func(ctx context.Context, args string) (term.Result, error) {
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
				if role == "small" {
					// Only the main model is kept with a session.
					text, err := a.switchModel(role, f[0])
					return term.Result{Text: text}, err
				}
				text, err := a.setSessionModel(ctx, r.current().live, f[0])
				return term.Result{Text: text}, err
			}
			return term.Result{}, fmt.Errorf("usage: /model [main|small] [NAME]")
		}}
}
