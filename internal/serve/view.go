package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/viewer"
)

// HistoryOpener is implemented by an Opener whose stored sessions the web
// viewer may read (the /v1/history endpoints). History runs fn with the
// store the server's sessions are written to; the store is only valid
// during fn.
type HistoryOpener interface {
	History(ctx context.Context, fn func(store.Store) error) error
}

// HistoryItem is one stored root session as the viewer lists it.
type HistoryItem struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Project string `json:"project"`
	Model   string `json:"model,omitempty"`
	// Status is running (a turn is in flight), live (the server holds it),
	// or stored.
	Status string  `json:"status"`
	Turns  int     `json:"turns"`
	Runs   int     `json:"runs"`
	Cost   float64 `json:"cost"`
	// CostUnknown: the session's model has no known price, so Cost
	// counts only what was priced (shown "cost unknown", never $0).
	CostUnknown bool `json:"cost_unknown,omitempty"`
	// CostText is the cost as every front end shows it (present.Cost).
	CostText     string    `json:"cost_text"`
	Tokens       int64     `json:"tokens"`
	CreatedAt    time.Time `json:"created_at"`
	LastActivity time.Time `json:"last_activity"`
}

// Timeline is a root session's run as the viewer draws it: the
// Orchestrator's turns, one run per specialist (its child session), the
// gate stages the Orchestrator recorded, and every model call's usage.
type Timeline struct {
	Session HistoryItem `json:"session"`
	Start   time.Time   `json:"start"`
	End     time.Time   `json:"end"`
	Turns   []TurnSpan  `json:"turns"`
	Runs    []Run       `json:"runs"`
	// Tools are the Orchestrator's own tool calls.
	Tools []ToolSpan `json:"tools"`
	// Gates are the outcomes of each turn's quality gates.
	Gates []GateOutcome       `json:"gates"`
	Usage []store.UsageRecord `json:"usage"`
	// UnpricedModels are the models in Usage with no known price: their
	// calls' cost is unknown, not zero.
	UnpricedModels []string `json:"unpriced_models"`
}

// TurnSpan is one input the Orchestrator took, from its arrival to the
// turn's last message.
type TurnSpan struct {
	Index  int       `json:"index"`
	Input  string    `json:"input"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Answer string    `json:"answer,omitempty"`
}

// Run is one specialist run: a child session.
type Run struct {
	ID    string    `json:"id"`
	Agent string    `json:"agent"`
	Title string    `json:"title"`
	Model string    `json:"model,omitempty"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Outcome is ok, findings (a review or QA that sent the change back),
	// failed (an error or no report), or running.
	Outcome string `json:"outcome"`
	// Gate is the gate stage the run served (review, test, qa, fix), empty
	// for a delegation of the Orchestrator's model; Round counts the fix
	// rounds before it (a fix run carries its own number).
	Gate      string          `json:"gate,omitempty"`
	Round     int             `json:"round"`
	Turn      int             `json:"turn"`
	Summary   string          `json:"summary,omitempty"`
	Report    json.RawMessage `json:"report,omitempty"`
	ToolCalls int             `json:"tool_calls"`
	Tokens    int64           `json:"tokens"`
	Cost      float64         `json:"cost"`
	// CostUnknown as in HistoryItem, for the run's model.
	CostUnknown bool `json:"cost_unknown,omitempty"`
	// GateRound is the run's round in its gate stage as every front end
	// counts it (present.Round): the stage's own runs in the turn, from
	// 1; GateLabel names it ("review round 2"). Empty for a delegation.
	GateRound int    `json:"gate_round,omitempty"`
	GateLabel string `json:"gate_label,omitempty"`
}

// ToolSpan is one tool call in a lane.
type ToolSpan struct {
	Name    string        `json:"name"`
	At      time.Time     `json:"at"`
	Elapsed time.Duration `json:"elapsed_ns"`
	IsError bool          `json:"is_error,omitempty"`
	Files   []string      `json:"files,omitempty"`
}

// GateOutcome is what the gates of one turn did, as recorded in the note
// the Orchestrator appends after them.
type GateOutcome struct {
	Turn      int         `json:"turn"`
	At        time.Time   `json:"at"`
	Passed    bool        `json:"passed"`
	FixRounds int         `json:"fix_rounds"`
	Stages    []GateStage `json:"stages"`
	// Reasons are why the gates were required (the decision's reasons).
	Reasons []string `json:"reasons"`
	Text    string   `json:"text"`
	// Verdict is the outcome as every front end words it: "passed after
	// 1 fix round".
	Verdict string `json:"verdict"`
}

