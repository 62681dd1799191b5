package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// RecordTool implements Store.
func (s *SQLite) RecordTool(ctx context.Context, r ToolRecord) error {
	err := s.write(ctx, func(tx *wtx) error { return s.recordToolTx(ctx, tx, r) })
	if err != nil {
		return fmt.Errorf("store: record tool: %w", err)
	}
	return nil
}

func (s *SQLite) recordToolTx(ctx context.Context, tx *wtx, r ToolRecord) error {
	files := r.Files
	if files == nil {
		files = []string{}
	}
	fj, err := json.Marshal(files)
	if err != nil {
		return err
	}
	if _, err := getSession(ctx, tx, r.SessionID); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO tool_calls
		(session_id, message_id, call_id, name, agent, input, output, is_error, files, elapsed_ns, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.SessionID, r.MessageID, r.CallID, r.Name, r.Agent, r.Input, CapOutput(r.Output, MaxToolOutput),
		boolInt(r.IsError), string(fj), int64(r.Elapsed), s.stamp(r.At))
	return err
}

// ToolHistory implements Store.
func (s *SQLite) ToolHistory(ctx context.Context, sessionID string) ([]ToolRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT message_id, call_id, name, agent, input, output, is_error, files, elapsed_ns, at
		FROM tool_calls WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: tool history: %w", err)
	}
	defer rows.Close()
	out := []ToolRecord{}
	for rows.Next() {
		r := ToolRecord{SessionID: sessionID}
		var files string
		var elapsed, at int64
		if err := rows.Scan(&r.MessageID, &r.CallID, &r.Name, &r.Agent, &r.Input, &r.Output, &r.IsError, &files, &elapsed, &at); err != nil {
			return nil, fmt.Errorf("store: tool history: %w", err)
		}
		if err := json.Unmarshal([]byte(files), &r.Files); err != nil {
			return nil, fmt.Errorf("store: tool history: files of call %s: %w", r.CallID, err)
		}
		if len(r.Files) == 0 {
			r.Files = nil
		}
		r.Elapsed, r.At = time.Duration(elapsed), fromNanos(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: tool history: %w", err)
	}
	return out, nil
}

// SetTodos implements Store.
func (s *SQLite) SetTodos(ctx context.Context, sessionID string, todos []Todo) error {
	err := s.write(ctx, func(tx *wtx) error { return setTodosTx(ctx, tx, sessionID, todos) })
	if err != nil {
		return fmt.Errorf("store: set todos: %w", err)
	}
	return nil
}

