package policy

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
