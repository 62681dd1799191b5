package serve

import (
	"encoding/json"
	"sync"

	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/messages"
)

// record is one event as sent to SSE clients: its sequence number is the
// SSE id, so a client reconnecting with Last-Event-ID gets what it missed.
type record struct {
	seq  uint64
	typ  string
	data []byte
}

// hub keeps a session's recent events and wakes its SSE clients. It
// outlives passivation, so sequence numbers never repeat; the buffer is
// dropped when the session is passivated.
type hub struct {
	mu      sync.Mutex
	size    int
	buf     []record
	next    uint64 // seq of the next event; the first is 1
	changed chan struct{}
	closed  bool
}

func newHub(size int) *hub {
	return &hub{size: size, next: 1, changed: make(chan struct{})}
}

// add keeps env for the session's SSE clients; root is the session's
// project, inside which the paths of a tool call's line are shown
// relative to it, as the CLI shows them.
func (h *hub) add(root string, env messages.Envelope) {
	// Envelope's own MarshalJSON, not json.Marshal: that would validate
	// and compact its output again, a second pass over every event
	// (text deltas included) of every session.
	data, err := env.MarshalJSON()
	if err != nil {
		data, _ = json.Marshal(map[string]string{"type": "error", "error": err.Error()})
	} else {
		data = withLine(data, present.DescribeIn(root, env.Event))
	}
	h.append(env.Event.EventType(), data)
}

// withLine adds the event's line, as every front end words it, to its
// JSON object: the viewer shows it instead of wording the event itself.
// Events that print nothing (streamed text, usage) get none, so the
// stream's bulk costs no second encoding.
func withLine(data []byte, l present.Line) []byte {
	if l.Silent() || len(data) < 2 || data[len(data)-1] != '}' {
		return data
	}
	line, err := json.Marshal(l)
	if err != nil {
		return data
	}
	out := make([]byte, 0, len(data)+len(line)+9)
	out = append(out, data[:len(data)-1]...)
	out = append(out, `,"line":`...)
	out = append(out, line...)
	return append(out, '}')
}

func (h *hub) append(typ string, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.buf = append(h.buf, record{seq: h.next, typ: typ, data: data})
	h.next++
	// Trimmed back to size once a quarter over it, not at every event
	// past it: copying the whole buffer per event made a long session's
	// every event cost a thousand record copies.
	if len(h.buf) > h.size+h.size/4 {
		h.buf = append(h.buf[:0:0], h.buf[len(h.buf)-h.size:]...)
	}
	close(h.changed)
	h.changed = make(chan struct{})
}

// since returns the events after seq, whether some were already dropped
// (the client must resync), a channel closed at the next change, and
// whether the hub is closed.
func (h *hub) since(seq uint64) (out []record, gap bool, changed <-chan struct{}, closed bool) {
	out, from, changed, closed := h.after(seq)
	return out, from > seq, changed, closed
}

// after is since with where the records follow: seq, or the newest event
// no longer held when events after seq were dropped. A stream continues
// from there once it has told the client so; from seq it would find the
// same gap again at every later event.
func (h *hub) after(seq uint64) (out []record, from uint64, changed <-chan struct{}, closed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	oldest := h.next
	if len(h.buf) > 0 {
		oldest = h.buf[0].seq
	}
	from = seq
	if seq+1 < oldest {
		from = oldest - 1
	}
	// Sequence numbers in the buffer are consecutive: the events after
	// seq start at a computed index. The slice shares the buffer, capped
	// so that appends never reach it (a trim copies to a new array).
	if seq >= h.next {
		return nil, from, h.changed, h.closed
	}
	if i := int(max(seq+1, oldest) - oldest); i < len(h.buf) {
		out = h.buf[i:len(h.buf):len(h.buf)]
	}
	return out, from, h.changed, h.closed
}

// last is the seq of the newest event.
func (h *hub) last() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next - 1
}

// trim drops the buffered events (passivation).
func (h *hub) trim() {
	h.mu.Lock()
	h.buf = nil
	h.mu.Unlock()
}

// close sends a final event and ends every stream.
func (h *hub) close(typ string, data []byte) {
	h.append(typ, data)
	h.mu.Lock()
	h.closed = true
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
}
