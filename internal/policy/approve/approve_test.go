package approve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// recorder is an Approver that answers from a script and records what it
// was asked.
type recorder struct {
	mu      sync.Mutex
	answer  Decision
	subject []string
}

func (r *recorder) Approve(_ context.Context, req Request) (Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subject = append(r.subject, req.Subject)
	return r.answer, nil
}

func (r *recorder) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.subject...)
}

func req(subject string, keys ...string) Request {
	r := Request{Kind: KindCommand, Subject: subject}
	for _, k := range keys {
		r.Findings = append(r.Findings, Finding{Action: Ask, Key: k, Reason: "needs approval: " + k})
	}
	return r
}

func TestHeadless(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // a headless approver must not even look at the context
	for _, c := range []struct {
		h    Headless
		want Decision
	}{{Headless{}, Reject}, {Headless{Yolo: true}, AllowOnce}} {
		got, err := c.h.Approve(ctx, req("touch x", "cmd:touch x"))
		if err != nil || got != c.want {
			t.Errorf("%+v.Approve = %v, %v; want %v", c.h, got, err, c.want)
		}
	}
}

func TestMemoryRemembersSessionApprovals(t *testing.T) {
	ctx := t.Context()
	inner := &recorder{answer: AllowSession}
	m := NewMemory(inner)
	steps := []struct {
		req  Request
		want Decision
	}{
		{req("a", "cmd:a"), AllowSession},                // asked, remembered
		{req("a again", "cmd:a"), AllowSession},          // not asked
		{req("a and b", "cmd:a", "cmd:b"), AllowSession}, // asked for b
		{req("b alone", "cmd:b"), AllowSession},          // not asked
		{req("no key", ""), AllowSession},                // keyless findings always ask
	}
	for _, s := range steps {
		got, err := m.Approve(ctx, s.req)
		if err != nil || got != s.want {
			t.Fatalf("Approve(%q) = %v, %v", s.req.Subject, got, err)
		}
	}
	if diff := cmp.Diff([]string{"a", "a and b", "no key"}, inner.asked()); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cmd:a", "cmd:b"}, m.Keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func TestMemoryAsksOnlyAboutWhatIsNew(t *testing.T) {
	var seen [][]string
	inner := approverFunc(func(_ context.Context, r Request) (Decision, error) {
		var keys []string
		for _, f := range r.Findings {
			keys = append(keys, f.Key)
		}
		seen = append(seen, keys)
		return AllowSession, nil
	})
	m := NewMemory(inner)
	for _, r := range []Request{req("a", "cmd:a"), req("a && b", "cmd:a", "cmd:b")} {
		if _, err := m.Approve(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([][]string{{"cmd:a"}, {"cmd:b"}}, seen); diff != "" {
		t.Errorf("findings passed on (-want +got):\n%s", diff)
	}
}

type approverFunc func(context.Context, Request) (Decision, error)

func (f approverFunc) Approve(ctx context.Context, r Request) (Decision, error) { return f(ctx, r) }

func TestMemoryOnceAndDenyAreNotRemembered(t *testing.T) {
	for _, d := range []Decision{AllowOnce, Reject} {
		inner := &recorder{answer: d}
		m := NewMemory(inner)
		for range 2 {
			if got, _ := m.Approve(t.Context(), req("x", "cmd:x")); got != d {
				t.Fatalf("got %v, want %v", got, d)
			}
		}
		if n := len(inner.asked()); n != 2 {
			t.Errorf("%v: asked %d times, want 2", d, n)
		}
	}
}

func TestMemoryPathGrants(t *testing.T) {
	m := NewMemory(&recorder{answer: AllowSession})
	if _, err := m.Approve(t.Context(), req("/data", PathKey(tool.AccessRead, "/data"))); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Approve(t.Context(), req("/out", PathKey(tool.AccessWrite, "/out"))); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key  string
		want bool
	}{
		{PathKey(tool.AccessRead, "/data"), true},
		{PathKey(tool.AccessRead, "/data/sub/file"), true},
		{PathKey(tool.AccessWrite, "/data/file"), false}, // read grants no write
		{PathKey(tool.AccessRead, "/data_evil/file"), false},
		{PathKey(tool.AccessRead, "/"), false},
		{PathKey(tool.AccessWrite, "/out/x"), true},
		{PathKey(tool.AccessRead, "/out/x"), true}, // write grants read
		{"cmd:/data", false},
	}
	for _, c := range cases {
		if got := m.Granted(c.key); got != c.want {
			t.Errorf("Granted(%q) = %v, want %v", c.key, got, c.want)
		}
	}
}

func TestParseDecision(t *testing.T) {
	for in, want := range map[string]Decision{"once": AllowOnce, "session": AllowSession, "deny": Reject, " Always ": AllowSession, "n": Reject} {
		if got, err := ParseDecision(in); err != nil || got != want {
			t.Errorf("ParseDecision(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseDecision("maybe"); err == nil {
		t.Error("ParseDecision(maybe) succeeded")
	}
}

func TestBusApproverRoundTrip(t *testing.T) {
	bus := events.New("s1", nil)
	ctx := t.Context()
	sub := bus.Subscribe(ctx, 16, true)
	n := 0
	a := NewBusApprover(bus, func() string { n++; return fmt.Sprintf("ap%d", n) })

	type result struct {
		d   Decision
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := a.Approve(ctx, Request{Kind: KindCommand, Tool: "ExecuteCommand", Subject: "make deploy",
			Origin: messages.Origin{Agent: "code", TaskID: "t7"}, Findings: []Finding{{Action: Ask, Reason: "not allowed"}}})
		done <- result{d, err}
	}()
	ev := next(t, sub)
	want := messages.ApprovalRequested{ID: "ap1", Origin: messages.Origin{Agent: "code", TaskID: "t7"}, Tool: "ExecuteCommand", Subject: "make deploy", Reason: "not allowed"}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Fatalf("request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]messages.ApprovalRequested{want}, a.Pending()); diff != "" {
		t.Fatalf("pending (-want +got):\n%s", diff)
	}
	if err := a.Answer("ap1", AllowSession); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || r.d != AllowSession {
		t.Fatalf("Approve = %v, %v", r.d, r.err)
	}
	if diff := cmp.Diff(messages.ApprovalResolved{ID: "ap1", Decision: "session"}, next(t, sub)); diff != "" {
		t.Fatalf("resolution (-want +got):\n%s", diff)
	}
	if err := a.Answer("ap1", AllowOnce); !errors.Is(err, ErrUnknownApproval) {
		t.Fatalf("second answer: %v, want ErrUnknownApproval", err)
	}
	if err := a.Answer("ap1", Decision("maybe")); err == nil {
		t.Fatal("invalid decision accepted")
	}
	if len(a.Pending()) != 0 {
		t.Fatalf("pending after answer: %v", a.Pending())
	}
}

func TestBusApproverCancelWithdraws(t *testing.T) {
	bus := events.New("s1", nil)
	sub := bus.Subscribe(t.Context(), 16, true)
	a := NewBusApprover(bus, func() string { return "only" })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := a.Approve(ctx, Request{Subject: "x"})
		done <- err
	}()
	if _, ok := next(t, sub).(messages.ApprovalRequested); !ok {
		t.Fatal("no request published")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Approve after cancel: %v", err)
	}
	if diff := cmp.Diff(messages.ApprovalResolved{ID: "only", Decision: "deny"}, next(t, sub)); diff != "" {
		t.Fatalf("withdrawal (-want +got):\n%s", diff)
	}
	if err := a.Answer("only", AllowOnce); !errors.Is(err, ErrUnknownApproval) {
		t.Fatalf("answer after cancel: %v", err)
	}
}

func TestBusApproverConcurrentRequests(t *testing.T) {
	bus := events.New("s1", nil)
	sub := bus.Subscribe(t.Context(), 64, true)
	var mu sync.Mutex
	n := 0
	a := NewBusApprover(bus, func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("id%02d", n) })
	const k = 8
	var wg sync.WaitGroup
	results := make(chan string, k)
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := a.Approve(t.Context(), Request{Subject: fmt.Sprintf("cmd %d", i)})
			if err != nil {
				t.Error(err)
			}
			results <- string(d)
		}()
	}
	// Answer each request as it arrives: even IDs allowed, odd denied.
	for resolved := 0; resolved < k; {
		switch ev := next(t, sub).(type) {
		case messages.ApprovalRequested:
			d := Reject
			if ev.ID[len(ev.ID)-1]%2 == 0 {
				d = AllowOnce
			}
			if err := a.Answer(ev.ID, d); err != nil {
				t.Fatal(err)
			}
		case messages.ApprovalResolved:
			resolved++
		}
	}
	wg.Wait()
	close(results)
	count := map[string]int{}
	for r := range results {
		count[r]++
	}
	if diff := cmp.Diff(map[string]int{"once": k / 2, "deny": k / 2}, count); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

func next(t *testing.T, sub <-chan messages.Envelope) messages.Event {
	t.Helper()
	select {
	case env := <-sub:
		return env.Event
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return nil
}
