package viewer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/messages"
)

// askingSession is a served session with one pending approval; Answer
// records the decision, as the real session's approver would act on it.
type askingSession struct {
	bus *events.Bus

	mu      sync.Mutex
	pending []messages.ApprovalRequested
	answers chan policy.Decision
}

func (s *askingSession) ID() string { return "s1" }
func (s *askingSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	return messages.UserMessage{ID: "m", Body: body, Mode: mode}
}
func (s *askingSession) Cancel(string)    {}
func (s *askingSession) Bus() *events.Bus { return s.bus }
func (s *askingSession) Answer(id string, d policy.Decision) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.pending {
		if p.ID == id {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			s.answers <- d
			s.bus.Publish(messages.ApprovalResolved{ID: id, Decision: string(d)})
			return nil
		}
	}
	return errors.New("no such approval")
}
func (s *askingSession) Pending() []messages.ApprovalRequested {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]messages.ApprovalRequested(nil), s.pending...)
}
func (s *askingSession) Queue(context.Context) (*messages.QueueState, error) {
	return &messages.QueueState{Queued: []messages.UserMessage{}}, nil
}
func (s *askingSession) Remove(context.Context, string) (*messages.QueueState, error) {
	return s.Queue(context.Background())
}
func (s *askingSession) Close(context.Context) error { return nil }

type askingOpener struct{ s *askingSession }

func (o askingOpener) New(context.Context, string) (serve.Session, error) { return o.s, nil }
func (o askingOpener) Load(context.Context, string, string) (serve.Session, error) {
	return o.s, nil
}
func (askingOpener) Export(context.Context, string, string, string, io.Writer) error {
	return errors.New("no export")
}
func (askingOpener) Undo(context.Context, string) (string, error) { return "", errors.New("no undo") }
func (askingOpener) Stored(_ context.Context, id string) (string, error) {
	return "", fmt.Errorf("%w: %s", serve.ErrNotFound, id)
}

// TestApprovalAnsweredFromThePage: a pending approval of a live session
// appears on the page, and clicking "Deny" reaches the session as a deny
// decision through the API.
func TestApprovalAnsweredFromThePage(t *testing.T) {
	browser := findChromium()
	if browser == "" {
		t.Skip("no chromium on PATH: install Debian's chromium (apt-get install chromium) to run the browser tests")
	}
	sess := &askingSession{bus: events.New("s1", time.Now), answers: make(chan policy.Decision, 1),
		pending: []messages.ApprovalRequested{{ID: "a1", Origin: messages.Origin{Agent: "code"}, Tool: "Bash", Subject: "rm -rf build", Reason: "destructive command"}}}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Options{Opener: askingOpener{sess}, Token: "tok", Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	c := &client{base: hs.URL, token: "tok"}
	var created struct {
		ID string `json:"id"`
	}
	c.do(t, "POST", "/v1/sessions", map[string]string{"project": root}, &created)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var subject string
	must(t, "see the approval", chromedp.Run(ctx,
		chromedp.Navigate(hs.URL+"/#token=tok&session="+url.QueryEscape(created.ID)),
		chromedp.WaitVisible(`#approvals button[data-decision=deny]`, chromedp.ByQuery),
		chromedp.Text(`#approvals .approval code`, &subject, chromedp.ByQuery),
	))
	if subject != "rm -rf build" {
		t.Errorf("approval subject %q", subject)
	}
	must(t, "deny it", chromedp.Run(ctx, chromedp.Click(`#approvals button[data-decision=deny]`, chromedp.ByQuery)))
	select {
	case d := <-sess.answers:
		if d != policy.Reject {
			t.Errorf("the session got %q, want deny", d)
		}
	case <-ctx.Done():
		t.Fatal("the answer never reached the session")
	}
	must(t, "the approval is gone", chromedp.Run(ctx, chromedp.WaitNotPresent(`#approvals .approval`, chromedp.ByQuery)))

	// An input that waits in the queue is marked on the Orchestrator's lane
	// as its event arrives.
	sess.bus.Publish(messages.InputQueued{Input: messages.UserMessage{ID: "q1", Body: "then update the docs"}, Position: 1})
	var mark string
	must(t, "see the queued input", chromedp.Run(ctx,
		chromedp.WaitVisible(`[data-lane=orchestrator] .queued`, chromedp.ByQuery),
		chromedp.Text(`[data-lane=orchestrator] .queued`, &mark, chromedp.ByQuery)))
	if mark != "queued: then update the docs" {
		t.Errorf("queue mark %q", mark)
	}
}
