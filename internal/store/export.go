package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/termsafe"
)

// Export reads a session and all its descendants (specialists' child
// sessions, depth first in creation order) with everything recorded in
// them. Checkpoints are not exported: they are file contents of one
// machine's project, for undo, not part of the conversation.
func Export(ctx context.Context, s Store, sessionID string) ([]SessionArchive, error) {
	var out []SessionArchive
	var walk func(id string) error
	walk = func(id string) error {
		a, err := exportOne(ctx, s, id)
		if err != nil {
			return err
		}
		out = append(out, a)
		kids, err := s.Children(ctx, id)
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := walk(k.ID); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(sessionID); err != nil {
		return nil, fmt.Errorf("store: export: %w", err)
	}
	return out, nil
}

func exportOne(ctx context.Context, s Store, id string) (SessionArchive, error) {
	var a SessionArchive
	var err error
	if a.Session, err = s.Session(ctx, id); err != nil {
		return a, err
	}
	if a.Messages, err = s.AllMessages(ctx, id); err != nil {
		return a, err
	}
	if a.Tools, err = s.ToolHistory(ctx, id); err != nil {
		return a, err
	}
	if a.Todos, err = s.Todos(ctx, id); err != nil {
		return a, err
	}
	if a.Usage, err = s.UsageRecords(ctx, id); err != nil {
		return a, err
	}
	return a, nil
}

// JSONL export format: a header line, then for each session its session
// line followed by its messages, tool records, todo list and usage records.
const (
	jsonlFormat  = "odin-session"
	jsonlVersion = 1
)

type jsonlRecord struct {
	Type      string       `json:"type"`
	Format    string       `json:"format,omitempty"`
	Version   int          `json:"version,omitempty"`
	Session   *Session     `json:"session,omitempty"`
	Message   *Message     `json:"message,omitempty"`
	Tool      *ToolRecord  `json:"tool,omitempty"`
	SessionID string       `json:"session_id,omitempty"`
	Todos     []Todo       `json:"todos,omitempty"`
	Usage     *UsageRecord `json:"usage,omitempty"`
}

// ExportJSONL writes the session and its descendants as JSON lines, the
// lossless format ImportJSONL reads back (export → import into another
// database → export yields the same bytes).
func ExportJSONL(ctx context.Context, s Store, w io.Writer, sessionID string) error {
	archives, err := Export(ctx, s, sessionID)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	// C1 and bidi controls are escaped too (termsafe.JSON), so the export
	// can be printed on a terminal; it decodes to the same text.
	put := func(r jsonlRecord) error {
		line.Reset()
		if err := enc.Encode(r); err != nil {
			return err
		}
		_, err := bw.Write(termsafe.JSON(line.Bytes()))
		return err
	}
	if err := put(jsonlRecord{Type: "header", Format: jsonlFormat, Version: jsonlVersion}); err != nil {
		return fmt.Errorf("store: export jsonl: %w", err)
	}
	for _, a := range archives {
		if err := put(jsonlRecord{Type: "session", Session: &a.Session}); err != nil {
			return fmt.Errorf("store: export jsonl: %w", err)
		}
		for i := range a.Messages {
			if err := put(jsonlRecord{Type: "message", Message: &a.Messages[i]}); err != nil {
				return fmt.Errorf("store: export jsonl: %w", err)
			}
		}
		for i := range a.Tools {
			if err := put(jsonlRecord{Type: "tool", Tool: &a.Tools[i]}); err != nil {
				return fmt.Errorf("store: export jsonl: %w", err)
			}
		}
		if len(a.Todos) > 0 {
			if err := put(jsonlRecord{Type: "todos", SessionID: a.Session.ID, Todos: a.Todos}); err != nil {
				return fmt.Errorf("store: export jsonl: %w", err)
			}
		}
		for i := range a.Usage {
			if err := put(jsonlRecord{Type: "usage", Usage: &a.Usage[i]}); err != nil {
				return fmt.Errorf("store: export jsonl: %w", err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("store: export jsonl: %w", err)
	}
	return nil
}

// ImportJSONL reads what ExportJSONL wrote and stores it with Import, all or
// nothing. It returns the imported session IDs, the root first. A malformed
// line is an ErrInvalid naming its line number.
func ImportJSONL(ctx context.Context, s Store, r io.Reader) ([]string, error) {
	archives, err := readJSONL(r)
	if err != nil {
		return nil, fmt.Errorf("store: import jsonl: %w", err)
	}
	if err := s.Import(ctx, archives); err != nil {
		return nil, err
	}
	ids := make([]string, len(archives))
	for i, a := range archives {
		ids[i] = a.Session.ID
	}
	return ids, nil
}

func readJSONL(r io.Reader) ([]SessionArchive, error) {
	br := bufio.NewReader(r)
	var archives []SessionArchive
	index := map[string]int{}
	find := func(id string) (*SessionArchive, error) {
		i, ok := index[id]
		if !ok {
			return nil, fmt.Errorf("record for session %q before its session line: %w", id, ErrInvalid)
		}
		return &archives[i], nil
	}
	sawHeader := false
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			if perr := parseLine(raw, &sawHeader, &archives, index, find); perr != nil {
				return nil, fmt.Errorf("line %d: %w", line, perr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if !sawHeader {
		return nil, fmt.Errorf("no %s header line: %w", jsonlFormat, ErrInvalid)
	}
	return archives, nil
}

func parseLine(raw []byte, sawHeader *bool, archives *[]SessionArchive, index map[string]int,
	find func(string) (*SessionArchive, error)) error {
	var rec jsonlRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return fmt.Errorf("%v: %w", err, ErrInvalid)
	}
	if !*sawHeader {
		if rec.Type != "header" || rec.Format != jsonlFormat {
			return fmt.Errorf("want a %s header first, got %q: %w", jsonlFormat, rec.Type, ErrInvalid)
		}
		if rec.Version != jsonlVersion {
			return fmt.Errorf("format version %d, this odin reads %d: %w", rec.Version, jsonlVersion, ErrInvalid)
		}
		*sawHeader = true
		return nil
	}
	switch {
	case rec.Type == "session" && rec.Session != nil:
		if _, dup := index[rec.Session.ID]; dup {
			return fmt.Errorf("session %s twice: %w", rec.Session.ID, ErrInvalid)
		}
		index[rec.Session.ID] = len(*archives)
		*archives = append(*archives, SessionArchive{Session: *rec.Session})
	case rec.Type == "message" && rec.Message != nil:
		a, err := find(rec.Message.SessionID)
		if err != nil {
			return err
		}
		a.Messages = append(a.Messages, *rec.Message)
	case rec.Type == "tool" && rec.Tool != nil:
		a, err := find(rec.Tool.SessionID)
		if err != nil {
			return err
		}
		a.Tools = append(a.Tools, *rec.Tool)
	case rec.Type == "todos":
		a, err := find(rec.SessionID)
		if err != nil {
			return err
		}
		a.Todos = rec.Todos
	case rec.Type == "usage" && rec.Usage != nil:
		a, err := find(rec.Usage.SessionID)
		if err != nil {
			return err
		}
		a.Usage = append(a.Usage, *rec.Usage)
	default:
		return fmt.Errorf("unknown or empty record %q: %w", rec.Type, ErrInvalid)
	}
	return nil
}

// ExportMarkdown writes the session and its descendants as a readable
// transcript: metadata, then each message under a heading with its text,
// reasoning (folded), tool calls and results in fenced blocks; each
// specialist's session follows its parent's. The transcript holds what
// models, tools and files said, so it is written without any terminal
// control sequence (termsafe.Text): it is shown on terminals and in
// pagers. The JSONL export keeps the text as data.
func ExportMarkdown(ctx context.Context, s Store, w io.Writer, sessionID string) error {
	return ExportMarkdownPriced(ctx, s, w, sessionID, nil)
}

// ExportMarkdownPriced is ExportMarkdown with priced telling whether a
// model's price is known: a session on a model with none shows "cost
// unknown" rather than "$0.0000", which would read as free. nil treats
// every model as priced.
func ExportMarkdownPriced(ctx context.Context, s Store, w io.Writer, sessionID string, priced func(model string) bool) error {
	archives, err := Export(ctx, s, sessionID)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	for i, a := range archives {
		if i > 0 {
			bw.WriteString("\n---\n\n")
		}
		writeSessionMarkdown(bw, a, i > 0, priced)
	}
	bw.Flush() // into memory: cannot fail
	if _, err := io.WriteString(w, termsafe.Text(buf.String())); err != nil {
		return fmt.Errorf("store: export markdown: %w", err)
	}
	return nil
}

func writeSessionMarkdown(w *bufio.Writer, a SessionArchive, child bool, priced func(string) bool) {
	ss := a.Session
	title := ss.Title
	if title == "" {
		title = "Session " + ss.ID
	}
	if child {
		agent := ss.Agent
		if agent == "" {
			agent = "specialist"
		}
		fmt.Fprintf(w, "# Sub-agent %s: %s\n\n", agent, title)
	} else {
		fmt.Fprintf(w, "# %s\n\n", title)
	}
	fmt.Fprintf(w, "- Session: `%s`\n", ss.ID)
	if ss.ParentID != "" {
		fmt.Fprintf(w, "- Parent session: `%s`\n", ss.ParentID)
	}
	fmt.Fprintf(w, "- Project: `%s`\n", ss.Project)
	var who []string
	for _, kv := range [][2]string{{"Agent", ss.Agent}, {"Mode", ss.Mode}, {"Model", ss.Model}} {
		if kv[1] != "" {
			who = append(who, kv[0]+": "+kv[1])
		}
	}
	if len(who) > 0 {
		fmt.Fprintf(w, "- %s\n", strings.Join(who, " · "))
	}
	fmt.Fprintf(w, "- Created: %s · Updated: %s\n", mdTime(ss.CreatedAt), mdTime(ss.UpdatedAt))
	cost := present.Cost(ss.Cost, priced != nil && ss.Model != "" && !priced(ss.Model))
	fmt.Fprintf(w, "- Messages: %d · Tokens: %d prompt, %d completion, %d cached · Cost: %s\n",
		ss.MessageCount, ss.PromptTokens, ss.CompletionTokens, ss.CachedTokens, cost)
	if len(a.Todos) > 0 {
		w.WriteString("\n## Todos\n\n")
		for _, t := range a.Todos {
			box := " "
			if t.Status == "completed" {
				box = "x"
			}
			fmt.Fprintf(w, "- [%s] %s (%s)\n", box, t.Content, t.Status)
		}
	}
	for _, m := range a.Messages {
		writeMessageMarkdown(w, m, m.ID == ss.SummaryMessageID)
	}
}

func writeMessageMarkdown(w *bufio.Writer, m Message, summary bool) {
	head := map[llm.Role]string{
		llm.RoleSystem: "System", llm.RoleUser: "User", llm.RoleAssistant: "Assistant", llm.RoleTool: "Tool",
	}[m.Role]
	if summary {
		head = "Summary of the earlier conversation"
	}
	if m.Interrupted {
		head += " (interrupted: the process running the turn died; not sent to the model)"
	}
	meta := fmt.Sprintf("#%d · %s", m.Seq, mdTime(m.CreatedAt))
	if m.Model != "" {
		meta += " · " + m.Model
	}
	fmt.Fprintf(w, "\n## %s\n\n_%s_\n", head, meta)
	for _, p := range m.Parts {
		switch v := p.(type) {
		case TextPart:
			if v.Injected {
				// Context Odin added for the model; the transcript
				// shows what was typed.
				continue
			}
			fmt.Fprintf(w, "\n%s\n", strings.TrimRight(v.Text, "\n"))
		case ReasoningPart:
			fmt.Fprintf(w, "\n<details><summary>Reasoning</summary>\n\n%s\n\n</details>\n", strings.TrimRight(v.Text, "\n"))
		case ToolCallPart:
			fmt.Fprintf(w, "\n**Tool call** `%s` (`%s`)\n\n", v.Name, v.ID)
			writeFenced(w, "json", v.Input)
		case ToolResultPart:
			status := ""
			switch {
			case v.Cancelled:
				status = " — cancelled"
			case v.IsError:
				status = " — error"
			}
			fmt.Fprintf(w, "\n**Result of** `%s` (`%s`)%s\n\n", v.Name, v.ToolCallID, status)
			writeFenced(w, "", v.Content)
		case ImagePart:
			fmt.Fprintf(w, "\n%s\n", v.Image().Label())
		case FinishPart:
			if v.Reason != "" {
				fmt.Fprintf(w, "\n_finished: %s_\n", v.Reason)
			}
		}
	}
}

// writeFenced writes s in a code fence longer than any backtick run inside
// it, so content never closes the fence early.
func writeFenced(w *bufio.Writer, lang, s string) {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	fmt.Fprintf(w, "%s%s\n%s\n%s\n", fence, lang, strings.TrimRight(s, "\n"), fence)
}

func mdTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
