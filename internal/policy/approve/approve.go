package approve

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Decision is an answer to an approval request. Its values are the ones
// messages.ApprovalResolved carries.
type Decision string

// Decisions.
const (
	// AllowOnce allows this call only.
	AllowOnce Decision = "once"
	// AllowSession allows this call and, for the rest of the session, every
	// call whose subjects (commands, paths) were all approved before.
	AllowSession Decision = "session"
	// Reject refuses the call.
	Reject Decision = "deny"
)

// ParseDecision accepts "once", "session" or "deny" (and "allow" for once,
// "always" for session, "no" for deny, as a user might type them).
func ParseDecision(s string) (Decision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "once", "allow", "yes", "y":
		return AllowOnce, nil
	case "session", "always", "a":
		return AllowSession, nil
	case "deny", "no", "n", "reject":
		return Reject, nil
	}
	return "", fmt.Errorf("policy: unknown decision %q (want once, session or deny)", s)
}

// RequestKind says what an approval is about.
type RequestKind string

// Request kinds.
const (
	KindCommand RequestKind = "command"
	KindPath    RequestKind = "path"
	KindMCP     RequestKind = "mcp"
)

// Request asks a human to approve a tool call.
type Request struct {
	Kind RequestKind
	// Tool is the tool making the call (empty when a path guard asks on its
	// own behalf).
	Tool string
	// Subject is what to show: the command as written or the resolved path.
	Subject string
	// Access is the access asked for a path.
	Access tool.Access
	// Findings are the reasons approval is needed; approving for the
	// session remembers their keys.
	Findings []Finding
	// Origin is the agent asking.
	Origin messages.Origin
}

// Reasons returns the findings' reasons.
func (r Request) Reasons() []string { return Verdict{Findings: r.Findings}.Reasons() }

// Approver answers approval requests. Approve blocks until an answer or
// until ctx ends (then it returns ctx's error); implementations must be safe
// for concurrent use, since specialists run in parallel.
type Approver interface {
	Approve(ctx context.Context, req Request) (Decision, error)
}

// Headless answers without waiting, for runs where nobody can answer: it
// refuses everything, or with Yolo allows everything. Yolo never overrides
// a Deny verdict (forbidden commands, protected paths, mode rules), because
// denials never reach an Approver.
type Headless struct {
	Yolo bool
}

// Approve implements Approver.
func (h Headless) Approve(context.Context, Request) (Decision, error) {
	if h.Yolo {
		return AllowOnce, nil
	}
	return Reject, nil
}

// Memory remembers what was approved for the session and asks next only for
// the rest. A request whose every finding was approved for the session
// before is allowed without asking. Path approvals cover what lies beneath
// the approved path, and a write approval covers reads. One Memory belongs to
// one session and is shared by all its agents; it is safe for concurrent use.
type Memory struct {
	next Approver
	mu   sync.Mutex
	keys map[string]bool
}

// NewMemory returns an empty Memory in front of next (nil: Headless{}).
func NewMemory(next Approver) *Memory {
	if next == nil {
		next = Headless{}
	}
	return &Memory{next: next, keys: map[string]bool{}}
}

// Approve implements Approver. Only the findings not approved before are
// passed on, so the user is asked about what is new.
func (m *Memory) Approve(ctx context.Context, req Request) (Decision, error) {
	if m.covers(req) {
		return AllowSession, nil
	}
	req.Findings = m.ungranted(req.Findings)
	d, err := m.next.Approve(ctx, req)
	if err == nil && d == AllowSession {
		m.mu.Lock()
		for _, f := range req.Findings {
			if f.Key != "" {
				m.keys[f.Key] = true
			}
		}
		m.mu.Unlock()
	}
	return d, err
}

// Granted reports whether key was approved for the session.
func (m *Memory) Granted(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.granted(key)
}

// Keys returns the remembered keys, sorted.
func (m *Memory) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.keys))
	for k := range m.keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (m *Memory) covers(req Request) bool {
	if len(req.Findings) == 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range req.Findings {
		if f.Key == "" || !m.granted(f.Key) {
			return false
		}
	}
	return true
}

func (m *Memory) ungranted(fs []Finding) []Finding {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Finding
	for _, f := range fs {
		if f.Key == "" || !m.granted(f.Key) {
			out = append(out, f)
		}
	}
	return out
}

// granted must be called with m.mu held.
func (m *Memory) granted(key string) bool {
	if m.keys[key] {
		return true
	}
	rest, ok := strings.CutPrefix(key, "path:")
	if !ok {
		return false
	}
	access, p, ok := strings.Cut(rest, ":")
	if !ok {
		return false
	}
	for dir := p; ; dir = filepath.Dir(dir) {
		if m.keys[PathKey(tool.AccessWrite, dir)] || (access == string(tool.AccessRead) && m.keys[PathKey(tool.AccessRead, dir)]) {
			return true
		}
		if filepath.Dir(dir) == dir {
			return false
		}
	}
}

// BusApprover asks the user through the session's event bus: it publishes
// messages.ApprovalRequested and waits for the front end (the REPL) to call
// Answer with the request's ID, or for ctx to end. Several requests may be
// pending at once (parallel specialists); Pending lists them for a front end
// that attaches late. It is safe for concurrent use.
type BusApprover struct {
	bus   *events.Bus
	newID func() string

	mu      sync.Mutex
	pending map[string]*pendingApproval
}

