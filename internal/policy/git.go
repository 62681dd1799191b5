package policy

// GitArgs returns the arguments for one of Odin's own git invocations:
// args preceded by global options that keep a repository's configuration
// from running code. A bare repository is used only when named explicitly
// (safe.bareRepository=explicit, so a bare repository planted inside the
// project cannot be picked up by discovery), core.fsmonitor is off (it names
// a program git runs on status and diff), repository hooks are never run
// (core.hooksPath points at /dev/null) and no pager is started.
//
// Use with GitEnv, through the session's sandbox launcher:
// sandbox.Spec{Args: append([]string{"git"}, policy.GitArgs("status")...), Env: policy.GitEnv()}.
func GitArgs(args ...string) []string {
	out := make([]string, 0, len(args)+7)
	out = append(out,
		"-c", "safe.bareRepository=explicit",
		"-c", "core.fsmonitor=false",
		"-c", "core.hooksPath=/dev/null",
		"--no-pager",
	)
	return append(out, args...)
}

// GitEnv returns environment entries to add to the sandbox's filtered
// environment of Odin's own git invocations: the same settings as GitArgs
// as command-line-level configuration (so a git started by a helper that
// forgot GitArgs is covered too), the system gitconfig skipped, no terminal
// prompts, no pager and no optional index locks (a status does not rewrite
// the index). Later entries win in os/exec, so appending overrides
// inherited values.
func GitEnv() []string {
	return []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_CONFIG_COUNT=3",
		"GIT_CONFIG_KEY_0=safe.bareRepository",
		"GIT_CONFIG_VALUE_0=explicit",
		"GIT_CONFIG_KEY_1=core.fsmonitor",
		"GIT_CONFIG_VALUE_1=false",
		"GIT_CONFIG_KEY_2=core.hooksPath",
		"GIT_CONFIG_VALUE_2=/dev/null",
	}
}

// CommandGitEnv returns environment entries for the shell of
// ExecuteCommand, so that the git commands the model runs (which the command
// policy may classify as read-only, e.g. git status) cannot be turned into
// code execution by the repository: no bare-repository discovery and no
// fsmonitor program. Hooks stay enabled there, because a commit the user
// allowed should run the project's hooks as it would for the user.
func CommandGitEnv() []string {
	return []string{
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=safe.bareRepository",
		"GIT_CONFIG_VALUE_0=explicit",
		"GIT_CONFIG_KEY_1=core.fsmonitor",
		"GIT_CONFIG_VALUE_1=false",
	}
}
