package serve

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

//go:embed openapi.yaml
var openAPI []byte

// Options configure a Server.
type Options struct {
	Opener Opener
	// Token is the bearer token every request must carry.
	Token string
	// Roots are the directories sessions may be created under (absolute,
	// symlinks resolved).
	Roots []string
	// Mode is the mode of a message that names none.
	Mode messages.Mode
	// Idle is how long a session without work stays in memory (default
	// 10 minutes); Buffer how many events a session keeps for
	// reconnecting clients (default 1024).
	Idle   time.Duration
	Buffer int
	// CORSOrigins, when set, are the origins allowed to call the API from
	// a browser; none by default.
	CORSOrigins []string
	Log         *slog.Logger
	// Priced reports whether a model (as stored) has a known price; the
	// history then marks costs of unpriced models unknown rather than
	// $0. Nil: every model counts as priced.
	Priced func(model string) bool
}

// Server is the HTTP API.
type Server struct {
	opts Options
	m    *manager
	mux  *http.ServeMux
	stop chan struct{}
	done chan struct{}
	// streams counts the event streams open.
	streams atomic.Int64
}

// New returns a Server; Close it to stop its sweeper and sessions.
func New(opts Options) (*Server, error) {
	if opts.Token == "" {
		return nil, errors.New("serve: no token")
	}
	if len(opts.Roots) == 0 {
		return nil, errors.New("serve: no project roots configured")
	}
	if opts.Mode == "" {
		opts.Mode = messages.ModeEdit
	}
	if opts.Idle <= 0 {
		opts.Idle = 10 * time.Minute
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 1024
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, stop: make(chan struct{}), done: make(chan struct{}),
		m: &manager{open: opts.Opener, idle: opts.Idle, bufSize: opts.Buffer, log: opts.Log, now: time.Now, sessions: map[string]*entry{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(openAPI)
	})
	mux.HandleFunc("POST /v1/sessions", s.createSession)
	mux.HandleFunc("GET /v1/sessions", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, s.m.list()) })
	mux.HandleFunc("GET /v1/sessions/{id}", s.showSession)
	mux.HandleFunc("DELETE /v1/sessions/{id}", s.closeSession)
	mux.HandleFunc("POST /v1/sessions/{id}/messages", s.sendMessage)
	mux.HandleFunc("GET /v1/sessions/{id}/events", s.events)
	mux.HandleFunc("POST /v1/sessions/{id}/cancel", s.cancel)
	mux.HandleFunc("GET /v1/sessions/{id}/queue", s.queue)
	mux.HandleFunc("DELETE /v1/sessions/{id}/queue/{input}", s.removeQueued)
	mux.HandleFunc("GET /v1/sessions/{id}/export", s.export)
	mux.HandleFunc("POST /v1/sessions/{id}/undo", s.undo)
	mux.HandleFunc("GET /v1/sessions/{id}/approvals", s.approvals)
	mux.HandleFunc("POST /v1/sessions/{id}/approvals/{approval}", s.answer)
	mux.HandleFunc("GET /v1/sessions/{id}/elicitations", s.elicitations)
	mux.HandleFunc("POST /v1/sessions/{id}/elicitations/{elicitation}", s.answerElicitation)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("GET /v1/history", s.listHistory)
	mux.HandleFunc("GET /v1/history/{id}", s.timeline)
	mux.HandleFunc("GET /v1/history/{id}/transcript", s.transcript)
	s.mux = mux
	go s.sweeper()
	return s, nil
}

