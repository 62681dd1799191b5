package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/compat"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/termsafe"
)

// loadLeavingOut loads the configuration without the sources that made
// first fail — the config files that do not load, the ODIN_* variables
// and flags with a bad value — so that `odin doctor` can check the rest
// of the machine and project with what does load (built-in defaults at
// worst). opts is changed to match, so that later loads with it (the
// untrusted reload) leave out the same sources. The failure holds every
// problem found on the way (a source left out can hide another's) and
// names the sources left out.
func loadLeavingOut(cache *config.Cache, opts *config.LoadOptions, foreign *compat.Result, first error) (*config.Config, *config.Sources, *configFailure, error) {
	fail := &configFailure{err: first}
	err := first
	dropped := map[string]bool{} // environment variables left out
	lookup, environ := opts.LookupEnv, opts.Environ
	if lookup == nil {
		lookup = os.LookupEnv
	}
	opts.LookupEnv = func(k string) (string, bool) {
		if dropped[k] {
			return "", false
		}
		return lookup(k)
	}
	if environ != nil {
		opts.Environ = func() []string {
			return slices.DeleteFunc(environ(), func(kv string) bool {
				k, _, _ := strings.Cut(kv, "=")
				return dropped[k]
			})
		}
	}
	// Each round leaves out at least one more source; there are few.
	for round := 0; ; round++ {
		var ce *config.Error
		if !errors.As(err, &ce) {
			return nil, nil, fail, err
		}
		if round > 0 {
			all := &config.Error{}
			errors.As(fail.err, &all)
			fail.err = &config.Error{Problems: append(slices.Clone(all.Problems), ce.Problems...)}
		}
		progress := false
		for _, p := range ce.Problems {
			switch {
			case p.Source == "flags":
				if len(opts.Flags) > 0 {
					opts.Flags, progress = nil, true
					fail.leftOut = append(fail.leftOut, "the command-line flags")
				}
			case strings.HasPrefix(p.Source, "env "):
				if k := strings.TrimPrefix(p.Source, "env "); !dropped[k] {
					dropped[k], progress = true, true
					fail.leftOut = append(fail.leftOut, "$"+k)
				}
			case p.Source != "":
				// A file, named as Load names it: absolute, or relative
				// to the current directory.
				path, aerr := filepath.Abs(p.Source)
				if aerr == nil && !slices.Contains(opts.Skip, path) {
					opts.Skip, progress = append(opts.Skip, path), true
					fail.leftOut = append(fail.leftOut, p.Source)
				}
			}
		}
		if !progress {
			return nil, nil, fail, err
		}
		cfg, src, lerr := loadConfig(cache, opts, foreign)
		if lerr == nil {
			return cfg, src, fail, nil
		}
		err = lerr
	}
}

// configFailure is why the configuration did not load, for `odin doctor`
// to report, and the sources its other checks ran without.
type configFailure struct {
	err     error
	leftOut []string
}

// add records one more problem, outside the config loader (a deny_read
// pattern that does not compile), and what was left out for it; f may be
// nil.
func (f *configFailure) add(err error, leftOut string) *configFailure {
	if f == nil {
		return &configFailure{err: err, leftOut: []string{leftOut}}
	}
	return &configFailure{err: errors.Join(f.err, err), leftOut: append(slices.Clone(f.leftOut), leftOut)}
}

// checkStore opens the session store as a session would and counts this
// project's sessions: a store that does not open (a corrupt or unwritable
// database, a server that refuses) stops every session. A database file
// not created yet is fine — the first session creates it — and doctor
// does not create it.
func checkStore(a *app, w io.Writer) (bool, string) {
	where := a.cfg.Store.URL
	if where == "" {
		where = a.cfg.Store.Path
		if where == "" && a.stateDir != "" {
			where = filepath.Join(a.stateDir, "odin.db")
		}
		if _, err := os.Stat(where); where != "" && errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(w, "store: %s (not created yet; the first session creates it)\n", where)
			return true, ""
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), doctorProbeTimeout)
	defer cancel()
	st, err := a.openStore(ctx)
	if err != nil {
		fmt.Fprintf(w, "store: does not open: %s\n", termsafe.Line(firstLine(err.Error())))
		return false, "every session needs the store: fix or move the database (store.path, store.url or ODIN_STORE_URL)"
	}
	list, err := st.Sessions(ctx, store.SessionQuery{Project: a.root})
	if err != nil {
		fmt.Fprintf(w, "store: %s opens, but cannot list sessions: %s\n", termsafe.Line(store.RedactURL(where)), termsafe.Line(firstLine(err.Error())))
		return false, "every session needs the store: fix or move the database (store.path, store.url or ODIN_STORE_URL)"
	}
	fmt.Fprintf(w, "store: %s (opens; %d session%s of this project)\n", termsafe.Line(store.RedactURL(where)), len(list), pluralS(len(list)))
	return true, ""
}
