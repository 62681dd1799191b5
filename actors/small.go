package actors

import (
	"context"
	"sync"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// UsageSmallModel is a small model that also reports what a call cost, so
// that the work tools do with it (WebFetch, ContextSummarizer) is counted
// against the agent that called the tool.
type UsageSmallModel interface {
	tool.SmallModel
	CompleteWithUsage(ctx context.Context, system, user string) (text string, u messages.Usage, model string, err error)
}

// meteredSmall wraps an agent's small model and tallies its usage until the
// agent takes it. Tools call it concurrently.
type meteredSmall struct {
	inner tool.SmallModel

	mu    sync.Mutex
	usage map[string]messages.Usage // by model
}

func newMeteredSmall(inner tool.SmallModel) *meteredSmall {
	if inner == nil {
		return nil
	}
	return &meteredSmall{inner: inner, usage: map[string]messages.Usage{}}
}

// Complete implements tools.SmallModel.
func (m *meteredSmall) Complete(ctx context.Context, system, user string) (string, error) {
	u, ok := m.inner.(UsageSmallModel)
	if !ok {
		return m.inner.Complete(ctx, system, user)
	}
	text, usage, model, err := u.CompleteWithUsage(ctx, system, user)
	m.mu.Lock()
	m.usage[model] = m.usage[model].Add(usage)
	m.mu.Unlock()
	return text, err
}

// take returns and resets the tally, by model.
func (m *meteredSmall) take() map[string]messages.Usage {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.usage
	m.usage = map[string]messages.Usage{}
	return out
}
