package config

import (
	"os"
	"path/filepath"
	"strings"
)

// EnvFunc looks up an environment variable; os.LookupEnv is one. Tests
// inject a map so that nothing depends on the machine's environment.
type EnvFunc func(key string) (string, bool)

// lookup returns the variable's value with surrounding space trimmed;
// an unset variable and an empty one are the same.
func (f EnvFunc) lookup(key string) string {
	if f == nil {
		f = os.LookupEnv
	}
	v, _ := f(key)
	return strings.TrimSpace(v)
}

// UserDir is the directory of the user's odin.yaml: $XDG_CONFIG_HOME/odin,
// else ~/.config/odin, or "" when neither variable gives an absolute path
// (then no user file is read). A nil env means os.LookupEnv.
func UserDir(env EnvFunc) string {
	return xdgDir(env, "XDG_CONFIG_HOME", ".config")
}

// StateDir is where Odin keeps its session database and log:
// $XDG_STATE_HOME/odin, else ~/.local/state/odin, or "" when neither
// variable gives an absolute path. A nil env means os.LookupEnv.
func StateDir(env EnvFunc) string {
	return xdgDir(env, "XDG_STATE_HOME", filepath.Join(".local", "state"))
}

// DataDir is where Odin keeps what the user installs (plugins):
// $XDG_DATA_HOME/odin, else ~/.local/share/odin, or "" when neither
// variable gives an absolute path. A nil env means os.LookupEnv.
func DataDir(env EnvFunc) string {
	return xdgDir(env, "XDG_DATA_HOME", filepath.Join(".local", "share"))
}

// xdgDir follows the XDG base directory rule: a relative $XDG_* value is
// invalid and ignored.
func xdgDir(env EnvFunc, xdgVar, homeRel string) string {
	if dir := env.lookup(xdgVar); filepath.IsAbs(dir) {
		return filepath.Join(dir, "odin")
	}
	if home := env.lookup("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, homeRel, "odin")
	}
	return ""
}