// GateStage is one stage line of a gate outcome.
type GateStage struct {
	Stage string `json:"stage"`
	// Round is the round the Orchestrator's note gives: the fix rounds
	// before the stage plus one (a fix its own number). Run is the
	// stage's own run in the turn, the round users see everywhere
	// (present.Round); Label words it: "qa round 1: failed".
	Round int `json:"round"`
	Run   int `json:"run"`
	// MaxRounds is the most rounds the stage could have in the turn
	// ("qa round 1 of 3"); 0 in notes from before it was kept.
	MaxRounds int    `json:"max_rounds,omitempty"`
	Label     string `json:"label"`
	Mark      string `json:"mark"` // passed, failed, applied
	Summary   string `json:"summary,omitempty"`
}

// Transcript is everything stored of one session (root or specialist).
type Transcript struct {
	Session store.Session       `json:"session"`
	Entries []Entry             `json:"entries"`
	Tools   []store.ToolRecord  `json:"tools"`
	Usage   []store.UsageRecord `json:"usage"`
	Report  json.RawMessage     `json:"report,omitempty"`
	// CostUnknown: the session's model, or a model in Usage, has no
	// known price; UnpricedModels are those of Usage.
	CostUnknown    bool     `json:"cost_unknown,omitempty"`
	UnpricedModels []string `json:"unpriced_models"`
	// CostText is the session's cost as every front end shows it.
	CostText string `json:"cost_text"`
}

