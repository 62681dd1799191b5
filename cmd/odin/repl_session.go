package main

import (
	"context"
	"errors"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// replSession adapts a liveSession to term.Session.
type replSession struct {
	live *liveSession
	// listening is told when the UI subscribes (MCP failures reported
	// while the session started are published then); may be nil.
	listening func(*events.Bus)
}

// errNoApprover answers an approval in a session that cannot ask (line
// mode runs headless).
var errNoApprover = errors.New("this session does not ask for approvals")

func (s *replSession) ID() string { return s.live.ID }

func (s *replSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	return s.live.submit(body, mode, nil)
}

func (s *replSession) SubmitImages(body string, mode messages.Mode, images []messages.Image) messages.UserMessage {
	return s.live.submit(body, mode, images)
}

func (s *replSession) Cancel(reason string) { s.live.Session.Cancel(reason) }

func (s *replSession) Queue(ctx context.Context) (*messages.QueueState, error) {
	return s.live.Session.Queue(ctx)
}

func (s *replSession) Remove(ctx context.Context, id string) (*messages.QueueState, error) {
	return s.live.Session.Remove(ctx, id)
}

// Subscribe is lossless: the REPL drains it into its own batches at once,
// and a lost TurnFinished or ApprovalRequested would leave it waiting.
func (s *replSession) Subscribe(ctx context.Context) <-chan messages.Envelope {
	ch := s.live.Bus.Subscribe(ctx, 1024, true)
	if s.listening != nil {
		s.listening(s.live.Bus)
	}
	// Turns a crash interrupted run now that the UI sees their events.
	s.live.resume()
	return ch
}

func (s *replSession) Answer(id string, d policy.Decision) error {
	if s.live.Approver == nil {
		return errNoApprover
	}
	return s.live.Approver.Answer(id, d)
}

func (s *replSession) Pending() []messages.ApprovalRequested {
	if s.live.Approver == nil {
		return nil
	}
	return s.live.Approver.Pending()
}

func (s *replSession) Close(ctx context.Context) error { return s.live.Close(ctx) }

// AnswerElicitation answers an MCP server's request for input
// (term.Elicitor).
func (s *replSession) AnswerElicitation(id, action string, content map[string]any) error {
	if s.live.Elicitor == nil {
		return errNoApprover
	}
	return s.live.Elicitor.Answer(id, action, content)
}

// PendingElicitations lists the requests for input waiting (term.Elicitor).
func (s *replSession) PendingElicitations() []messages.ElicitationRequested {
	if s.live.Elicitor == nil {
		return nil
	}
	return s.live.Elicitor.Pending()
}
