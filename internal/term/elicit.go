package term

import (
	"errors"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/odin-code/odin/internal/elicit"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// Elicitor is a Session whose MCP servers' requests for input
// (messages.ElicitationRequested) the REPL answers: field by field in the
// input line, defaults applied, each value checked before the next.
type Elicitor interface {
	// AnswerElicitation resolves a pending request: accept (with the
	// form's content), decline or cancel.
	AnswerElicitation(id, action string, content map[string]any) error
	// PendingElicitations lists the requests waiting (asked before the
	// REPL subscribed).
	PendingElicitations() []messages.ElicitationRequested
}

// formState is the request being answered: its parsed form, the field
// being asked and the values given so far. A request whose schema cannot
// be read is declined at once.
type formState struct {
	req    messages.ElicitationRequested
	form   elicit.Form
	field  int
	values map[string]any
	// review is set once every field is answered: Enter sends.
	review bool
}

// addElicitation queues a request (once) and opens it when none is open.
func (m *ui) addElicitation(ev messages.ElicitationRequested) tea.Cmd {
	if m.elicit != nil && m.elicit.req.ID == ev.ID {
		return nil
	}
	for _, e := range m.elicits {
		if e.ID == ev.ID {
			return nil
		}
	}
	m.elicits = append(m.elicits, ev)
	return m.openElicitation()
}

// dropElicitation forgets a request answered or withdrawn elsewhere.
func (m *ui) dropElicitation(id, action string) {
	if m.elicit != nil && m.elicit.req.ID == id {
		m.elicit = nil
		m.print("    " + m.th.Paint(m.th.Warn, "⎿ input request "+action+": ") + "the call ended or it was answered elsewhere")
		m.ta.Reset()
		m.resize()
		_ = m.openElicitation()
		return
	}
	for i, e := range m.elicits {
		if e.ID == id {
			m.elicits = append(m.elicits[:i:i], m.elicits[i+1:]...)
			return
		}
	}
}

// openElicitation makes the next queued request the open one.
func (m *ui) openElicitation() tea.Cmd {
	for m.elicit == nil && len(m.elicits) > 0 {
		req := m.elicits[0]
		m.elicits = m.elicits[1:]
		st := &formState{req: req, values: map[string]any{}}
		if req.Mode == "form" {
			f, err := elicit.ParseForm(req.Schema)
			if err != nil {
				m.info(fmt.Sprintf("MCP server %s asked for input with a form Odin cannot show (%v): declined", termsafe.Line(req.Server), err), true)
				m.sendElicitation(req.ID, "decline", nil)
				continue
			}
			st.form = f
			st.review = len(f.Fields) == 0
		} else {
			st.review = true
		}
		m.elicit = st
	}
	return nil
}

// sendElicitation answers in the background.
func (m *ui) sendElicitation(id, action string, content map[string]any) {
	el, ok := m.sess.(Elicitor)
	if !ok {
		return
	}
	go func() {
		if err := el.AnswerElicitation(id, action, content); err != nil && m.send != nil {
			m.send(infoMsg{text: "input request: " + err.Error(), warn: true})
		}
	}()
}

// elicitKey handles a key while a request is open: Enter answers the
// field (empty takes its default), Esc cancels the request, Ctrl-D on an
// empty input declines it. Other keys edit the input (ok false).
func (m *ui) elicitKey(k tea.KeyMsg) (tea.Cmd, bool) {
	st := m.elicit
	switch k.Type {
	case tea.KeyEsc:
		return m.finishElicitation("cancel"), true
	case tea.KeyCtrlD:
		if m.ta.Value() != "" {
			return nil, false
		}
		return m.finishElicitation("decline"), true
	case tea.KeyCtrlC:
		// The turn's cancel also withdraws the request; say so here.
		return m.finishElicitation("cancel"), false
	case tea.KeyEnter:
		if k.Alt {
			return nil, false
		}
	default:
		return nil, false
	}
	in := m.ta.Value()
	m.ta.Reset()
	m.resize()
	if st.review {
		return m.finishElicitation("accept"), true
	}
	f := st.form.Fields[st.field]
	v, err := f.Parse(in)
	if err != nil {
		if errors.Is(err, elicit.ErrFieldRequired) {
			return m.flash(termsafe.Line(f.Label()) + ": a value is required"), true
		}
		return m.flash(termsafe.Line(f.Label()) + ": " + termsafe.Line(err.Error())), true
	}
	if v == nil {
		delete(st.values, f.Name)
	} else {
		st.values[f.Name] = v
	}
	st.field++
	if st.field >= len(st.form.Fields) {
		st.review = true
	}
	return nil, true
}

// finishElicitation sends the open request's answer and opens the next.
func (m *ui) finishElicitation(action string) tea.Cmd {
	st := m.elicit
	if st == nil {
		return nil
	}
	m.elicit = nil
	var content map[string]any
	if action == "accept" && st.req.Mode == "form" {
		content = st.values
	}
	label := map[string]string{"accept": "sent", "decline": "declined", "cancel": "cancelled"}[action]
	style := m.th.OK
	if action != "accept" {
		style = m.th.Warn
	}
	m.print("    " + m.th.Paint(style, "⎿ input "+label+": ") + "MCP server " + termsafe.Line(st.req.Server))
	m.sendElicitation(st.req.ID, action, content)
	m.ta.Reset()
	m.resize()
	return m.openElicitation()
}

// elicitView renders the open request: the server's message (untrusted:
// sanitised, never markdown), the answers so far and the field asked.
func (m *ui) elicitView(w int) string {
	st := m.elicit
	th := m.th
	var b strings.Builder
	bar := th.Paint(th.Warn, "│ ")
	title := fmt.Sprintf("%s MCP server %s asks", th.Paint(th.Warn, "╭ input requested:"), th.Paint(th.Bold, termsafe.Line(st.req.Server)))
	if n := len(m.elicits); n > 0 {
		title += th.Paint(th.Dim, fmt.Sprintf(" (%d more waiting)", n))
	}
	b.WriteString(Truncate(title, w) + "\n")
	for _, l := range strings.Split(strings.TrimSpace(st.req.Message), "\n") {
		for _, wl := range hardwrap(termsafe.Line(l), w-2) {
			b.WriteString(bar + wl + "\n")
		}
	}
	if st.req.Mode == "url" {
		b.WriteString(Truncate(bar+"open: "+th.Paint(th.Bold, termsafe.Line(st.req.URL)), w) + "\n")
		b.WriteString(Truncate(th.Paint(th.Warn, "╰ ")+th.Paint(th.Dim, "Enter: done (accept) · ctrl+d decline · esc cancel"), w) + "\n")
		return b.String()
	}
	for i, f := range st.form.Fields {
		if i >= st.field && !st.review {
			break
		}
		val := "(left out)"
		if v, ok := st.values[f.Name]; ok {
			val = elicit.Show(v)
		}
		b.WriteString(Truncate(bar+th.Paint(th.Dim, termsafe.Line(f.Label())+": ")+termsafe.Line(val), w) + "\n")
	}
	if st.review {
		b.WriteString(Truncate(th.Paint(th.Warn, "╰ ")+th.Paint(th.Dim, "Enter sends these · ctrl+d decline · esc cancel"), w) + "\n")
		return b.String()
	}
	f := st.form.Fields[st.field]
	head := fmt.Sprintf("%s (%d of %d)", th.Paint(th.Bold, termsafe.Line(f.Label())), st.field+1, len(st.form.Fields))
	b.WriteString(Truncate(bar+head, w) + "\n")
	if f.Description != "" {
		b.WriteString(Truncate(bar+th.Paint(th.Dim, termsafe.Line(f.Description)), w) + "\n")
	}
	for _, wl := range hardwrap(termsafe.Line(f.Hint()), w-2) {
		b.WriteString(bar + th.Paint(th.Dim, wl) + "\n")
	}
	b.WriteString(Truncate(th.Paint(th.Warn, "╰ ")+th.Paint(th.Dim, "type the value + Enter · ctrl+d decline · esc cancel"), w) + "\n")
	return b.String()
}
