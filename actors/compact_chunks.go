package actors

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

// A history larger than the summariser's context window is summarised in
// parts, each request holding what the window allows. The parts are
// rolled up in order: each request carries the summary so far and the
// next messages, and answers with the summary of everything up to them.
// Rolling rather than map-reduce because every request is bounded by
// construction (a summary is bounded by max_tokens, so summary + next
// part always fits), the summariser sees events in order and can let a
// later part correct an earlier one, a failure or cancel at part k costs
// only the requests made so far, and no merge step exists that could
// itself overflow the window; map-reduce would only buy parallelism,
// which a rate-limited provider would mostly take back.

// compactionMargin is the share of the summariser's window left unused:
// Odin's token estimate is crude (bytes/4), and tokenizers spend more on
// some text (code punctuation, CJK) than it counts.
const compactionMargin = 0.15

// compactionShrinks bounds how often a part refused by the provider as too
// long is retried with a smaller budget before the compaction fails.
const compactionShrinks = 3

// defaultSummaryTokens is the room kept for a summary when the model sets
// no max_output.
const defaultSummaryTokens = 8192

// rollingNote tells the summariser how to treat the summary carried from
// the previous part.
const rollingNote = "\n\nThe conversation is summarised in parts, in order. The first document is your summary of the conversation's earlier messages; " +
	"the second holds the messages that follow them. Write one summary of the whole conversation up to the last of these messages: " +
	"keep what still matters from the earlier summary, update what the new messages change, and keep the order of events."

// cutMarker replaces the middle of a message too large for one request.
const cutMarker = "\n[… %d bytes of this message were cut here so that it fits the summariser's context window …]\n"

// summaryBudget is what one summarisation request may hold, in estimated
// tokens: input for the whole prompt (system prompt, summary so far,
// messages), output the room kept for the answer, which also bounds the
// summary carried into the next request (cut to it if longer). maxTokens
// is sent as max_tokens: the model's max_output within output, or 0 (the
// provider decides) when it sets none, as before compaction had parts,
// since a reasoning model spends max_tokens on thinking too.
type summaryBudget struct {
	input     int64
	output    int64
	maxTokens int64
}

// newSummaryBudget divides a summariser's window: the margin off the top,
// then room for the answer; what is left is the request. A model with no
// known window (0) gets an unbounded input and its own output cap.
func newSummaryBudget(window, maxOutput int) summaryBudget {
	if window <= 0 {
		return summaryBudget{input: math.MaxInt64, output: int64(maxOutput), maxTokens: int64(max(maxOutput, 0))}
	}
	out := int64(maxOutput)
	if out <= 0 {
		out = min(defaultSummaryTokens, int64(window)/8)
	}
	// A huge max_output (half the window, as reasoning models allow) must
	// not starve the material: a summary needs far less.
	out = min(out, int64(window)/4)
	usable := int64(float64(window) * (1 - compactionMargin))
	b := summaryBudget{input: max(usable-out, 1), output: out}
	if maxOutput > 0 {
		b.maxTokens = out
	}
	return b
}

// compactUnit is the smallest piece of history a part may hold: one
// message and the tool results that follow it, so that a tool call is
// never summarised apart from its result. text is its transcript, cut in
// the middle when it alone would not fit one request.
type compactUnit struct {
	from, to int // history[from:to]
	text     string
	tokens   int64
	cut      bool
}

// compactUnits splits msgs into units, cutting any whose transcript is
// over room tokens down to room.
func compactUnits(msgs []llm.Message, room int64) []compactUnit {
	var units []compactUnit
	for i := 0; i < len(msgs); {
		j := i + 1
		for j < len(msgs) && msgs[j].Role == llm.RoleTool {
			j++
		}
		u := compactUnit{from: i, to: j, text: transcript(msgs[i:j])}
		u.text, u.cut = cutToTokens(u.text, room)
		u.tokens = llm.EstimateTokens(u.text)
		units = append(units, u)
		i = j
	}
	return units
}

