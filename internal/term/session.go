package term

import (
	"context"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// Session is what the REPL drives: an Orchestrator session and its event
// stream. cmd/odin adapts *actors.Session, its bus and its approver to it.
// Implementations must be safe for concurrent use.
type Session interface {
	// ID names the session (shown in the banner and by /resume).
	ID() string
	// Submit queues an input; it never blocks.
	Submit(body string, mode messages.Mode) messages.UserMessage
	// SubmitImages queues an input with images attached.
	SubmitImages(body string, mode messages.Mode, images []messages.Image) messages.UserMessage
	// Cancel cancels the running turn; queued inputs stay queued.
	Cancel(reason string)
	// Queue returns the running input and the queue.
	Queue(ctx context.Context) (*messages.QueueState, error)
	// Remove drops a queued input before it starts.
	Remove(ctx context.Context, id string) (*messages.QueueState, error)
	// Subscribe streams the session's events until ctx ends. The REPL
	// reads it promptly, so it may be lossless.
	Subscribe(ctx context.Context) <-chan messages.Envelope
	// Answer resolves a pending approval request.
	Answer(id string, d policy.Decision) error
	// Pending lists the approval requests waiting for an answer (asked
	// before the REPL subscribed, e.g. after /resume).
	Pending() []messages.ApprovalRequested
	// Close ends the session: any running turn is cancelled.
	Close(ctx context.Context) error
}
