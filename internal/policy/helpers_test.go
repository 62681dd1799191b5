package policy

import (
	"context"
	"sync"
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
