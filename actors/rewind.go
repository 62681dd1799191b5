package actors

import (
	"strings"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
)

// RewindPoint is one message the user sent in a session's conversation
// as the model sees it now: a point `odin rewind` and /rewind can go
// back to (the state just before it was sent).
type RewindPoint struct {
	// N numbers the points from 1, oldest first.
	N int
	// Index is the message's position in the history it was found in.
	Index int
	// Seq and ID identify the stored message.
	Seq int64
	ID  string
	// At is when the message was sent: the file checkpoints of its turn
	// and every later one were taken after it.
	At time.Time
	// Text is what the user typed, without the context Odin added to it.
	Text string
}

// detachedInboxPrefix starts an input that carries the reports of detached
// runs before the user's text (takeInbox).
const detachedInboxPrefix = "[Odin] Detached agent runs finished since your last turn"

// RewindNotePrefix starts the note that stands for an empty conversation
// after a rewind to the first message.
const RewindNotePrefix = "[Odin] The conversation was rewound"

// RewindPoints lists the user's inputs in msgs (a session's history as
// store.Messages returns it, in order). The Orchestrator's own notes in
// the user role (a compaction summary, gate outcomes, hook feedback, a
// refusal of "done") are not inputs.
func RewindPoints(msgs []store.Message) []RewindPoint {
	var out []RewindPoint
	for i, m := range msgs {
		if m.Role != llm.RoleUser {
			continue
		}
		text := m.Text()
		if !isInput(text) {
			continue
		}
		out = append(out, RewindPoint{N: len(out) + 1, Index: i, Seq: m.Seq, ID: m.ID, At: m.CreatedAt, Text: inputText(text)})
	}
	return out
}

func isInput(text string) bool {
	switch {
	case strings.HasPrefix(text, detachedInboxPrefix):
		return true
	case strings.HasPrefix(text, "[Odin]"),
		strings.HasPrefix(text, summaryPrefix),
		strings.HasPrefix(text, "A Stop hook asks you to continue"),
		strings.HasPrefix(text, "Before your report reaches the Orchestrator"):
		return false
	}
	return true
}

// inputText strips what Odin added to an input: the reports of detached
// runs before it, hook context and the repository map after it.
func inputText(text string) string {
	for _, tag := range []string{"\n\n<hook_context>\n", "\n\n<repo_map>\n"} {
		if i := strings.Index(text, tag); i >= 0 {
			text = text[:i]
		}
	}
	if strings.HasPrefix(text, detachedInboxPrefix) {
		// The reports come first; the user's text is the last paragraph
		// (a text of several paragraphs shows its last, which is enough
		// to recognise it in a picker).
		if i := strings.LastIndex(text, "\n\n"); i >= 0 {
			text = text[i+2:]
		}
	}
	return strings.TrimSpace(text)
}