// Entry is one stored message with its parts flattened for display.
type Entry struct {
	Seq   int64     `json:"seq"`
	Role  string    `json:"role"`
	Model string    `json:"model,omitempty"`
	At    time.Time `json:"at"`
	Parts []Part    `json:"parts"`
	// Interrupted marks a reply cut off when the process running its
	// turn died; the model did not see it when the turn went on.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Part is one message part: text, reasoning, tool_call, tool_result or
// finish.
type Part struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Input     string `json:"input,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// gateNotePrefix starts the message the Orchestrator appends after the
// gates ran (actors/synthesis.go); its lines are the durable record of
// the stages.
const gateNotePrefix = "[Odin] The quality gates ran after your answer above. "

// viewAsset serves the viewer's page and assets. They hold no data and no
// secret, so a browser loads them without the token; everything they show
// comes from the API, which needs it.
func (s *Server) viewAsset(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if r.URL.Path != "/" && !strings.HasPrefix(r.URL.Path, "/view/") {
		return false
	}
	viewer.Handler().ServeHTTP(w, r)
	return true
}

func (s *Server) history(w http.ResponseWriter, r *http.Request, fn func(store.Store) error) {
	h, ok := s.opts.Opener.(HistoryOpener)
	if !ok {
		writeError(w, http.StatusNotImplemented, errors.New("this server keeps no session history"))
		return
	}
	if err := h.History(r.Context(), fn); err != nil {
		writeError(w, statusOfHistory(err), err)
	}
}

func statusOfHistory(err error) int {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, ErrNotFound) {
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// inRoots reports whether a stored project lies under a configured root:
// the viewer shows only what the server could also run.
func (s *Server) inRoots(project string) bool {
	for _, root := range s.opts.Roots {
		rel, err := filepath.Rel(root, project)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// storedSession returns the session id if it is stored under a root.
func (s *Server) storedSession(ctx context.Context, st store.Store, id string) (store.Session, error) {
	sess, err := st.Session(ctx, id)
	if err != nil {
		return store.Session{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if !s.inRoots(sess.Project) {
		return store.Session{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return sess, nil
}

// listHistory: GET /v1/history?q=&limit= lists stored root sessions,
// newest first; q matches the title, project or id (case-insensitive).
func (s *Server) listHistory(w http.ResponseWriter, r *http.Request) {
	q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("limit %q: want a number from 1 to 1000", v))
			return
		}
		limit = n
	}
	s.history(w, r, func(st store.Store) error {
		all, err := st.Sessions(r.Context(), store.SessionQuery{})
		if err != nil {
			return err
		}
		out := []HistoryItem{}
		for _, sess := range all {
			if len(out) >= limit {
				break
			}
			if !s.inRoots(sess.Project) {
				continue
			}
			if q != "" && !strings.Contains(strings.ToLower(sess.Title+" "+sess.Project+" "+sess.ID), q) {
				continue
			}
			item, err := s.historyItem(r.Context(), st, sess)
			if err != nil {
				return err
			}
			out = append(out, item)
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}

func (s *Server) historyItem(ctx context.Context, st store.Store, sess store.Session) (HistoryItem, error) {
	msgs, err := st.AllMessages(ctx, sess.ID)
	if err != nil {
		return HistoryItem{}, err
	}
	kids, err := st.Children(ctx, sess.ID)
	if err != nil {
		return HistoryItem{}, err
	}
	return s.itemOf(sess, msgs, len(kids)), nil
}

func (s *Server) itemOf(sess store.Session, msgs []store.Message, runs int) HistoryItem {
	item := HistoryItem{ID: sess.ID, Title: sess.Title, Project: sess.Project, Model: sess.Model, Status: "stored",
		Turns: len(userInputs(msgs)), Runs: runs, Cost: sess.Cost, CostUnknown: !s.priced(sess.Model),
		Tokens: sess.PromptTokens + sess.CompletionTokens, CreatedAt: sess.CreatedAt, LastActivity: sess.UpdatedAt}
	item.CostText = present.Cost(item.Cost, item.CostUnknown)
	if e, err := s.m.get(sess.ID); err == nil {
		i := e.info()
		item.Status = "live"
		if i.InFlight > 0 {
			item.Status = "running"
		}
		if i.LastActive.After(item.LastActivity) {
			item.LastActivity = i.LastActive
		}
	}
	return item
}

// userInputs are the indexes of the messages the user typed (not Odin's
// own notes to the model).
func userInputs(msgs []store.Message) []int {
	var out []int
	for i, m := range msgs {
		if m.Role == llm.RoleUser && !strings.HasPrefix(m.Text(), "[Odin]") {
			out = append(out, i)
		}
	}
	return out
}

// priced reports whether model has a known price (Options.Priced); a
// model not recorded counts as priced: there is nothing to price.
func (s *Server) priced(model string) bool {
	return model == "" || s.opts.Priced == nil || s.opts.Priced(model)
}

// unpriced lists the models of usage with no known price, once each.
func (s *Server) unpriced(usage []store.UsageRecord) []string {
	out := []string{}
	for _, u := range usage {
		if !s.priced(u.Model) && !slices.Contains(out, u.Model) {
			out = append(out, u.Model)
		}
	}
	return out
}

// timeline: GET /v1/history/{id}.
func (s *Server) timeline(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	s.history(w, r, func(st store.Store) error {
		sess, err := s.storedSession(ctx, st, r.PathValue("id"))
		if err != nil {
			return err
		}
		msgs, err := st.AllMessages(ctx, sess.ID)
		if err != nil {
			return err
		}
		kids, err := st.Children(ctx, sess.ID)
		if err != nil {
			return err
		}
		tl := Timeline{Session: s.itemOf(sess, msgs, len(kids)), Start: sess.CreatedAt, End: sess.UpdatedAt,
			Turns: turnSpans(msgs), Runs: []Run{}, Tools: []ToolSpan{}, Gates: gateOutcomes(msgs)}
		usage, err := st.UsageRecords(ctx, sess.ID)
		if err != nil {
			return err
		}
		tl.Usage = append([]store.UsageRecord{}, usage...)
		tools, err := st.ToolHistory(ctx, sess.ID)
		if err != nil {
			return err
		}
		for _, t := range tools {
			tl.Tools = append(tl.Tools, ToolSpan{Name: t.Name, At: t.At, Elapsed: t.Elapsed, IsError: t.IsError, Files: t.Files})
		}
		fixes := 0
		runs := map[string]int{} // each gate's runs in the turn, "turn\x00gate"
		// Each gate's most rounds in the turn, as its gate note kept them
		// (none in notes from before they were kept).
		maxRounds := map[string]int{}
		for _, g := range tl.Gates {
			for _, st := range g.Stages {
				maxRounds[fmt.Sprint(g.Turn)+"\x00"+st.Stage] = st.MaxRounds
			}
		}
		for _, k := range kids {
			run, u, err := s.runOf(ctx, st, k)
			if err != nil {
				return err
			}
			if run.Gate == "fix" {
				fixes++
				run.Round = fixes
			} else if run.Gate != "" {
				run.Round = fixes
			}
			run.Turn = turnAt(tl.Turns, run.Start)
			if run.Gate != "" {
				key := fmt.Sprint(run.Turn) + "\x00" + run.Gate
				runs[key]++
				run.GateRound = runs[key]
				run.GateLabel = present.StageRound(run.Gate, run.GateRound, maxRounds[key])
			}
			tl.Runs = append(tl.Runs, run)
			tl.Usage = append(tl.Usage, u...)
			if run.End.After(tl.End) {
				tl.End = run.End
			}
		}
		slices.SortStableFunc(tl.Usage, func(a, b store.UsageRecord) int { return a.At.Compare(b.At) })
		tl.UnpricedModels = s.unpriced(tl.Usage)
		// The session's total holds its specialists' spend: unknown when
		// any of its calls was.
		tl.Session.CostUnknown = tl.Session.CostUnknown || len(tl.UnpricedModels) > 0
		tl.Session.CostText = present.Cost(tl.Session.Cost, tl.Session.CostUnknown)
		writeJSON(w, http.StatusOK, tl)
		return nil
	})
}

// turnAt is the index of the turn running at t (0 before the first).
func turnAt(turns []TurnSpan, t time.Time) int {
	n := 0
	for _, tr := range turns {
		if !tr.Start.After(t) {
			n = tr.Index
		}
	}
	return n
}

func turnSpans(msgs []store.Message) []TurnSpan {
	idx := userInputs(msgs)
	out := make([]TurnSpan, 0, len(idx))
	for n, i := range idx {
		last := len(msgs) - 1
		if n+1 < len(idx) {
			last = idx[n+1] - 1
		}
		span := TurnSpan{Index: n + 1, Input: msgs[i].Text(), Start: msgs[i].CreatedAt, End: msgs[last].UpdatedAt}
		for j := last; j > i; j-- {
			if msgs[j].Role == llm.RoleAssistant && msgs[j].Text() != "" {
				span.Answer = msgs[j].Text()
				break
			}
		}
		out = append(out, span)
	}
	return out
}

var stageLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^- (\w+) \(round (\d+)(?: of (\d+))?\): (passed|failed|applied)(?: — (.*))?$`)
})

