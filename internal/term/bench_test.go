package term

import (
	"io"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/odin-code/odin/messages"
)

// BenchmarkStreamDelta is the UI's cost of one streamed text delta: the
// update (Markdown, status) and the view Bubble Tea renders after it. It
// bounds how much a fast stream can delay a keystroke's echo.
func BenchmarkStreamDelta(b *testing.B) {
	f := newFake("s", nil)
	m, _ := newUI(b.Context(), Options{Session: f, Out: io.Discard, Mode: messages.ModeEdit})
	m.out = newPrinter(func(tea.Msg) {})
	m.width = 120
	o := messages.Origin{Agent: "orchestrator"}
	m.events([]messages.Envelope{{Event: messages.TurnStarted{Input: messages.UserMessage{ID: "a", Body: "x", Mode: messages.ModeEdit}}},
		{Event: messages.AgentStarted{TaskID: "t", Agent: "search", Description: "look"}}})
	pieces := strings.SplitAfter(strings.Repeat("The **parser** reads `flags` and _options_ line by line.\n", 20), " ")
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		m.events([]messages.Envelope{{Event: messages.TextDelta{Origin: o, Text: pieces[i%len(pieces)]}}})
		_ = m.View()
		if i%512 == 0 {
			m.out.mu.Lock()
			m.out.lines = nil
			m.out.mu.Unlock()
		}
	}
}
