package repl

import "strings"

// userWords is a user message as the user typed it: the Orchestrator's
// first user message carries its role before "# Conversation" (issue 37:
// the system message is the preamble every agent of a session shares).
func userWords(text string) string {
	if _, rest, ok := strings.Cut(text, "\n# Conversation\n"); ok && strings.HasPrefix(text, "# Your role\n") {
		return rest
	}
	return text
}
