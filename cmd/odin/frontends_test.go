package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/present/presenttest"
	"github.com/odin-code/odin/internal/term"
	"github.com/odin-code/odin/messages"
)

// replaySession is a term.Session that plays presenttest.GatedTurn for
// its first input.
type replaySession struct {
	mu  sync.Mutex
	sub chan messages.Envelope
}

func (s *replaySession) ID() string { return "s1" }
func (s *replaySession) Submit(body string, mode messages.Mode) messages.UserMessage {
	return s.SubmitImages(body, mode, nil)
}
func (s *replaySession) SubmitImages(body string, mode messages.Mode, _ []messages.Image) messages.UserMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range presenttest.GatedTurn("in1") {
		s.sub <- messages.Envelope{Session: "s1", Time: time.Unix(0, 0), Event: ev}
	}
	return messages.UserMessage{ID: "in1", Body: body, Mode: mode}
}
func (s *replaySession) Cancel(string) {}
func (s *replaySession) Queue(context.Context) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}
func (s *replaySession) Remove(context.Context, string) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}
func (s *replaySession) Subscribe(context.Context) <-chan messages.Envelope { return s.sub }
func (s *replaySession) Answer(string, policy.Decision) error               { return nil }
func (s *replaySession) Pending() []messages.ApprovalRequested              { return nil }
func (s *replaySession) Close(context.Context) error                        { return nil }

// TestFrontEndsAgreeOnRoundsAndCosts prints one recorded gated turn
// through odin run's text output and through the REPL (line mode) and
// reads the same gate rounds and the same cost from both; the viewer's
// half is internal/viewer's TestEventLogReadsLikeTheTerminal.
func TestFrontEndsAgreeOnRoundsAndCosts(t *testing.T) {
	wantRounds, wantCosts := presenttest.Want()

	var out, errw bytes.Buffer
	r := newRenderer("text", false, "/p", &out, &errw)
	var res messages.TurnResult
	for _, ev := range presenttest.GatedTurn("in1") {
		r.event(messages.Envelope{Session: "s1", Event: ev})
		if tf, ok := ev.(messages.TurnFinished); ok {
			res = tf.Result
		}
	}
	r.final(res, "s1")
	headless := errw.String() + out.String()

	var repl bytes.Buffer
	sess := &replaySession{sub: make(chan messages.Envelope, 256)}
	if _, err := term.Run(t.Context(), term.Options{In: strings.NewReader("add rate limiting\n"), Out: &repl, Session: sess}); err != nil {
		t.Fatalf("term.Run: %v", err)
	}

	for name, text := range map[string]string{"odin run": headless, "REPL": repl.String()} {
		if diff := cmp.Diff(wantRounds, presenttest.Rounds(text)); diff != "" {
			t.Errorf("%s: gate rounds (-want +got):\n%s\n%s", name, diff, text)
		}
		if diff := cmp.Diff(wantCosts, presenttest.Costs(text)); diff != "" {
			t.Errorf("%s: costs (-want +got):\n%s\n%s", name, diff, text)
		}
	}
}
