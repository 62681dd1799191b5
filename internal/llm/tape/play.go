package tape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Player is an http.RoundTripper that answers each model request with the
// next recorded response of the same agent, in order; no request leaves
// the process. It notes where a request differs from the recorded one.
type Player struct {
	mu      sync.Mutex
	queues  map[string][]Exchange
	asked   map[string]int // requests per agent so far
	served  int
	total   int
	diverge []Divergence
}

// Divergence is a request that differs from the recording.
type Divergence struct {
	Agent string
	Index int    // the agent's request number, from 1
	Where string // the first differing JSON path, e.g. messages[2].content
	Was   string // recorded value there (shortened)
	Now   string // replayed value there (shortened)
}

func (d Divergence) String() string {
	if d.Where == "" {
		return fmt.Sprintf("%s request %d: %s", d.Agent, d.Index, d.Now)
	}
	return fmt.Sprintf("%s request %d differs at %s: recorded %s, now %s", d.Agent, d.Index, d.Where, d.Was, d.Now)
}

// NewPlayer serves t's exchanges.
func NewPlayer(t *Tape) *Player {
	p := &Player{queues: map[string][]Exchange{}, asked: map[string]int{}, total: len(t.Exchanges)}
	for _, ex := range t.Exchanges {
		p.queues[ex.Agent] = append(p.queues[ex.Agent], ex)
	}
	return p
}

// RoundTrip serves the next recorded response of the request's agent; a
// request beyond the recording is a bad request (400, which is not
// retried), so the run stops rather than invent an answer.
func (p *Player) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	agent := req.Header.Get("X-Odin-Agent")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked[agent]++
	idx := p.asked[agent]
	q := p.queues[agent]
	if len(q) == 0 {
		p.diverge = append(p.diverge, Divergence{Agent: agent, Index: idx, Now: "a request the recording does not have"})
		return respond(req, http.StatusBadRequest, "application/json",
			`{"error":{"message":"odin replay: the recording has no response left for agent `+strings.Trim(strconv.Quote(agent), `"`)+`","type":"replay_exhausted"}}`), nil
	}
	ex := q[0]
	p.queues[agent] = q[1:]
	p.served++
	if where, was, now, same := firstDiff(ex.Request, body); !same {
		p.diverge = append(p.diverge, Divergence{Agent: agent, Index: idx, Where: where, Was: was, Now: now})
	}
	return respond(req, ex.Status, ex.ContentType, ex.Body), nil
}

func respond(req *http.Request, status int, contentType, body string) *http.Response {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return &http.Response{StatusCode: status, Status: strconv.Itoa(status) + " " + http.StatusText(status), Header: h,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
}

// Report says what the replay served and where it diverged.
type Report struct {
	Served, Recorded int
	Unused           int // recorded responses no request asked for
	Divergences      []Divergence
}

// Report is the replay's account so far.
func (p *Player) Report() Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := Report{Served: p.served, Recorded: p.total, Divergences: append([]Divergence(nil), p.diverge...)}
	for _, q := range p.queues {
		r.Unused += len(q)
	}
	return r
}

// firstDiff compares two JSON request bodies and returns the first path
// where they differ (object keys in sorted order, arrays by index), with
// both values shortened; ok is true when they are equal.
func firstDiff(recorded json.RawMessage, now []byte) (where, was, is string, ok bool) {
	var a, b any
	if err := json.Unmarshal(recorded, &a); err != nil {
		a = string(recorded)
	}
	if err := json.Unmarshal(now, &b); err != nil {
		b = string(now)
	}
	return walk("", a, b)
}

func walk(path string, a, b any) (string, string, string, bool) {
	switch av := a.(type) {
	case map[string]any:
		bv, isMap := b.(map[string]any)
		if !isMap {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if w, x, y, ok := walk(p, av[k], bv[k]); !ok {
				return w, x, y, false
			}
		}
		return "", "", "", true
	case []any:
		bv, isArr := b.([]any)
		if !isArr {
			break
		}
		for i := 0; i < max(len(av), len(bv)); i++ {
			var x, y any
			if i < len(av) {
				x = av[i]
			}
			if i < len(bv) {
				y = bv[i]
			}
			if w, s, t, ok := walk(path+"["+strconv.Itoa(i)+"]", x, y); !ok {
				return w, s, t, false
			}
		}
		return "", "", "", true
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			a, b = steady(x), steady(y)
		}
	}
	if reflect.DeepEqual(a, b) {
		return "", "", "", true
	}
	if path == "" {
		path = "(body)"
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			i := commonPrefix(x, y)
			return path + " (from character " + strconv.Itoa(i) + ")", excerpt(x, i), excerpt(y, i), false
		}
	}
	return path, short(a), short(b), false
}

// What differs between two runs of the same task by nature, not because
// of the agents' configuration, is not a divergence: the random nonce of
// every untrusted-data fence (internal/untrusted), and timings in tool
// output (go test's "ok pkg 0.005s", "took 12ms"). Compiled on first
// use: only a replay compares, and every Odin process would pay for them.
var (
	volatileNonce  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`nonce=[A-Z2-7]{26}`) })
	volatileTiming = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d+(\.\d+)?(s|ms|µs|us|ns)\b`) })
)

// steady is s with its volatile parts replaced by placeholders.
func steady(s string) string {
	return volatileTiming().ReplaceAllString(volatileNonce().ReplaceAllString(s, "nonce=*"), "<time>")
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// excerpt is s around byte i, where two strings part, quoted.
func excerpt(s string, i int) string {
	from, to := max(i-30, 0), min(i+70, len(s))
	out := strconv.Quote(strings.ToValidUTF8(s[from:to], ""))
	if from > 0 {
		out = "..." + out
	}
	if to < len(s) {
		out += "..."
	}
	return out
}

func short(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	b = bytes.TrimSpace(b)
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}
