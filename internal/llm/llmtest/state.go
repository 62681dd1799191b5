package llmtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// book hands out a script's steps: per agent, the first unused step whose
// When matches. It is shared by Server and Client.
type book struct {
	mu     sync.Mutex
	script *Script
	used   map[string][]bool
	// first is, per agent, the index of its first unused step: the search
	// starts there, not at the top of a list a long benchmark script has
	// mostly used up (the lock is held while it searches).
	first map[string]int
}

func newBook(s *Script) *book {
	b := &book{script: s, used: map[string][]bool{}, first: map[string]int{}}
	for agent, steps := range s.Agents {
		b.used[agent] = make([]bool, len(steps))
	}
	return b
}

// pool returns the agent whose steps serve agent: itself, or the default
// agent when the script has no steps for it.
func (b *book) pool(agent string) string {
	if agent == "" || len(b.script.Agents[agent]) == 0 {
		return DefaultAgent
	}
	return agent
}

// take marks and returns the step for a request of agent whose last turn
// says texts. ok is false when no unused step matches.
func (b *book) take(agent string, texts []string) (pool string, idx int, st Step, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pool = b.pool(agent)
	steps, used := b.script.Agents[pool], b.used[pool]
	for i := b.first[pool]; i < len(steps); i++ {
		if used[i] || !matches(steps[i].When, texts) {
			continue
		}
		used[i] = true
		for b.first[pool] < len(used) && used[b.first[pool]] {
			b.first[pool]++
		}
		return pool, i, steps[i], true
	}
	return pool, -1, Step{}, false
}

// unused describes the steps no request consumed, for tests that want the
// whole script played.
func (b *book) unused() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, agent := range b.script.agentNames() {
		for i, s := range b.script.Agents[agent] {
			if !b.used[agent][i] {
				out = append(out, fmt.Sprintf("%s[%d]%s", agent, i, describe(s)))
			}
		}
	}
	return out
}

func describe(s Step) string {
	var parts []string
	if s.When != "" {
		parts = append(parts, fmt.Sprintf("when %q", s.When))
	}
	switch {
	case s.Status != 0:
		parts = append(parts, fmt.Sprintf("status %d", s.Status))
	case len(s.ToolCalls) > 0:
		names := make([]string, len(s.ToolCalls))
		for i, tc := range s.ToolCalls {
			names[i] = tc.Name
		}
		parts = append(parts, "calls "+strings.Join(names, ","))
	case s.Text != "":
		parts = append(parts, fmt.Sprintf("text %q", clip(s.Text, 40)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func matches(when string, texts []string) bool {
	if when == "" {
		return true
	}
	for _, t := range texts {
		if strings.Contains(t, when) {
			return true
		}
	}
	return false
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// gates implement Step.Hold: a named gate stays shut until Release, and
// records that a request waited at it.
type gates struct {
	mu sync.Mutex
	m  map[string]*gate
}

type gate struct {
	held     chan struct{} // closed when a request first waits here
	released chan struct{} // closed by Release
	heldOnce sync.Once
	relOnce  sync.Once
}

func (g *gates) get(name string) *gate {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]*gate{}
	}
	x, ok := g.m[name]
	if !ok {
		x = &gate{held: make(chan struct{}), released: make(chan struct{})}
		g.m[name] = x
	}
	return x
}

// wait parks until the gate is released or ctx (or stop) ends.
func (g *gates) wait(ctx context.Context, stop <-chan struct{}, name string) error {
	x := g.get(name)
	x.heldOnce.Do(func() { close(x.held) })
	select {
	case <-x.released:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return context.Canceled
	}
}

// release opens the gate for every request held there now or later.
func (g *gates) release(name string) {
	x := g.get(name)
	x.relOnce.Do(func() { close(x.released) })
}

// waitHeld returns once a request has waited at the gate.
func (g *gates) waitHeld(ctx context.Context, name string) error {
	select {
	case <-g.get(name).held:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("llmtest: no request held at %q: %w", name, ctx.Err())
	}
}

// sleep waits d unless ctx or stop ends first.
func sleep(ctx context.Context, stop <-chan struct{}, d Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(d))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return context.Canceled
	}
}
