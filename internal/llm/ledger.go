package llm

// Ledger parts, in the order a request lays them out for a provider's
// prefix cache: the system prompt, the tool definitions, the conversation
// so far, the context Odin injected around the user's words (repo map,
// hook context, reports of detached runs), and the new input since the
// model's last answer.
const (
	PartSystem  = "system"
	PartTools   = "tools"
	PartHistory = "history"
	PartContext = "context"
	PartInput   = "input"
)

// PartNames lists the ledger's parts in layout order.
var PartNames = []string{PartSystem, PartTools, PartHistory, PartContext, PartInput}

// PartTokens is one part of a request: its estimated tokens and how many
// of them the provider served from its prefix cache.
type PartTokens struct {
	Part   string `json:"part"`
	Tokens int64  `json:"tokens"`
	Cached int64  `json:"cached,omitempty"`
}

// Ledger splits req's prompt into its parts (estimated by EstimateTokens'
// rules) and attributes the provider's cached tokens to them. A prefix
// cache serves a request's leading bytes, so the cached tokens (u's, in
// the provider's units, scaled to the estimate) fill the parts in layout
// order: system messages, tools, then the other messages as sent. The
// result has one entry per PartNames, in that order.
func Ledger(req Request, u Usage) []PartTokens {
	parts := make([]PartTokens, len(PartNames))
	for i, n := range PartNames {
		parts[i].Part = n
	}
	const (
		sys = iota
		tools
		history
		context
		input
	)
	// The new input is what follows the model's last answer: the user's
	// message, or the results of the calls it made.
	newFrom := 0
	for i, m := range req.Messages {
		if m.Role == RoleAssistant {
			newFrom = i + 1
		}
	}
	// segs are the prompt's pieces in layout order, each charged to a part.
	type seg struct {
		part int
		n    int64
	}
	var segs []seg
	var rest []seg
	for i, m := range req.Messages {
		n := EstimateMessages(req.Messages[i : i+1])
		if m.Role == RoleSystem {
			segs = append(segs, seg{sys, n})
			continue
		}
		p := history
		if i >= newFrom {
			p = input
		}
		if m.Typed != "" && len(m.Typed) < len(m.Content) {
			// Odin's additions around the typed words.
			injected := EstimateTokens(m.Content) - EstimateTokens(m.Typed)
			rest = append(rest, seg{context, injected})
			n -= injected
		}
		rest = append(rest, seg{p, n})
	}
	segs = append(segs, seg{tools, EstimateTools(req.Tools)})
	segs = append(segs, rest...)
	var total int64
	for _, s := range segs {
		parts[s.part].Tokens += s.n
		total += s.n
	}
	cached := min(u.CachedTokens, u.PromptTokens)
	if u.PromptTokens > 0 && total > 0 {
		cached = cached * total / u.PromptTokens
	}
	for _, s := range segs {
		c := min(cached, s.n)
		parts[s.part].Cached += c
		cached -= c
	}
	return parts
}
