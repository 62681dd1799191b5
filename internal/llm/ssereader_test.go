package llm

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// sseEvents reads every event of body with next, as "type|data".
func sseEvents(next func() (string, []byte, bool), err func() error) []string {
	var out []string
	for {
		typ, data, ok := next()
		if !ok {
			break
		}
		out = append(out, typ+"|"+string(data))
	}
	if e := err(); e != nil {
		out = append(out, "error: "+e.Error())
	}
	return out
}

// The reader splits a stream into events exactly as openai-go's decoder,
// which it replaced, does: every provider's quirks reach the accumulator
// unchanged.
func TestSSEReaderMatchesOpenAIDecoder(t *testing.T) {
	long := strings.Repeat("x", 70<<10) // longer than the pooled line buffer
	bodies := []string{
		"data: {\"a\":1}\n\ndata: [DONE]\n\n",
		"data:{\"a\":1}\r\n\r\ndata:  two spaces\r\n\r\n",
		": keep-alive\n\nevent: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n",
		"event: ping\n\nevent: message\ndata: a\ndata: b\n\ndata: c\n\n",
		"data\n\ndata:\n\nid: 7\nretry: 10\ndata: d\n\n",
		"data: no blank line at the end",
		"data: " + long + "\n\ndata: after\n\n",
		"\n\n\ndata: e\n\n\n\nevent: x\n\n",
		"data: " + strings.Repeat("y", sseMaxLine+10) + "\n\n",
	}
	for i, body := range bodies {
		dec := ssestream.NewDecoder(&http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))})
		want := sseEvents(func() (string, []byte, bool) {
			if !dec.Next() {
				return "", nil, false
			}
			ev := dec.Event()
			return ev.Type, ev.Data, true
		}, dec.Err)
		r := newSSEReader(strings.NewReader(body))
		got := sseEvents(r.next, r.err)
		r.release()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("body %d: reader gave %d events %.200q, openai-go's decoder %d: %.200q", i, len(got), got, len(want), want)
		}
	}
}

// An event's data stays what was read while the next stream fills a
// reader from the pool.
func TestSSEReaderBuffersAreNotShared(t *testing.T) {
	a := newSSEReader(strings.NewReader("data: first\n\n"))
	_, data, ok := a.next()
	if !ok {
		t.Fatal("no event")
	}
	a.release()
	b := newSSEReader(strings.NewReader("data: XXXXXXXXXXXXXXXXXXXXXXXX\n\n"))
	if _, _, ok := b.next(); !ok {
		t.Fatal("no event")
	}
	b.release()
	if string(data) != "first\n" {
		t.Fatalf("the first event's data became %q", data)
	}
}