// cutToTokens shortens s to at most room estimated tokens by cutting its
// middle, where a marker says how much is missing: the start of a message
// (the request, the command) and its end (the outcome, the error) say
// most about it.
func cutToTokens(s string, room int64) (string, bool) {
	if llm.EstimateTokens(s) <= room {
		return s, false
	}
	limit := int(min(room, math.MaxInt32/4)) * 4 // EstimateTokens(x) <= room iff len(x) <= 4*room
	marker := fmt.Sprintf(cutMarker, len(s))
	keep := limit - len(marker)
	if keep <= 0 {
		// No room even for the marker: what fits of the start.
		return s[:runeStart(s, max(limit, 0))], true
	}
	head := runeStart(s, keep/2)
	tail := runeAfter(s, len(s)-(keep-head))
	return s[:head] + fmt.Sprintf(cutMarker, tail-head) + s[tail:], true
}

// runeAfter moves i forward to the start of the next UTF-8 sequence
// unless it is at one.
func runeAfter(s string, i int) int {
	for i < len(s) && !utf8Start(s[i]) {
		i++
	}
	return i
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in.
func runeStart(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return i
}

// takeChunk is how many of units, from the first, fit in room tokens:
// always at least one (compactUnits made each fit on its own).
func takeChunk(units []compactUnit, room int64) int {
	n, used := 0, int64(0)
	for n < len(units) && (n == 0 || used+units[n].tokens <= room) {
		used += units[n].tokens
		n++
	}
	return n
}

// summariser runs one compaction's requests, off the mailbox.
type summariser struct {
	model  Model
	budget summaryBudget
	hist   []llm.Message // what is summarised: a copy the actor no longer touches
	// notice, if set, is told once when the history needs several
	// requests; spent, if set, of each response's usage as it arrives, so
	// that what a cancelled or failed compaction cost is recorded too.
	// Neither may block.
	notice func(string)
	spent  func(messages.Usage)
}

// summaryResult is what a compaction's requests produced.
type summaryResult struct {
	summary  string
	usage    messages.Usage
	requests int
	sent     int64 // estimated tokens of every request sent
}

// request builds the summarisation request for msgs history[from:to]
// (text is their transcript) after the summary so far (empty for the
// first part). The whole history in one request keeps the plain label.
func (s *summariser) request(summary, text string, from, to int) llm.Request {
	system := tools.SummarizePrompt(compactionFocus)
	var docs []tools.SummaryDoc
	label := "conversation so far"
	if summary != "" {
		system += rollingNote
		docs = append(docs, tools.SummaryDoc{Label: fmt.Sprintf("summary of the conversation before message %d", from+1), Text: summary})
	}
	if summary != "" || to < len(s.hist) {
		label = fmt.Sprintf("conversation, messages %d to %d of %d", from+1, to, len(s.hist))
	}
	docs = append(docs, tools.SummaryDoc{Label: label, Text: text})
	return llm.Request{Model: s.model.ID, Agent: "compaction", MaxTokens: int(min(s.budget.maxTokens, math.MaxInt32)), Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: system},
		{Role: llm.RoleUser, Content: tools.SummarizeMaterial(docs)},
	}}
}

// overhead is the estimated size of a request around its messages, with
// the given summary so far.
func (s *summariser) overhead(summary string) int64 {
	return llm.EstimateMessages(s.request(summary, "", 0, len(s.hist)-1).Messages)
}

// unitRoom is the most one unit may take: what a request leaves after its
// prompt and the largest summary so far it may carry.
func (s *summariser) unitRoom() int64 {
	if s.budget.input == math.MaxInt64 {
		return math.MaxInt64 / 8
	}
	worst := strings.Repeat("x", int(min(s.budget.output, math.MaxInt32/4))*4)
	return max(s.budget.input-s.overhead(worst), 1)
}

// minUnitRoom is the least history one request must be able to carry for
// a compaction by parts to be worth running.
const minUnitRoom = 256