type pendingApproval struct {
	event  messages.ApprovalRequested
	answer chan Decision
}

// NewBusApprover returns an approver publishing on bus; newID makes request
// IDs (nil: random UUIDs).
func NewBusApprover(bus *events.Bus, newID func() string) *BusApprover {
	if newID == nil {
		newID = uuid.NewString
	}
	return &BusApprover{bus: bus, newID: newID, pending: map[string]*pendingApproval{}}
}

// Approve implements Approver. When ctx ends first it withdraws the request
// (publishing ApprovalResolved with "deny") and returns ctx's error.
func (a *BusApprover) Approve(ctx context.Context, req Request) (Decision, error) {
	p := &pendingApproval{
		event: messages.ApprovalRequested{
			ID:      a.newID(),
			Origin:  req.Origin,
			Tool:    req.Tool,
			Subject: req.Subject,
			Reason:  strings.Join(req.Reasons(), "; "),
		},
		answer: make(chan Decision, 1),
	}
	if ref, ok := tool.CallOf(ctx); ok {
		p.event.CallID = ref.ID
	}
	a.mu.Lock()
	a.pending[p.event.ID] = p
	a.mu.Unlock()
	// Publish outside the lock: a lossless subscriber may call Answer
	// before Publish returns.
	a.bus.Publish(p.event)
	select {
	case d := <-p.answer:
		return d, nil
	case <-ctx.Done():
		a.mu.Lock()
		_, still := a.pending[p.event.ID]
		delete(a.pending, p.event.ID)
		a.mu.Unlock()
		if still {
			a.bus.Publish(messages.ApprovalResolved{ID: p.event.ID, Decision: string(Reject)})
		}
		return Reject, fmt.Errorf("policy: waiting for approval of %q: %w", req.Subject, ctx.Err())
	}
}

// Answer resolves the pending request id with d and publishes
// messages.ApprovalResolved.
func (a *BusApprover) Answer(id string, d Decision) error {
	if d != AllowOnce && d != AllowSession && d != Reject {
		return fmt.Errorf("policy: invalid decision %q", d)
	}
	a.mu.Lock()
	p, ok := a.pending[id]
	delete(a.pending, id)
	a.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownApproval, id)
	}
	p.answer <- d
	a.bus.Publish(messages.ApprovalResolved{ID: id, Decision: string(d)})
	return nil
}

// Pending returns the requests waiting for an answer, sorted by ID.
func (a *BusApprover) Pending() []messages.ApprovalRequested {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]messages.ApprovalRequested, 0, len(a.pending))
	for _, p := range a.pending {
		out = append(out, p.event)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// RequestApproval asks approver (nil: Headless{}) about the Ask findings of
// v and returns nil when allowed, a *Denial when refused, or the approver's
// error (a cancelled context).
func RequestApproval(ctx context.Context, approver Approver, req Request, v Verdict) error {
	if approver == nil {
		approver = Headless{}
	}
	req.Findings = v.Asks()
	d, err := approver.Approve(ctx, req)
	if err != nil {
		return err
	}
	if d == AllowOnce || d == AllowSession {
		return nil
	}
	return notApproved(req)
}

// notApproved is the denial for a request nobody approved.
func notApproved(req Request) *Denial {
	// A path's reasons already name the --add-dir to use.
	hint := " To allow it without asking, the user can run with --allow 'PATTERN' (a command pattern such as 'go test *') or add the pattern to permissions.allowed_commands, use --add-dir DIR for directories outside the project, or run with --yolo."
	if req.Kind == KindPath {
		hint = ""
	}
	if req.Kind == KindMCP {
		hint = fmt.Sprintf(" To allow it without asking, the user can run with --allow '%s' (or a pattern such as 'mcp__SERVER__*') or add the pattern to permissions.allowed_commands, or run with --yolo.", req.Tool)
	}
	return &Denial{
		Rule:    RuleNotApproved,
		Subject: req.Subject,
		Message: fmt.Sprintf("Permission denied: %s needs approval and was not approved (rule %s). Why it needed approval: %s.%s Do not retry the same call; find another way or ask the user.",
			quoteSubject(req.Subject), RuleNotApproved, strings.Join(req.Reasons(), "; "), hint),
	}
}

// DenialOf is the error for a Deny verdict about subject.
func DenialOf(v Verdict, subject, tool string) *Denial {
	ds := v.Denials()
	rule := ""
	var reasons []string
	for _, f := range ds {
		if rule == "" {
			rule = f.Rule
		}
		reasons = append(reasons, f.Reason)
	}
	what := quoteSubject(subject)
	if tool != "" {
		what = tool + " " + what
	}
	return &Denial{
		Rule:    rule,
		Subject: subject,
		Message: fmt.Sprintf("Permission denied: %s is refused: %s.", what, strings.Join(dedupe(reasons), "; ")),
	}
}

func quoteSubject(s string) string {
	const max = 300
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return "`" + s + "`"
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// PathKey is the approval-memory key of access to p.
func PathKey(access tool.Access, p string) string {
	return "path:" + string(access) + ":" + p
}
