package tools

import (
	"io/fs"
)

// deniedRead returns the result refusing a path on the read deny list, or
// nil when none of paths (the argument as given, and resolved) is on it.
// The refusal names the rule, so the user can see what to lift; it asks
// the model not to work around it, since a command could not read the file
// either under bubblewrap.
func deniedRead(env *Env, paths ...string) *Result {
	if env == nil || env.DenyRead == nil {
		return nil
	}
	for _, p := range paths {
		if rule, ok := env.DenyRead.Check(p); ok {
			r := Errorf("%s is on the read deny list (rule %s): its contents are kept from the model. Do not try to read it another way; if the task needs something from it, ask the user.", p, rule)
			r.Denied = true
			return &r
		}
	}
	return nil
}

// walkExclude is the search walk's filter for the read deny list; nil
// when the Env has none.
func walkExclude(env *Env) func(string, fs.FileMode) bool {
	if env == nil || env.DenyRead == nil {
		return nil
	}
	return env.DenyRead.Hides
}