func setTodosTx(ctx context.Context, tx *wtx, sessionID string, todos []Todo) error {
	// Two lists replacing each other concurrently must not interleave
	// their deletes and inserts.
	if err := tx.lockSession(ctx, sessionID); err != nil {
		return err
	}
	if _, err := getSession(ctx, tx, sessionID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM todos WHERE session_id = ?`, sessionID); err != nil {
		return err
	}
	for i, t := range todos {
		if _, err := tx.ExecContext(ctx, `INSERT INTO todos (session_id, position, id, content, status) VALUES (?, ?, ?, ?, ?)`,
			sessionID, i, t.ID, t.Content, t.Status); err != nil {
			return err
		}
	}
	return nil
}

// Todos implements Store.
func (s *SQLite) Todos(ctx context.Context, sessionID string) ([]Todo, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, content, status FROM todos WHERE session_id = ? ORDER BY position`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: todos: %w", err)
	}
	defer rows.Close()
	out := []Todo{}
	for rows.Next() {
		var t Todo
		if err := rows.Scan(&t.ID, &t.Content, &t.Status); err != nil {
			return nil, fmt.Errorf("store: todos: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: todos: %w", err)
	}
	return out, nil
}

// AddUsage implements Store.
func (s *SQLite) AddUsage(ctx context.Context, u UsageRecord) error {
	at := s.stamp(u.At)
	err := s.write(ctx, func(tx *wtx) error {
		sess, err := getSession(ctx, tx, u.SessionID)
		if err != nil {
			return err
		}
		if err := insertUsage(ctx, tx, u, sess.Project, at); err != nil {
			return err
		}
		// The session and its parent in one statement: both totals move
		// together or not at all.
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET
			prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?,
			cached_tokens = cached_tokens + ?, cost = cost + ?, updated_at = `+s.greatest()+`(updated_at, ?)
			WHERE id IN (?, ?)`,
			u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.Cost, at, sess.ID, sess.ParentID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: add usage: %w", err)
	}
	return nil
}

func insertUsage(ctx context.Context, tx *wtx, u UsageRecord, project string, at int64) error {
	parts := ""
	if len(u.Parts) > 0 {
		b, err := json.Marshal(u.Parts)
		if err != nil {
			return err
		}
		parts = string(b)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO usage
		(session_id, project, agent, model, prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, cost, at, parts)
		VALUES (NULLIF(?, ''), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.SessionID, project, u.Agent, u.Model, u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.ReasoningTokens, u.Cost, at, parts)
	return err
}

// decodeLedger reads a usage row's parts column; a ledger that does not
// decode is dropped rather than failing the whole read.
func decodeLedger(s string) []UsagePart {
	if s == "" {
		return nil
	}
	var p []UsagePart
	if json.Unmarshal([]byte(s), &p) != nil {
		return nil
	}
	return p
}

// UsageRecords implements Store.
func (s *SQLite) UsageRecords(ctx context.Context, sessionID string) ([]UsageRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT project, agent, model, prompt_tokens, completion_tokens, cached_tokens,
		reasoning_tokens, cost, at, parts FROM usage WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: usage records: %w", err)
	}
	defer rows.Close()
	out := []UsageRecord{}
	for rows.Next() {
		u := UsageRecord{SessionID: sessionID}
		var at int64
		var parts string
		if err := rows.Scan(&u.Project, &u.Agent, &u.Model, &u.PromptTokens, &u.CompletionTokens, &u.CachedTokens,
			&u.ReasoningTokens, &u.Cost, &at, &parts); err != nil {
			return nil, fmt.Errorf("store: usage records: %w", err)
		}
		u.At = fromNanos(at)
		u.Parts = decodeLedger(parts)
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage records: %w", err)
	}
	return out, nil
}

// Stats implements Store. Models and agents are summed by SQL; days are
// summed here, because a day's bounds depend on the caller's time zone and
// its daylight-saving rules, which SQLite does not know.
func (s *SQLite) Stats(ctx context.Context, q StatsQuery) ([]StatsRow, error) {
	var key string
	switch q.GroupBy {
	case GroupByModel:
		key = "model"
	case GroupByAgent:
		key = "agent"
	case GroupByDay:
		key = "at"
	case GroupByPart:
	default:
		return nil, fmt.Errorf("store: stats: group by %q (want day, model, agent or part): %w", q.GroupBy, ErrInvalid)
	}
	where, args := ` WHERE 1=1`, []any{}
	if !q.Since.IsZero() {
		where += ` AND at >= ?`
		args = append(args, q.Since.UnixNano())
	}
	if q.Project != "" {
		where += ` AND project = ?`
		args = append(args, q.Project)
	}
	if q.GroupBy == GroupByPart {
		return s.partStats(ctx, where, args)
	}
	// For days the key is the record time, bucketed below.
	query := `SELECT ` + key + `, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cached_tokens),
		SUM(reasoning_tokens), SUM(cost) FROM usage` + where + ` GROUP BY ` + key
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: stats: %w", err)
	}
	defer rows.Close()
	loc := q.Location
	if loc == nil {
		loc = time.Local
	}
	byKey := map[string]*StatsRow{}
	var order []string
	for rows.Next() {
		var r StatsRow
		var k any
		if err := rows.Scan(&k, &r.Calls, &r.PromptTokens, &r.CompletionTokens, &r.CachedTokens, &r.ReasoningTokens, &r.Cost); err != nil {
			return nil, fmt.Errorf("store: stats: %w", err)
		}
		switch v := k.(type) {
		case int64:
			r.Key = time.Unix(0, v).In(loc).Format(time.DateOnly)
		case string:
			r.Key = v
		default:
			r.Key = fmt.Sprint(v)
		}
		acc, ok := byKey[r.Key]
		if !ok {
			acc = &StatsRow{Key: r.Key}
			byKey[r.Key] = acc
			order = append(order, r.Key)
		}
		acc.Calls += r.Calls
		acc.PromptTokens += r.PromptTokens
		acc.CompletionTokens += r.CompletionTokens
		acc.CachedTokens += r.CachedTokens
		acc.ReasoningTokens += r.ReasoningTokens
		acc.Cost += r.Cost
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: stats: %w", err)
	}
	out := make([]StatsRow, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	SortStats(out, q.GroupBy)
	return out, nil
}

// partStats sums the ledgers of the usage rows matching where, in the
// ledger's part order. The ledger is JSON in one column, summed here: the
// two SQL dialects read JSON differently, and a session's calls are few.
func (s *SQLite) partStats(ctx context.Context, where string, args []any) ([]StatsRow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT parts FROM usage`+where+` AND parts <> '' ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: stats: %w", err)
	}
	defer rows.Close()
	var out []StatsRow
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("store: stats: %w", err)
		}
	next:
		for _, p := range decodeLedger(raw) {
			calls := int64(0)
			if p.Tokens > 0 {
				calls = 1
			}
			for i := range out {
				if out[i].Key == p.Part {
					out[i].Calls += calls
					out[i].PromptTokens += p.Tokens
					out[i].CachedTokens += p.Cached
					continue next
				}
			}
			out = append(out, StatsRow{Key: p.Part, Calls: calls, PromptTokens: p.Tokens, CachedTokens: p.Cached})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: stats: %w", err)
	}
	if out == nil {
		out = []StatsRow{}
	}
	return out, nil
}

// SortStats puts rows in the order Stats documents: days ascending, models
// and agents by decreasing cost, then key. Other backends use it too.
func SortStats(rows []StatsRow, groupBy string) {
	sort.SliceStable(rows, func(i, j int) bool {
		if groupBy == GroupByDay {
			return rows[i].Key < rows[j].Key
		}
		if rows[i].Cost != rows[j].Cost {
			return rows[i].Cost > rows[j].Cost
		}
		return rows[i].Key < rows[j].Key
	})
}
