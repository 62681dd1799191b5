package helperproc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/helperproc"
)

// odinSide is Odin's end of an in-process helper: lines to the helper on
// enc, from it on dec; Serve's return arrives on served.
type odinSide struct {
	in     *io.PipeWriter
	enc    *json.Encoder
	dec    *json.Decoder
	served chan error
}

func serveInProcess(t *testing.T, oneAtATime bool, handle func(*helperproc.Server[msg], context.Context, msg) msg) *odinSide {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	o := &odinSide{in: inW, enc: json.NewEncoder(inW), dec: json.NewDecoder(outR), served: make(chan error, 1)}
	s := helperproc.NewServer[msg](outW, oneAtATime)
	go func() {
		o.served <- s.Serve(inR, func(ctx context.Context, m msg) msg { return handle(s, ctx, m) })
		_ = outW.Close()
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		_, _ = io.Copy(io.Discard, outR)
	})
	return o
}

func (o *odinSide) send(t *testing.T, m msg) {
	t.Helper()
	if err := o.enc.Encode(m); err != nil {
		t.Fatal(err)
	}
}

func (o *odinSide) read(t *testing.T) msg {
	t.Helper()
	var m msg
	if err := o.dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// events records the order in which handlers ran.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, s)
}

// TestServerOrder: calls run concurrently, or strictly one after another
// with oneAtATime.
func TestServerOrder(t *testing.T) {
	for _, one := range []bool{false, true} {
		var ev events
		release, started2 := make(chan struct{}), make(chan struct{})
		o := serveInProcess(t, one, func(_ *helperproc.Server[msg], _ context.Context, m msg) msg {
			ev.add("start " + m.Text)
			if m.Text == "1" {
				<-release
			} else {
				close(started2)
			}
			ev.add("end " + m.Text)
			return msg{Text: m.Text}
		})
		o.send(t, msg{Line: helperproc.Line{Op: "call", ID: 1}, Text: "1"})
		o.send(t, msg{Line: helperproc.Line{Op: "call", ID: 2}, Text: "2"})
		if !one {
			<-started2 // call 2 runs while call 1 waits
		}
		close(release)
		var results []uint64
		for range 2 {
			r := o.read(t)
			if r.Op != "result" || r.Text != map[uint64]string{1: "1", 2: "2"}[r.ID] {
				t.Fatalf("oneAtATime %v: %+v", one, r)
			}
			results = append(results, r.ID)
		}
		if !one {
			if slices.Index(ev.got, "end 2") > slices.Index(ev.got, "end 1") {
				t.Errorf("call 2 waited for call 1: %v", ev.got)
			}
			continue
		}
		if diff := cmp.Diff([]string{"start 1", "end 1", "start 2", "end 2"}, ev.got); diff != "" {
			t.Errorf("one at a time: order (-want +got):\n%s", diff)
		}
		if !slices.Equal(results, []uint64{1, 2}) {
			t.Errorf("results in order %v", results)
		}
	}
}

// TestServerRouting: a call's request carries its ID and Odin's response
// reaches it; a cancel line ends the call's context; the end of Odin's
// input fails a waiting request with ErrGone and Serve returns nil; an
// unknown line ends Serve with ErrUnknownLine.
func TestServerRouting(t *testing.T) {
	handle := func(s *helperproc.Server[msg], ctx context.Context, m msg) msg {
		switch m.Action {
		case "ask":
			r, err := s.Ask(ctx, m.ID, msg{Text: m.Text})
			if err != nil {
				return msg{Err: err.Error()}
			}
			return msg{Text: r.Text}
		case "hang":
			<-ctx.Done()
			return msg{Text: "cancelled"}
		}
		return msg{Err: "no action"}
	}
	o := serveInProcess(t, false, handle)
	o.send(t, msg{Line: helperproc.Line{Op: "call", ID: 7}, Action: "ask", Text: "q"})
	req := o.read(t)
	if rt := req.Route(); rt.Kind != helperproc.KindRequest || rt.Call != 7 || rt.Req == 0 || req.Text != "q" {
		t.Fatalf("request %+v", req)
	}
	o.send(t, msg{Line: helperproc.Line{Op: "response", ID: 7, Req: req.Req}, Text: "a"})
	if r := o.read(t); r.Op != "result" || r.ID != 7 || r.Text != "a" {
		t.Fatalf("result %+v", r)
	}

	o.send(t, msg{Line: helperproc.Line{Op: "call", ID: 8}, Action: "hang"})
	o.send(t, msg{Line: helperproc.Line{Op: "cancel", ID: 8}})
	if r := o.read(t); r.ID != 8 || r.Text != "cancelled" {
		t.Fatalf("after the cancel: %+v", r)
	}

	o.send(t, msg{Line: helperproc.Line{Op: "call", ID: 9}, Action: "ask", Text: "never answered"})
	o.read(t)
	_ = o.in.Close()
	if r := o.read(t); r.ID != 9 || r.Err != helperproc.ErrGone.Error() {
		t.Errorf("a request Odin left: %+v", r)
	}
	if err := <-o.served; err != nil {
		t.Errorf("Serve at the end of input: %v", err)
	}

	o = serveInProcess(t, false, handle)
	o.send(t, msg{Line: helperproc.Line{Op: "bogus"}})
	if err := <-o.served; !errors.Is(err, helperproc.ErrUnknownLine) {
		t.Errorf("an unknown line: %v", err)
	}
}
