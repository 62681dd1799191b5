package actors

import (
	"sync"

	"github.com/odin-code/odin/prompts"
)

// promptCache keeps the system prompts rendered for specialists: every
// specialist of a fan-out renders the same template with the same data,
// and executing the template was most of what starting one cost. A prompt
// is looked up by the template's name and every field of its data, so a
// changed date, mode or instruction renders anew. The zero value is ready;
// it is safe for concurrent use.
type promptCache struct {
	mu sync.Mutex
	m  map[promptKey]string
}

// promptKey is a template name and prompts.Data without Agents, which only
// the Orchestrator's prompt uses (it is not cached). A test keeps the
// fields in step with prompts.Data.
type promptKey struct {
	name         string
	root         string
	date         string
	os           string
	mode         string
	instructions string
	custom       string
	agentName    string
	writeScope   string
	webSearch    bool
}

// maxCachedPrompts bounds the cache; it is emptied when full (a new day, a
// long session through many modes and agents).
const maxCachedPrompts = 64

// render returns the rendered template name with d, from the cache when it
// was rendered before with the same data.
func (pc *promptCache) render(name string, d prompts.Data) (string, error) {
	if len(d.Agents) > 0 {
		return prompts.Render(name, d)
	}
	k := promptKey{name: name, root: d.Root, date: d.Date, os: d.OS, mode: d.Mode, instructions: d.Instructions,
		custom: d.Custom, agentName: d.AgentName, writeScope: d.WriteScope, webSearch: d.WebSearch}
	pc.mu.Lock()
	s, ok := pc.m[k]
	pc.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := prompts.Render(name, d)
	if err != nil {
		return "", err
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.m == nil || len(pc.m) >= maxCachedPrompts {
		pc.m = map[promptKey]string{}
	}
	pc.m[k] = s
	return s, nil
}