// gateOutcomes parses the gate notes of the Orchestrator's history.
func gateOutcomes(msgs []store.Message) []GateOutcome {
	out := []GateOutcome{}
	idx := userInputs(msgs)
	for i, m := range msgs {
		text := m.Text()
		if m.Role != llm.RoleUser || !strings.HasPrefix(text, gateNotePrefix) {
			continue
		}
		body := strings.TrimPrefix(text, gateNotePrefix)
		g := GateOutcome{At: m.CreatedAt, Text: body, Stages: []GateStage{}, Reasons: []string{}}
		for _, u := range idx {
			if u < i {
				g.Turn++
			}
		}
		lines := strings.Split(body, "\n")
		var verdict string
		if _, err := fmt.Sscanf(lines[0], "Quality gates %s after %d fix round(s).", &verdict, &g.FixRounds); err == nil {
			g.Passed = verdict == "passed"
		}
		g.Verdict = present.FixRounds(g.Passed, g.FixRounds)
		// The note lists the stages in the order they finished, so a
		// stage's runs are counted as they appear (present.Round).
		runs := map[string]int{}
		for _, l := range lines[1:] {
			if why, ok := strings.CutPrefix(l, "Required because: "); ok {
				g.Reasons = strings.Split(strings.TrimSuffix(why, "."), "; ")
				continue
			}
			if sm := stageLine().FindStringSubmatch(l); sm != nil {
				round, _ := strconv.Atoi(sm[2])
				maxRounds, _ := strconv.Atoi(sm[3]) // 0 in notes from before it was kept
				runs[sm[1]]++
				run := runs[sm[1]]
				g.Stages = append(g.Stages, GateStage{Stage: sm[1], Round: round, Run: run, MaxRounds: maxRounds, Mark: sm[4], Summary: sm[5],
					Label: present.StageRound(sm[1], run, maxRounds) + ": " + sm[4]})
			}
		}
		out = append(out, g)
	}
	return out
}

// gateOf names the gate stage a specialist run served, from the
// description the gates give it (actors/gates.go).
func gateOf(title string) string {
	switch {
	case title == "review the change":
		return "review"
	case title == "rerun the tests":
		return "test"
	case title == "diagnose failing checks":
		return "qa"
	case strings.HasPrefix(title, "fix ") && strings.HasSuffix(title, " findings"):
		return "fix"
	}
	return ""
}

