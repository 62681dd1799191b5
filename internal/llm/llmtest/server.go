package llmtest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/odin-code/odin/internal/llm"
)

// maxBody bounds a request body; Odin's largest prompts are far below it.
const maxBody = 64 << 20

// Request is one chat-completion request the server received.
type Request struct {
	// Agent is the X-Odin-Agent header, DefaultAgent when absent.
	Agent string
	// Pool is the agent whose steps served it (Agent, or DefaultAgent).
	Pool string
	// Step is the index of the served step in Pool's list, -1 if none.
	Step   int
	Time   time.Time
	Header http.Header
	// Body is the decoded body; Raw the bytes as received.
	Body ChatRequest
	Raw  []byte
	// Concurrent is true when another request was in flight as it arrived.
	Concurrent bool
	// Tokens is the server's estimate of the request's prompt (messages
	// and tools, by llm.EstimateMessages and llm.EstimateTools' rules),
	// the figure WithContextWindow compares with the window; 0 for a body
	// that is not a chat request.
	Tokens int64
	// OverWindow is true when WithContextWindow refused the request.
	OverWindow bool
	// RateLimited is true when WithRateLimit answered the request 429.
	RateLimited bool
}

// ChatRequest is the part of a Chat Completions body tests assert on.
type ChatRequest struct {
	Model               string         `json:"model"`
	Messages            []ChatMessage  `json:"messages"`
	Tools               []ChatTool     `json:"tools"`
	Stream              bool           `json:"stream"`
	StreamOptions       *StreamOptions `json:"stream_options"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	Temperature         *float64       `json:"temperature"`
}

// StreamOptions is the stream_options object of a request.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ChatMessage is one message of a request as sent on the wire.
type ChatMessage struct {
	Role string `json:"role"`
	// Content is raw: a string, null, absent, or an array of parts.
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []ChatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

// ChatToolCall is a tool call of an assistant message in a request.
type ChatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ChatTool is a tool offered in a request.
type ChatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Text returns the message's text: the string content, or its text parts
// joined.
func (m ChatMessage) Text() string {
	if len(m.Content) == 0 {
		return ""
	}
	if m.Content[0] == '"' {
		var s string
		_ = jsonv1.Unmarshal(m.Content, &s)
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// ImageURLs returns the URLs of the message's image parts (data URLs for
// the images Odin sends), in order.
func (m ChatMessage) ImageURLs() []string {
	if len(m.Content) == 0 || m.Content[0] != '[' {
		return nil // only an array of parts holds images
	}
	var parts []struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return nil
	}
	var out []string
	for _, p := range parts {
		if p.Type == "image_url" {
			out = append(out, p.ImageURL.URL)
		}
	}
	return out
}

// dataImage decodes a base64 data URL into an image; ok is false for any
// other URL.
func dataImage(u string) (llm.Image, bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return llm.Image{}, false
	}
	mime, b64, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return llm.Image{}, false
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return llm.Image{}, false
	}
	return llm.Image{MIME: mime, Data: data}, true
}

// ToolNames lists the names of the tools offered.
func (r ChatRequest) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Function.Name
	}
	return names
}

// LLMMessages converts the wire messages back to llm.Message values.
func (r ChatRequest) LLMMessages() []llm.Message {
	out := make([]llm.Message, len(r.Messages))
	for i, m := range r.Messages {
		lm := llm.Message{Role: llm.Role(m.Role), Content: m.Text(), ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		for _, u := range m.ImageURLs() {
			if im, ok := dataImage(u); ok {
				lm.Images = append(lm.Images, im)
			}
		}
		out[i] = lm
	}
	return out
}

// ServerOption configures Serve and NewServer.
type ServerOption func(*serverConfig)

type serverConfig struct {
	vars    map[string]string
	log     io.Writer
	quota   *quota
	cache   *promptCache
	windows map[string]int64
}

// WithVars substitutes {{name}} in the script's strings (see Script.WithVars).
func WithVars(vars map[string]string) ServerOption {
	return func(c *serverConfig) { c.vars = vars }
}

// WithLog writes one line per request to w (cmd/scripted-model -v). The
// server serialises its own writes; a caller also writing to w must guard
// it (see cmd/scripted-model).
func WithLog(w io.Writer) ServerOption {
	return func(c *serverConfig) { c.log = w }
}

// WithRateLimit makes the server enforce a provider's quota: a request
// arriving when perSecond requests were already served in the last second
// is answered 429 with Retry-After (in whole seconds, at least 1) instead
// of taking a step. Rejected requests do not count against the quota, as
// with real providers; RateLimited counts them.
func WithRateLimit(perSecond int, retryAfter time.Duration) ServerOption {
	return func(c *serverConfig) {
		c.quota = &quota{perSecond: perSecond, retryAfter: max(retryAfter, time.Second)}
	}
}

// WithContextWindow makes the server enforce a context window of tokens
// on the requests for the named models (on every request when none is
// named; a named model's window wins over that default): a request whose
// estimated prompt is larger is answered as OpenAI does, 400 with an
// error of code context_length_exceeded, instead of taking a step. It is
// recorded with OverWindow set. The estimate is Request.Tokens, the same
// crude count Odin's own estimator makes, so a test can make Odin's
// figures and the provider's agree or, with a smaller window than Odin is
// told, disagree.
func WithContextWindow(tokens int, models ...string) ServerOption {
	return func(c *serverConfig) {
		if c.windows == nil {
			c.windows = map[string]int64{}
		}
		if len(models) == 0 {
			c.windows[""] = int64(tokens)
		}
		for _, m := range models {
			c.windows[m] = int64(tokens)
		}
	}
}

// quota is WithRateLimit's sliding one-second window.
type quota struct {
	perSecond  int
	retryAfter time.Duration

	mu       sync.Mutex
	served   []time.Time // within the last second
	rejected int
}

// admit reports whether a request arriving now is within the quota, and
// counts it as served if it is.
func (q *quota) admit(now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	cut := 0
	for cut < len(q.served) && now.Sub(q.served[cut]) >= time.Second {
		cut++
	}
	q.served = q.served[cut:]
	if len(q.served) >= q.perSecond {
		q.rejected++
		return false
	}
	q.served = append(q.served, now)
	return true
}

// Server is a scripted OpenAI-compatible HTTP server on a loopback port.
type Server struct {
	book  *book
	gates gates
	model string
	url   string
	srv   *http.Server
	ln    net.Listener
	stop  chan struct{}
	done  chan struct{}

	logMu sync.Mutex
	log   io.Writer

	quota   *quota           // nil: no rate limit
	cache   *promptCache     // nil: no cached tokens are reported
	windows map[string]int64 // model → context window; "" for any model

	// conns counts the client connections open now (ConnState).
	conns atomic.Int64

	mu        sync.Mutex
	requests  []Request
	inFlight  int
	maxFlight int
	// extras are the extra fields served on tool calls, by call id, as
	// canonical JSON: a request replaying the call must carry them back.
	extras map[string]string

	closeOnce sync.Once
	closeErr  error
}

// Serve starts serving script on addr ("127.0.0.1:0" picks a free port).
// Close the server when done.
func Serve(addr string, script *Script, opts ...ServerOption) (*Server, error) {
	var cfg serverConfig
	for _, o := range opts {
		o(&cfg)
	}
	s, err := prepare(script, cfg.vars)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("llmtest: listen: %w", err)
	}
	srv := &Server{
		book:    newBook(s),
		model:   s.Model,
		url:     "http://" + ln.Addr().String() + "/v1",
		ln:      ln,
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		log:     cfg.log,
		quota:   cfg.quota,
		cache:   cfg.cache,
		windows: cfg.windows,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", srv.chat)
	mux.HandleFunc("GET /v1/models", srv.models)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, ErrorBody{Message: fmt.Sprintf("llmtest: no route for %s %s", r.Method, r.URL.Path), Type: "invalid_request_error"})
	})
	srv.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			srv.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			srv.conns.Add(-1)
		}
	}}
	go func() {
		defer close(srv.done)
		_ = srv.srv.Serve(ln)
	}()
	return srv, nil
}

func prepare(script *Script, vars map[string]string) (*Script, error) {
	if err := script.Validate(); err != nil {
		return nil, err
	}
	s, err := script.WithVars(vars)
	if err != nil {
		return nil, err
	}
	if s.Model == "" {
		s.Model = DefaultModel
	}
	return s, nil
}

// OpenConns is how many client connections are open now, idle or busy:
// a test sees the client's pool close its idle connections.
func (s *Server) OpenConns() int { return int(s.conns.Load()) }

// URL returns the base URL of the API, ending in /v1.
func (s *Server) URL() string { return s.url }

// Close stops the server: held and delayed responses end at once, and it
// returns when every handler has finished.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			s.closeErr = s.srv.Close()
		}
		<-s.done
	})
	return s.closeErr
}

// Release lets every response held (now or later) at name proceed.
func (s *Server) Release(name string) { s.gates.release(name) }

// WaitHeld returns once a request has been held at name, or ctx's error.
func (s *Server) WaitHeld(ctx context.Context, name string) error { return s.gates.waitHeld(ctx, name) }

// Requests returns every chat request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// RequestsFor returns the requests whose X-Odin-Agent was agent.
func (s *Server) RequestsFor(agent string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Agent == agent {
			out = append(out, r)
		}
	}
	return out
}

// MaxInFlight is the largest number of chat requests handled at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxFlight
}

// Unused describes the steps no request has consumed.
func (s *Server) Unused() []string { return s.book.unused() }

// OverWindow is how many requests WithContextWindow refused.
func (s *Server) OverWindow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if r.OverWindow {
			n++
		}
	}
	return n
}

// window is the context window enforced on model, 0 for none.
func (s *Server) window(model string) int64 {
	if w, ok := s.windows[model]; ok {
		return w
	}
	return s.windows[""]
}

// RateLimited is how many requests WithRateLimit answered with 429.
func (s *Server) RateLimited() int {
	if s.quota == nil {
		return 0
	}
	s.quota.mu.Lock()
	defer s.quota.mu.Unlock()
	return s.quota.rejected
}

func (s *Server) logf(format string, args ...any) {
	if s.log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, obj{"object": "list", "data": []any{
		obj{"id": s.model, "object": "model", "created": 0, "owned_by": "odin-scripted"},
	}})
}

func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight++
	s.maxFlight = max(s.maxFlight, s.inFlight)
	return s.inFlight > 1
}

// InFlight is how many requests the server is handling now. A client can
// read a whole response before the handler has returned, so a test that
// needs requests not to overlap waits for this to drop to zero.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

func (s *Server) leave() {
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	concurrent := s.enter()
	defer s.leave()

	raw, err := readBody(w, r)
	if err != nil {
		writeError(w, http.StatusBadRequest, ErrorBody{Message: "llmtest: reading body: " + err.Error(), Type: "invalid_request_error"})
		return
	}
	agent := r.Header.Get(llm.AgentHeader)
	if agent == "" {
		agent = DefaultAgent
	}
	rec := Request{Agent: agent, Step: -1, Time: time.Now(), Header: r.Header.Clone(), Raw: raw, Concurrent: concurrent}
	record := func() {
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		s.mu.Unlock()
	}
	// Decoded by the v2 engine with encoding/json's semantics: twice as
	// fast, and the scripted server's CPU counts in every benchmark.
	if err := jsonv1.Unmarshal(raw, &rec.Body); err != nil {
		record()
		writeError(w, http.StatusBadRequest, ErrorBody{Message: "llmtest: body is not a chat request: " + err.Error(), Type: "invalid_request_error"})
		return
	}
	body := rec.Body
	msgs := body.LLMMessages()
	prompt := llm.EstimateMessages(msgs)
	for _, t := range body.Tools {
		prompt += llm.EstimateTokens(t.Function.Name) + llm.EstimateTokens(t.Function.Description) + llm.EstimateTokens(string(t.Function.Parameters))
	}
	rec.Tokens = prompt
	if win := s.window(body.Model); win > 0 && prompt > win {
		// Refused before anything else, as a provider does: the request
		// is never served, whatever the script holds.
		rec.OverWindow = true
		record()
		s.logf("%s: 400, about %d tokens over a window of %d", agent, prompt, win)
		writeError(w, http.StatusBadRequest, contextError(win, prompt))
		return
	}
	if msg := s.missingExtras(raw); msg != "" {
		record()
		s.logf("%s: %s", agent, msg)
		writeError(w, http.StatusBadRequest, ErrorBody{Message: msg, Type: "invalid_request_error", Code: "INVALID_ARGUMENT"})
		return
	}
	if s.quota != nil && !s.quota.admit(time.Now()) {
		rec.RateLimited = true
		record()
		s.logf("%s: 429, over %d requests per second", agent, s.quota.perSecond)
		w.Header().Set("Retry-After", fmt.Sprint(int(s.quota.retryAfter.Round(time.Second)/time.Second)))
		writeError(w, http.StatusTooManyRequests, ErrorBody{Message: fmt.Sprintf("llmtest: rate limit of %d requests per second reached", s.quota.perSecond),
			Type: "requests", Code: "rate_limit_exceeded"})
		return
	}
	pool, idx, st, ok := s.book.take(agent, lastTurnTexts(msgs))
	rec.Pool, rec.Step = pool, idx
	record()
	if !ok {
		msg := exhausted(agent, pool, msgs)
		s.logf("%s: %s", agent, msg)
		writeError(w, http.StatusInternalServerError, ErrorBody{Message: msg, Type: "server_error", Code: "script_exhausted"})
		return
	}
	s.logf("%s: step %s[%d]%s", agent, pool, idx, describe(st))

	ctx := r.Context()
	if st.Hold != "" {
		if err := s.gates.wait(ctx, s.stop, st.Hold); err != nil {
			return
		}
	}
	if err := sleep(ctx, s.stop, st.Latency); err != nil {
		return
	}
	if st.Status != 0 {
		s.fault(w, st)
		return
	}
	model := body.Model
	if model == "" {
		model = s.model
	}
	includeUsage := body.StreamOptions != nil && body.StreamOptions.IncludeUsage
	t := newTurn(st, model, pool, idx, time.Now().Unix(), prompt, includeUsage)
	if s.cache != nil && st.Usage == nil {
		t.usage.CachedTokens = s.cache.cached(model, PromptText(body), prompt)
	}
	s.rememberExtras(t)
	if !body.Stream {
		switch {
		case st.ErrorMidstream:
			writeError(w, http.StatusInternalServerError, t.errorBody(http.StatusInternalServerError))
		case st.CutAfter > 0:
			panic(http.ErrAbortHandler) // the connection drops before any answer
		default:
			writeJSON(w, http.StatusOK, t.completion())
		}
		return
	}
	s.stream(ctx, w, t)
}

// readBody reads a request's body, at most maxBody bytes: into a buffer of
// its size when announced (net/http stops the body there), else growing.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, maxBody)
	if n := r.ContentLength; n > 0 && n <= maxBody {
		buf := make([]byte, n)
		_, err := io.ReadFull(body, buf)
		return buf, err
	}
	return io.ReadAll(body)
}

func (s *Server) fault(w http.ResponseWriter, st Step) {
	for k, v := range st.Headers {
		w.Header().Set(k, v)
	}
	if st.RetryAfter != "" {
		w.Header().Set("Retry-After", string(st.RetryAfter))
	}
	if st.Body != "" {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		w.WriteHeader(st.Status)
		_, _ = io.WriteString(w, st.Body)
		return
	}
	e := defaultError(st.Status)
	if st.Error != nil {
		e = *st.Error
	}
	writeError(w, st.Status, e)
}

// stream writes the turn as SSE, applying delays and CutAfter.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, t *turn) {
	h := w.Header()
	for k, v := range t.step.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)

	stall := t.step.StallAfter
	cut := t.step.CutAfter
	if t.step.ErrorMidstream {
		cut = 0 // the error event already ends the stream there
	}
	data := 0
	for i, ev := range t.events() {
		if i > 0 && ev.isData() {
			if err := sleep(ctx, s.stop, t.step.ChunkDelay); err != nil {
				return
			}
		}
		var b bytes.Buffer
		if ev.comment != "" {
			fmt.Fprintf(&b, ": %s\n\n", ev.comment)
		} else {
			b.WriteString("data: ")
			b.Write(ev.payload())
			b.WriteString("\n\n")
		}
		if _, err := w.Write(b.Bytes()); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if ev.isData() {
			data++
			if stall > 0 && data >= stall {
				// Silence with the connection open: only the client's
				// own timeout (or the server closing) ends it.
				select {
				case <-ctx.Done():
				case <-s.stop:
				}
				return
			}
			if cut > 0 && data >= cut {
				// Drop the connection the way a crashed proxy would: no
				// finish, no [DONE], no clean end of the chunked body.
				_ = rc.Flush()
				panic(http.ErrAbortHandler)
			}
		}
	}
}

// rememberExtras records the extra fields the turn serves on its calls.
func (s *Server) rememberExtras(t *turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, tc := range t.calls {
		if len(t.extras[i]) == 0 {
			continue
		}
		if s.extras == nil {
			s.extras = map[string]string{}
		}
		s.extras[tc.ID] = canonical(t.extras[i])
	}
}

// missingExtras checks that every replayed tool call the server served
// with extra fields carries them back unchanged, as Gemini requires of its
// thought signatures; it returns the complaint, or "".
func (s *Server) missingExtras(raw []byte) string {
	s.mu.Lock()
	want := s.extras
	s.mu.Unlock()
	if len(want) == 0 {
		return ""
	}
	var body struct {
		Messages []struct {
			ToolCalls []map[string]json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return ""
	}
	for _, m := range body.Messages {
		for _, tc := range m.ToolCalls {
			var id string
			_ = json.Unmarshal(tc["id"], &id)
			w, ok := want[id]
			if !ok {
				continue
			}
			got := map[string]any{}
			for k, v := range tc {
				switch k {
				case "id", "type", "function", "index":
					continue
				}
				var x any
				_ = json.Unmarshal(v, &x)
				got[k] = x
			}
			if canonical(got) != w {
				return fmt.Sprintf("llmtest: function call %s is missing its extra fields (thought_signature): want %s, got %s", id, w, canonical(got))
			}
		}
	}
	return ""
}

// canonical encodes v with sorted keys, so equal values compare equal.
func canonical(v map[string]any) string {
	b, _ := json.Marshal(jsonable(v))
	return string(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b := encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// contextError is OpenAI's error for a prompt over the model's window,
// sent with status 400: an invalid_request_error of code
// context_length_exceeded about the messages parameter (the wording is
// the server's own).
func contextError(window, prompt int64) ErrorBody {
	return ErrorBody{
		Message: fmt.Sprintf("llmtest: the messages come to about %d tokens, over this model's context window of %d tokens; reduce the length of the messages", prompt, window),
		Type:    "invalid_request_error", Param: "messages", Code: "context_length_exceeded",
	}
}

func writeError(w http.ResponseWriter, status int, e ErrorBody) {
	writeJSON(w, status, obj{"error": e})
}