// run summarises s.hist part by part. A part the provider refuses as too
// long is retried with a smaller budget (its tokenizer counts more than
// the estimate); any other failure ends the compaction, the summary so
// far unused, since the caller keeps the history until a summary of all
// of it exists.
func (s *summariser) run(ctx context.Context) (summaryResult, error) {
	var res summaryResult
	if room := s.unitRoom(); room < minUnitRoom {
		return res, fmt.Errorf("compaction: the summariser's context window leaves only %d tokens for history after its prompt", room)
	}
	units := compactUnits(s.hist, s.unitRoom())
	shrinks := 0
	summary := ""
	noticed := false
	for len(units) > 0 {
		// The slack covers the labels' digits, which overhead measures
		// with other numbers.
		room := max(s.budget.input-s.overhead(summary)-8, 1)
		n := takeChunk(units, room)
		if !noticed && n < len(units) && s.notice != nil {
			noticed = true
			var total int64
			for _, u := range units {
				total += u.tokens
			}
			s.notice(fmt.Sprintf("the history to compact (%d messages, about %d tokens) is larger than the summariser's context window: summarising it in about %d parts",
				len(s.hist), total, (total+room-s.budget.output-1)/max(room-s.budget.output, 1)))
		}
		text := chunkText(units[:n])
		from, to := units[0].from, units[n-1].to
		req := s.request(summary, text, from, to)
		// Defusing marker-like words in the material can lengthen it a
		// little: give back units until the request fits.
		for size := llm.EstimateMessages(req.Messages); size > s.budget.input; size = llm.EstimateMessages(req.Messages) {
			if n == 1 {
				t, _ := cutToTokens(text, max(llm.EstimateTokens(text)-(size-s.budget.input)-16, 1))
				if len(t) == len(text) {
					return res, fmt.Errorf("compaction: messages %d to %d do not fit the summariser's context window", from+1, to)
				}
				text = t
			} else {
				n--
				text, to = chunkText(units[:n]), units[n-1].to
			}
			req = s.request(summary, text, from, to)
		}
		size := llm.EstimateMessages(req.Messages)
		resp, err := s.model.Client.Stream(ctx, req, nil)
		res.requests++
		res.sent += size
		if resp != nil {
			u := s.model.Usage(resp.Usage, resp.UsageReported)
			res.usage = res.usage.Add(u)
			if s.spent != nil {
				s.spent(u)
			}
		}
		if err != nil {
			var le *llm.Error
			if errors.As(err, &le) && le.Kind == llm.KindContextLength && shrinks < compactionShrinks && ctx.Err() == nil {
				// Smaller parts from here on, and units cut to match.
				shrinks++
				s.budget.input = size / 2
				room := s.unitRoom()
				if room < minUnitRoom {
					return res, fmt.Errorf("compaction: the summariser refuses even %d tokens of history at once: %w", size, err)
				}
				units = offsetUnits(compactUnits(s.hist[from:], room), from)
				continue
			}
			return res, fmt.Errorf("compaction: summarising messages %d to %d of %d: %w", from+1, to, len(s.hist), err)
		}
		text = strings.TrimSpace(resp.Text)
		if text == "" {
			return res, fmt.Errorf("compaction: the summary of messages %d to %d of %d was empty", from+1, to, len(s.hist))
		}
		// A provider that ignores max_tokens must not grow the next
		// request past the window.
		summary = text
		if s.budget.output > 0 {
			summary, _ = cutToTokens(text, s.budget.output)
		}
		units = units[n:]
	}
	res.summary = summary
	return res, nil
}

// chunkText joins the transcripts of units.
func chunkText(units []compactUnit) string {
	var b strings.Builder
	for _, u := range units {
		b.WriteString(u.text)
	}
	return b.String()
}

// offsetUnits shifts units made from history[off:] to history indices.
func offsetUnits(units []compactUnit, off int) []compactUnit {
	for i := range units {
		units[i].from += off
		units[i].to += off
	}
	return units
}