// Handler is the API with authentication (and CORS, if configured).
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && s.corsAllowed(origin) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			w.Header().Set("Vary", "Origin")
			if r.Method == http.MethodOptions {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if s.viewAsset(w, r) {
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="odin"`)
			writeError(w, http.StatusUnauthorized, errors.New("missing or wrong bearer token (see the token file odin serve printed)"))
			return
		}
		s.route(w, r)
	})
}

// route serves r through the API's routes. A path no route has, or a
// method the path does not take, gets the API's JSON error (the mux's own
// answer is plain text), keeping the 404 or 405 and its Allow header.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	rec := &statusOnly{header: w.Header()}
	h.ServeHTTP(rec, r)
	switch rec.code {
	case http.StatusMethodNotAllowed:
		writeError(w, rec.code, fmt.Errorf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, w.Header().Get("Allow")))
	case http.StatusNotFound, 0:
		writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s (see /openapi.yaml)", r.Method, r.URL.Path))
	default:
		// A redirect (a path cleaned by the mux): pass it on as is.
		w.WriteHeader(rec.code)
	}
}

// statusOnly keeps the status the mux's fallback handler answers and
// drops its plain-text body; its headers (Allow, Location) go to the real
// response.
type statusOnly struct {
	header http.Header
	code   int
}

func (s *statusOnly) Header() http.Header { return s.header }

func (s *statusOnly) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}

func (s *statusOnly) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return len(b), nil
}

func (s *Server) corsAllowed(origin string) bool {
	for _, o := range s.opts.CORSOrigins {
		if o == origin || o == "*" {
			return true
		}
	}
	return false
}

// Shutdown cancels and persists every session's work and ends every event
// stream with a final "shutdown" event. Call it before http.Server's
// Shutdown, which waits for the streams to end.
func (s *Server) Shutdown() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	s.m.shutdown()
}

// Reconnect runs rejoin (a cluster front leaving and joining the cluster
// again) without stopping the HTTP server: the running sessions are
// detached first and opened again after, their event streams staying
// open across it; requests that need a session meanwhile wait up to 10 s,
// then are answered 503 with Retry-After.
func (s *Server) Reconnect(rejoin func() error) error { return s.m.reconnect(rejoin) }

// Sweep passivates the sessions idle for longer than Options.Idle now and
// returns how many.
func (s *Server) Sweep() int { return s.m.sweep() }

func (s *Server) sweeper() {
	defer close(s.done)
	t := time.NewTicker(max(s.opts.Idle/4, time.Second))
	defer t.Stop()
	mem := time.NewTicker(reclaimEvery)
	defer mem.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.m.sweep()
		case <-mem.C:
			s.m.reclaim()
		}
	}
}

// reclaimEvery is how often an idle server checks whether to return
// memory to the OS (manager.reclaim).
const reclaimEvery = 5 * time.Second

// underRoot resolves dir and checks that it lies under a configured root.
func (s *Server) underRoot(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", badProject(fmt.Sprintf("project %q must be an absolute path", dir))
	}
	outside := fmt.Errorf("project %s is not under a configured root (%s); start odin serve with --root", dir, strings.Join(s.opts.Roots, ", "))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		// Outside the roots, whether a path exists is none of the
		// client's business: the refusal is the same as for one that does.
		if !s.inRoots(filepath.Clean(dir)) {
			return "", outside
		}
		if errors.Is(err, fs.ErrNotExist) {
			return "", badProject("project directory " + dir + " does not exist")
		}
		return "", badProject(fmt.Sprintf("project %s: %v", dir, err))
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		if !s.inRoots(real) {
			return "", outside
		}
		return "", badProject("project " + dir + " is not a directory")
	}
	for _, root := range s.opts.Roots {
		rel, err := filepath.Rel(root, real)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return real, nil
		}
	}
	return "", outside
}

// badProject is a project path the client got wrong (relative, missing,
// not a directory) under a root: a 400, where one outside every root is a
// 403.
type badProject string

func (e badProject) Error() string { return string(e) }

type createRequest struct {
	Project string `json:"project"`
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, bodyStatus(err), err)
		return
	}
	dir, err := s.underRoot(req.Project)
	if err != nil {
		code := http.StatusForbidden
		if errors.As(err, new(badProject)) {
			code = http.StatusBadRequest
		}
		writeError(w, code, err)
		return
	}
	e, err := s.m.create(r.Context(), dir)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusCreated, e.info())
}

// entry is the session the request names: one this server runs or has
// passivated, or one in the store from before a restart (or from the
// CLI), whose project lies under a root, adopted as passivated.
func (s *Server) entry(w http.ResponseWriter, r *http.Request) *entry {
	e, err := s.m.adopt(r.Context(), r.PathValue("id"), s.underRoot)
	if err != nil {
		writeError(w, statusOf(err), err)
		return nil
	}
	return e
}

func (s *Server) showSession(w http.ResponseWriter, r *http.Request) {
	if e := s.entry(w, r); e != nil {
		writeJSON(w, http.StatusOK, e.info())
	}
}

func (s *Server) closeSession(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	s.m.passivate(e, true)
	s.m.mu.Lock()
	delete(s.m.sessions, e.id)
	s.m.mu.Unlock()
	e.hub.close("closed", []byte(`{"type":"closed"}`))
	w.WriteHeader(http.StatusNoContent)
}

type messageRequest struct {
	Body string `json:"body"`
	Mode string `json:"mode,omitempty"`
}

func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	var req messageRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, bodyStatus(err), err)
		return
	}
	if strings.TrimSpace(req.Body) == "" {
		writeError(w, http.StatusBadRequest, errors.New("body: empty message"))
		return
	}
	mode := s.opts.Mode
	if req.Mode != "" {
		m, err := messages.ParseMode(req.Mode)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("mode: %w", err))
			return
		}
		mode = m
	}
	key := r.Header.Get("Idempotency-Key")
	if len(key) > maxIdempotencyKey {
		writeError(w, http.StatusBadRequest, fmt.Errorf("Idempotency-Key: longer than %d bytes", maxIdempotencyKey))
		return
	}
	m, err := s.m.submit(r.Context(), e, key, req.Body, mode)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	code := http.StatusAccepted
	if m.Duplicate {
		code = http.StatusOK
	}
	writeJSON(w, code, m)
}

// maxIdempotencyKey bounds a client's key: it is stored as the input's ID.
const maxIdempotencyKey = 200

// ResumePending opens every stored session that holds inputs accepted and
// not done, so that turns a previous server left unfinished (killed, or
// stopped mid-turn) run to their end; odin serve calls it as it starts.
// Sessions outside the roots are left alone. It returns how many sessions
// it opened.
func (s *Server) ResumePending(ctx context.Context) (int, error) {
	return s.m.resumePending(ctx, s.underRoot)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	_ = e.withSession(func(sess Session) error {
		if sess != nil {
			sess.Cancel("cancelled through the API")
		}
		return nil
	})
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) queue(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	_ = e.withSession(func(sess Session) error {
		if sess == nil {
			writeJSON(w, http.StatusOK, messages.QueueState{Queued: []messages.UserMessage{}})
			return nil
		}
		qs, err := sess.Queue(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return nil
		}
		writeJSON(w, http.StatusOK, qs)
		return nil
	})
}

func (s *Server) removeQueued(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	_ = e.withSession(func(sess Session) error {
		if sess == nil {
			writeError(w, http.StatusNotFound, fmt.Errorf("no queued input %s", r.PathValue("input")))
			return nil
		}
		id := r.PathValue("input")
		// The session answers a removal with its queue whether or not the
		// input was in it, so look first: an unknown or already started
		// input is the 404 the API documents, not a silent success.
		before, err := sess.Queue(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return nil
		}
		if !queued(before, id) {
			writeError(w, http.StatusNotFound, notQueued(before, id))
			return nil
		}
		qs, err := sess.Remove(r.Context(), id)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return nil
		}
		if qs.Running != nil && qs.Running.ID == id {
			// It started between the look and the removal.
			writeError(w, http.StatusNotFound, notQueued(qs, id))
			return nil
		}
		writeJSON(w, http.StatusOK, qs)
		return nil
	})
}

func queued(qs *messages.QueueState, id string) bool {
	for _, q := range qs.Queued {
		if q.ID == id {
			return true
		}
	}
	return false
}

func notQueued(qs *messages.QueueState, id string) error {
	if qs.Running != nil && qs.Running.ID == id {
		return fmt.Errorf("input %s is running, no longer queued (cancel the turn instead)", id)
	}
	return fmt.Errorf("no queued input %s", id)
}

func (s *Server) approvals(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	_ = e.withSession(func(sess Session) error {
		out := []messages.ApprovalRequested{}
		if sess != nil {
			out = append(out, sess.Pending()...)
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}

type answerRequest struct {
	Decision string `json:"decision"`
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	var req answerRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, bodyStatus(err), err)
		return
	}
	d, err := policy.ParseDecision(req.Decision)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("decision: %w", err))
		return
	}
	_ = e.withSession(func(sess Session) error {
		if sess == nil {
			writeError(w, http.StatusNotFound, fmt.Errorf("no pending approval %s", r.PathValue("approval")))
			return nil
		}
		if err := sess.Answer(r.PathValue("approval"), d); err != nil {
			writeError(w, http.StatusNotFound, err)
			return nil
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
}

func (s *Server) elicitations(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	_ = e.withSession(func(sess Session) error {
		out := []messages.ElicitationRequested{}
		if el, ok := sess.(Elicitor); ok && sess != nil {
			out = append(out, el.PendingElicitations()...)
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}

type elicitationAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// answerElicitation answers an MCP server's request for input: 400 when
// the content does not fit the form (the request stays pending, to be
// answered again), 404 when it is not pending.
func (s *Server) answerElicitation(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	var req elicitationAnswer
	if err := readJSON(r, &req); err != nil {
		writeError(w, bodyStatus(err), err)
		return
	}
	switch req.Action {
	case "accept", "decline", "cancel":
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("action: %q is not accept, decline or cancel", req.Action))
		return
	}
	if req.Action != "accept" && len(req.Content) > 0 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("content goes only with accept"))
		return
	}
	id := r.PathValue("elicitation")
	_ = e.withSession(func(sess Session) error {
		el, ok := sess.(Elicitor)
		if sess == nil || !ok {
			writeError(w, http.StatusNotFound, fmt.Errorf("no pending elicitation %s", id))
			return nil
		}
		if err := el.AnswerElicitation(id, req.Action, req.Content); err != nil {
			status := http.StatusNotFound
			if errors.Is(err, ErrInvalidAnswer) {
				status = http.StatusBadRequest
			}
			writeError(w, status, err)
			return nil
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
}

// events streams the session's events as SSE. Last-Event-ID (header, or
// the last_event_id query parameter) resumes after that event; when the
// events after it are no longer held, a "resync" event says so first.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, errors.New("streaming unsupported"))
		return
	}
	after := e.hub.last() // by default: only what happens from now on
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("last_event_id")
	}
	if last != "" {
		n, err := strconv.ParseUint(last, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("Last-Event-ID %q is not an event id", last))
			return
		}
		after = n
	}
	s.streams.Add(1)
	defer s.streams.Add(-1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": odin events\n\n")
	fl.Flush()
	var buf []byte
	for {
		recs, from, changed, closed := e.hub.after(after)
		buf = buf[:0]
		if from > after {
			buf = append(buf, `event: resync`+"\n"+`data: {"type":"resync","after":`...)
			buf = strconv.AppendUint(buf, after, 10)
			buf = append(buf, "}\n\n"...)
			after = from // told once: the next events follow the gap
		}
		// One write for what is pending: the events of a turn arrive in
		// bursts, and each write to the connection is a system call.
		for _, rec := range recs {
			buf = append(buf, "id: "...)
			buf = strconv.AppendUint(buf, rec.seq, 10)
			buf = append(buf, "\nevent: "...)
			buf = append(buf, rec.typ...)
			buf = append(buf, "\ndata: "...)
			buf = append(buf, rec.data...)
			buf = append(buf, "\n\n"...)
			after = rec.seq
		}
		if len(buf) > 0 {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
		fl.Flush()
		if closed {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

// bodyStatus is the status for a request body readJSON refused.
func bodyStatus(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, errShuttingDown), errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, ErrTakenOver):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// maxBody is the largest request body the API reads (the document says
// 1 MiB; a bigger one is a 413, not a truncated-JSON 400).
const maxBody = 1 << 20

func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	// One JSON value and nothing after it: `{"body":"x"} rm -rf` is a
	// broken request, not a message "x".
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fmt.Errorf("request body: %w", err)
		}
		return errors.New("request body: more than one JSON value")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	if errors.Is(err, ErrUnavailable) {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

// SetIdle changes how long a session without work stays in memory.
func (s *Server) SetIdle(d time.Duration) {
	s.m.mu.Lock()
	s.m.idle = d
	s.m.mu.Unlock()
}

// export writes the stored session: ?format=jsonl (default, re-importable
// with odin sessions import) or markdown.
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	format := r.URL.Query().Get("format")
	switch format {
	case "", "jsonl":
		format = "jsonl"
		w.Header().Set("Content-Type", "application/jsonl")
	case "markdown", "md":
		format = "markdown"
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("format %q: want jsonl or markdown", format))
		return
	}
	var buf strings.Builder
	if err := s.opts.Opener.Export(r.Context(), e.id, e.project, format, &buf); err != nil {
		w.Header().Del("Content-Type")
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	_, _ = io.WriteString(w, buf.String())
}

// undo restores the files of the project's newest change set; refused
// while the session has work, which could be writing those files.
func (s *Server) undo(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inFlight.Load() > 0 {
		writeError(w, http.StatusConflict, errors.New("the session has a running or queued turn; cancel it or wait, then undo"))
		return
	}
	msg, err := s.opts.Opener.Undo(r.Context(), e.project)
	if err != nil {
		writeError(w, http.StatusConflict, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"restored": msg})
}
