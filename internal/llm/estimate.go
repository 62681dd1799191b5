package llm

// Token estimates are deliberately crude: they exist so that context
// accounting and spend limits still work when a provider reports no usage,
// not to match any tokenizer. Bytes rather than runes are counted because
// tokenizers spend roughly one token per CJK character (three UTF-8 bytes),
// which bytes/4 approximates far better than runes/4.

// messageOverhead approximates the tokens a chat template spends on a
// message's role markers and separators.
const messageOverhead = 4

// imageTokens approximates what one image costs: providers charge by
// tiles of the picture, around a thousand tokens for a screenshot.
const imageTokens = 1000

// EstimateTokens returns a rough token count for s: its length in bytes
// divided by four, rounded up.
func EstimateTokens(s string) int64 {
	return (int64(len(s)) + 3) / 4
}

// EstimateMessages returns a rough token count for a conversation: the
// estimate of every message's content and tool calls plus a small overhead
// per message. Reasoning is not counted because adapters do not send it back.
func EstimateMessages(msgs []Message) int64 {
	var n int64
	for _, m := range msgs {
		n += messageOverhead + EstimateTokens(m.Content) + imageTokens*int64(len(m.Images))
		for _, tc := range m.ToolCalls {
			n += EstimateTokens(tc.Name) + EstimateTokens(tc.Arguments)
		}
	}
	return n
}

// EstimateTools returns a rough token count for tool definitions as the
// model sees them.
func EstimateTools(defs []ToolDef) int64 {
	var n int64
	for _, d := range defs {
		// The schema's bytes are counted as they are: converting them to
		// a string copied every tool's schema on every request (a fan-out
		// estimates each specialist's request for its ledger).
		n += EstimateTokens(d.Name) + EstimateTokens(d.Description) + (int64(len(d.Parameters))+3)/4
	}
	return n
}