// runOf summarises a specialist's child session.
func (s *Server) runOf(ctx context.Context, st store.Store, k store.Session) (Run, []store.UsageRecord, error) {
	run := Run{ID: k.ID, Agent: k.Agent, Title: k.Title, Model: k.Model, Start: k.CreatedAt, End: k.UpdatedAt,
		Gate: gateOf(k.Title), Tokens: k.PromptTokens + k.CompletionTokens, Cost: k.Cost, CostUnknown: !s.priced(k.Model)}
	msgs, err := st.AllMessages(ctx, k.ID)
	if err != nil {
		return run, nil, err
	}
	tools, err := st.ToolHistory(ctx, k.ID)
	if err != nil {
		return run, nil, err
	}
	usage, err := st.UsageRecords(ctx, k.ID)
	if err != nil {
		return run, nil, err
	}
	run.ToolCalls = len(tools)
	for _, m := range msgs {
		if m.UpdatedAt.After(run.End) {
			run.End = m.UpdatedAt
		}
	}
	for _, t := range tools {
		if end := t.At; end.After(run.End) {
			run.End = end
		}
	}
	run.Report = reportOf(msgs)
	run.Outcome, run.Summary = outcomeOf(run.Agent, run.Report)
	return run, usage, nil
}

// reportOf is the input of the run's Report call: the typed result the
// specialist ended with.
func reportOf(msgs []store.Message) json.RawMessage {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls() {
			if c.Name == "Report" && json.Valid([]byte(c.Input)) {
				return json.RawMessage(c.Input)
			}
		}
	}
	return nil
}

// outcomeOf colours a run: a review that did not approve or a QA diagnosis
// that did not pass sent the change back; no report is a failure.
func outcomeOf(agent string, report json.RawMessage) (outcome, summary string) {
	if report == nil {
		return "failed", ""
	}
	var r struct {
		Summary  string `json:"summary"`
		Approved *bool  `json:"approved"`
		Passed   *bool  `json:"passed"`
		Failed   *int   `json:"failed"`
	}
	_ = json.Unmarshal(report, &r)
	switch {
	case r.Approved != nil && !*r.Approved, r.Passed != nil && !*r.Passed, r.Failed != nil && *r.Failed > 0:
		return "findings", r.Summary
	}
	return "ok", r.Summary
}

// transcript: GET /v1/history/{id}/transcript — one session's messages,
// tool history and usage; id may be a specialist's child session.
func (s *Server) transcript(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	s.history(w, r, func(st store.Store) error {
		sess, err := s.storedSession(ctx, st, r.PathValue("id"))
		if err != nil {
			return err
		}
		msgs, err := st.AllMessages(ctx, sess.ID)
		if err != nil {
			return err
		}
		tr := Transcript{Session: sess, Entries: make([]Entry, 0, len(msgs))}
		if tr.Tools, err = st.ToolHistory(ctx, sess.ID); err != nil {
			return err
		}
		if tr.Usage, err = st.UsageRecords(ctx, sess.ID); err != nil {
			return err
		}
		if tr.Tools == nil {
			tr.Tools = []store.ToolRecord{}
		}
		if tr.Usage == nil {
			tr.Usage = []store.UsageRecord{}
		}
		tr.UnpricedModels = s.unpriced(tr.Usage)
		tr.CostUnknown = !s.priced(sess.Model) || len(tr.UnpricedModels) > 0
		tr.CostText = present.Cost(sess.Cost, tr.CostUnknown)
		for _, m := range msgs {
			e := Entry{Seq: m.Seq, Role: string(m.Role), Model: m.Model, At: m.CreatedAt, Parts: make([]Part, 0, len(m.Parts)), Interrupted: m.Interrupted}
			for _, p := range m.Parts {
				switch p := p.(type) {
				case store.TextPart:
					if p.Injected {
						continue // context Odin added for the model, not said by anyone
					}
					e.Parts = append(e.Parts, Part{Type: "text", Text: p.Text})
				case store.ReasoningPart:
					e.Parts = append(e.Parts, Part{Type: "reasoning", Text: p.Text})
				case store.ToolCallPart:
					e.Parts = append(e.Parts, Part{Type: "tool_call", ID: p.ID, Name: p.Name, Input: p.Input})
				case store.ToolResultPart:
					e.Parts = append(e.Parts, Part{Type: "tool_result", ID: p.ToolCallID, Name: p.Name, Text: p.Content, IsError: p.IsError, Cancelled: p.Cancelled})
				case store.FinishPart:
					e.Parts = append(e.Parts, Part{Type: "finish", Reason: string(p.Reason)})
				}
			}
			tr.Entries = append(tr.Entries, e)
		}
		if sess.ParentID != "" {
			tr.Report = reportOf(msgs)
		}
		writeJSON(w, http.StatusOK, tr)
		return nil
	})
}
