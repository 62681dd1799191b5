package actors

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/untrusted"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Budgets of the context modes and of the output filter, in estimated
// tokens (llm.EstimateTokens: about four bytes a token).
const (
	// forkBudget bounds the forked conversation; the oldest messages go
	// first when it is exceeded.
	forkBudget = 8000
	// forkToolOutput bounds each tool output kept in a forked conversation.
	forkToolOutput = 200
	// scopedSummaryBudget bounds the conversation summary of a scoped task.
	scopedSummaryBudget = 1000
	// scopedFileBudget bounds each file of a scoped task.
	scopedFileBudget = 4000
	// reportNotes bounds the free-text notes (the summary) that come back
	// to the parent with a report; the structured result is kept whole.
	reportNotes = 400
)

// changeSets are the change trackers open on this node, by ID, so that a
// Delegate names its turn's change set and the specialist finds it where
// it runs. Safe for concurrent use.
type changeSets struct {
	mu  sync.Mutex
	set map[string]ChangeTracker
}

func (cs *changeSets) put(id string, t ChangeTracker) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.set == nil {
		cs.set = map[string]ChangeTracker{}
	}
	cs.set[id] = t
}

func (cs *changeSets) get(id string) ChangeTracker {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.set[id]
}

func (cs *changeSets) drop(id string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.set, id)
}

// capTokens cuts s to about n estimated tokens.
func capTokens(s string, n int) string {
	if llm.EstimateTokens(s) <= int64(n) {
		return s
	}
	return shorten(s, n*4)
}

// forkContext renders the parent's conversation for a forked task: every
// user and assistant message in order, tool calls by name and arguments,
// tool outputs trimmed to forkToolOutput tokens each, and the whole cut to
// forkBudget tokens by dropping the oldest messages. The conversation
// quotes files, pages and commands, so it is fenced as data.
func forkContext(history []llm.Message) string {
	var parts []string
	for _, m := range history {
		var b strings.Builder
		switch m.Role {
		case llm.RoleUser:
			fmt.Fprintf(&b, "[user] %s", m.Content)
		case llm.RoleAssistant:
			b.WriteString("[assistant]")
			if m.Content != "" {
				b.WriteString(" " + m.Content)
			}
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "\n  called %s %s", tc.Name, capTokens(tc.Arguments, forkToolOutput))
			}
		case llm.RoleTool:
			fmt.Fprintf(&b, "[%s result] %s", m.Name, capTokens(m.Content, forkToolOutput))
		default:
			continue
		}
		parts = append(parts, b.String())
	}
	var total int64
	start := len(parts)
	for start > 0 {
		n := llm.EstimateTokens(parts[start-1]) + 1
		if total+n > forkBudget {
			break
		}
		total += n
		start--
	}
	if start == len(parts) {
		return ""
	}
	f := untrusted.NewFence(untrusted.Data, "(the Orchestrator's conversation, forked to you)")
	head := "# The conversation so far (forked from the Orchestrator; tool outputs trimmed"
	if start > 0 {
		head += fmt.Sprintf(", %d older messages left out", start)
	}
	return head + ")\n" + f.Rule() + "\n" + f.Wrap(strings.Join(parts[start:], "\n")) + "\n"
}

// scopedSummary is the compact summary of a scoped task: the user's
// requests and the Orchestrator's answers, newest kept first within
// scopedSummaryBudget, without tool calls or outputs. It is built from the
// history alone (no model call), so it costs nothing and is the same every
// time.
func scopedSummary(history []llm.Message) string {
	var lines []string
	var total int64
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		var line string
		switch {
		case m.Role == llm.RoleUser && m.Content != "":
			line = "- user asked: " + oneLine(m.Content, 300)
		case m.Role == llm.RoleAssistant && m.Content != "":
			line = "- orchestrator said: " + oneLine(m.Content, 300)
		default:
			continue
		}
		n := llm.EstimateTokens(line)
		if total+n > scopedSummaryBudget {
			break
		}
		total += n
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	f := untrusted.NewFence(untrusted.Data, "(a summary of the Orchestrator's conversation)")
	return "# Summary of the conversation so far\n" + f.Rule() + "\n" + f.Wrap(strings.Join(lines, "\n")) + "\n"
}

func oneLine(s string, n int) string {
	return shorten(strings.Join(strings.Fields(s), " "), n)
}

// scopedFiles reads the files a scoped task names through the
// specialist's own path guard (so a scoped task reaches nothing its agent
// could not read) and fences their content.
func scopedFiles(ctx context.Context, env *tool.Env, files []string) string {
	if len(files) == 0 {
		return ""
	}
	f := untrusted.NewFence(untrusted.Data, "(files the Orchestrator gave you)")
	var b strings.Builder
	b.WriteString("# Files the Orchestrator gave you\n" + f.Rule() + "\n")
	for _, name := range files {
		p, err := env.Guard.Resolve(ctx, name, tool.AccessRead)
		if err != nil {
			fmt.Fprintf(&b, "## %s\n(not readable: %v)\n", name, err)
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(&b, "## %s\n(not readable: %v)\n", name, err)
			continue
		}
		fmt.Fprintf(&b, "## %s\n%s\n", relPath(env.Root, p), f.Wrap(capTokens(string(data), scopedFileBudget)))
	}
	return b.String()
}

// taskText is a specialist's instruction: the context its parent gave it
// (rendered by the parent, or the files it read itself), the
// thoroughness level, then the brief.
func taskText(d *messages.Delegate, files string) string {
	var b strings.Builder
	if d.ContextText != "" {
		b.WriteString(d.ContextText + "\n")
	}
	if files != "" {
		b.WriteString(files + "\n")
	}
	if note := thoroughnessNote(d.Thoroughness); note != "" {
		b.WriteString(note + "\n\n")
	}
	if b.Len() > 0 {
		b.WriteString("# Your task\n")
	}
	b.WriteString(d.Brief)
	return b.String()
}

// outputFilter keeps what returns to the parent within budget: the
// structured result whole, the notes (summary) cut to reportNotes tokens.
func outputFilter(r *messages.Report) *messages.Report {
	cp := *r
	cp.Summary = capTokens(r.Summary, reportNotes)
	return &cp
}
