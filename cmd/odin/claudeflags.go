package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// claudeFlags are Claude Code's headless flags, so a script written for
// `claude -p` runs with `odin -p` unchanged (docs/claude-stream.md).
type claudeFlags struct {
	inputFormat     string
	verbose         bool
	permissionMode  string
	allowedTools    []string
	disallowedTools []string
	appendSystem    string
}

func (f *claudeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.inputFormat, "input-format", "text", "input format: text (the task argument or stdin) or stream-json (Claude Code's user messages, one JSON object a line on stdin, each answered in turn)")
	fl.BoolVar(&f.verbose, "verbose", false, "accepted for Claude Code's scripts (claude -p needs it with stream-json); Odin's streams are always complete")
	fl.StringVar(&f.permissionMode, "permission-mode", "", "Claude Code's permission mode: default or acceptEdits (edit mode), plan (plan mode), bypassPermissions (--yolo)")
	fl.StringSliceVar(&f.allowedTools, "allowedTools", nil, `Claude Code's tool rules to allow: "Bash(git diff:*)" allows the command pattern 'git diff *'; tool names are allowed by the mode already`)
	fl.StringSliceVar(&f.disallowedTools, "disallowedTools", nil, `Claude Code's tool rules to refuse: "Bash(curl:*)" forbids the command pattern 'curl *'`)
	fl.StringVar(&f.appendSystem, "append-system-prompt", "", "text appended to the Orchestrator's system prompt")
}

// claudeBash is a Bash(...) rule: Bash(cmd:*) (a prefix), Bash(cmd *) or
// Bash(cmd) (Claude's command patterns).
var claudeBash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Bash\((.*)\)$`) })

// claudeTools are Claude Code's tool names that Odin's modes already
// allow (reading and, in edit mode, writing inside the project), so
// allowing them changes nothing.
var claudeTools = map[string]bool{"Read": true, "Edit": true, "MultiEdit": true, "Write": true, "Glob": true,
	"Grep": true, "LS": true, "NotebookEdit": true, "TodoWrite": true, "Task": true, "WebFetch": true, "WebSearch": true}

// commandPattern turns a Bash rule's body into Odin's command pattern.
func commandPattern(rule string) (string, error) {
	m := claudeBash().FindStringSubmatch(strings.TrimSpace(rule))
	if m == nil {
		return "", fmt.Errorf("not a Bash(...) rule")
	}
	body := strings.TrimSpace(m[1])
	if body == "" {
		return "*", nil
	}
	if prefix, ok := strings.CutSuffix(body, ":*"); ok {
		return strings.TrimSpace(prefix) + " *", nil
	}
	return body, nil
}

// apply maps the flags onto Odin's: modes, --yolo, allowed and forbidden
// command patterns. A rule Odin cannot honour is a usage error naming it,
// never dropped: a script that relied on it would otherwise run wider
// than its author meant.
func (f *claudeFlags) apply(g *globalFlags) error {
	switch f.inputFormat {
	case "text", "stream-json":
	default:
		return usageError("--input-format must be text or stream-json (got %q)", f.inputFormat)
	}
	switch f.permissionMode {
	case "":
	case "default", "acceptEdits":
		if g.mode == "" {
			g.mode = "edit"
		}
	case "plan":
		g.mode = "plan"
	case "bypassPermissions":
		g.yolo = true
	default:
		return usageError("--permission-mode must be default, acceptEdits, plan or bypassPermissions (got %q)", f.permissionMode)
	}
	for _, rule := range f.allowedTools {
		if p, err := commandPattern(rule); err == nil {
			if p == "*" {
				return usageError("--allowedTools %q would allow every command; use --yolo if that is meant", rule)
			}
			g.allow = append(g.allow, p)
			continue
		}
		if name, _, _ := strings.Cut(rule, "("); claudeTools[name] || strings.HasPrefix(rule, "mcp__") {
			continue
		}
		return usageError("--allowedTools %q: Odin knows Claude Code's tool names and Bash(...) rules", rule)
	}
	for _, rule := range f.disallowedTools {
		p, err := commandPattern(rule)
		if err != nil {
			return usageError("--disallowedTools %q: only Bash(...) rules can be refused from the command line; refuse a tool for an agent with agents.NAME.disallowed_tools in odin.yaml", rule)
		}
		g.forbid = append(g.forbid, p)
	}
	g.appendSystem = f.appendSystem
	return nil
}

// streamInput is one line of --input-format stream-json: Claude Code's
// user message, its content a string or text blocks.
type streamInput struct {
	Type    string `json:"type"`
	Message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// parseStreamInput returns the text of a user message line.
func parseStreamInput(line []byte) (string, error) {
	var in streamInput
	if err := json.Unmarshal(line, &in); err != nil {
		return "", fmt.Errorf("not a JSON object: %v", err)
	}
	if in.Type != "user" {
		return "", fmt.Errorf(`type %q: want "user"`, in.Type)
	}
	if in.Message.Role != "" && in.Message.Role != "user" {
		return "", fmt.Errorf(`message.role %q: want "user"`, in.Message.Role)
	}
	var text string
	if err := json.Unmarshal(in.Message.Content, &text); err == nil {
		if strings.TrimSpace(text) == "" {
			return "", fmt.Errorf("message.content is empty")
		}
		return text, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(in.Message.Content, &blocks); err != nil {
		return "", fmt.Errorf("message.content must be a string or an array of content blocks")
	}
	var parts []string
	for _, b := range blocks {
		if b.Type != "text" {
			return "", fmt.Errorf("message.content: a %q block; Odin takes text blocks here (images: --image)", b.Type)
		}
		parts = append(parts, b.Text)
	}
	text = strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("message.content has no text")
	}
	return text, nil
}

// streamLine is what readStreamInputs got from one line: a message's
// text, or why the line was skipped.
type streamLine struct {
	text, warning string
}

// readStreamInputs reads user messages from r, one JSON object a line,
// until it ends or ctx is done; a line that is not one comes as a warning
// (its number said) and is never sent to the model half-read.
func readStreamInputs(ctx context.Context, r io.Reader) <-chan streamLine {
	out := make(chan streamLine)
	send := func(l streamLine) bool {
		select {
		case out <- l:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			text, err := parseStreamInput([]byte(line))
			l := streamLine{text: text}
			if err != nil {
				l = streamLine{warning: fmt.Sprintf("--input-format stream-json: line %d skipped: %v", n, err)}
			}
			if !send(l) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			send(streamLine{warning: fmt.Sprintf("--input-format stream-json: reading stdin: %v", err)})
		}
	}()
	return out
}
