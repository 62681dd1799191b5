package actors

import (
	"crypto/sha256"
	"encoding/json"
	"strings"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// observedCall is what the supervisor sees of one tool call of a
// specialist: enough to tell a repeat from progress, without the output
// itself (which may be large) crossing the mailbox.
type observedCall struct {
	name string
	// input is the call's arguments, canonical (keys sorted) so that the
	// same call written twice compares equal.
	input string
	// result fingerprints the output and its error flag.
	result [sha256.Size]byte
	// read is the file a successful read-class call read ("" for none);
	// wrote says it changed files; test says it ran tests.
	read  string
	wrote bool
	test  bool
}

// observe fingerprints a batch of tool outcomes for the supervisor. set is
// the specialist's tool set (for each tool's class).
func observe(set tools.Set, outcomes []callOutcome) []observedCall {
	out := make([]observedCall, 0, len(outcomes))
	for _, o := range outcomes {
		ob := observedCall{name: o.call.Name, input: canonicalArgs(o.call.Arguments)}
		h := sha256.New()
		h.Write([]byte(o.result.Output))
		if o.result.IsError || o.err != nil {
			h.Write([]byte{0})
		}
		copy(ob.result[:], h.Sum(nil))
		class := tool.Class("")
		if t, ok := set.Get(o.call.Name); ok {
			class = t.Info().Class
		}
		ok := !o.result.IsError && o.err == nil
		switch class {
		case tool.ClassRead, tool.ClassWeb:
			// A page fetched or a search made is a source read, as a
			// file is: a researcher's progress.
			if ok {
				ob.read = readPath(o.call.Arguments)
			}
		case tool.ClassExecute:
			ob.test = testRun(o.call.Arguments)
		}
		ob.wrote = ok && len(o.result.Files) > 0 && class != tool.ClassRead
		out = append(out, ob)
	}
	return out
}

// canonicalArgs re-encodes JSON arguments with sorted keys; arguments that
// are not JSON compare as written.
func canonicalArgs(args string) string {
	var v any
	if json.Unmarshal([]byte(args), &v) != nil {
		return strings.TrimSpace(args)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return string(b)
}

// readPath is the source a read call names: ReadFile's file_path, the
// path of a read tool that takes one (MCP tools and plugins), WebFetch's
// url or WebSearch's query.
func readPath(args string) string {
	var in struct {
		FilePath string `json:"file_path"`
		Path     string `json:"path"`
		URL      string `json:"url"`
		Query    string `json:"query"`
	}
	if json.Unmarshal([]byte(args), &in) != nil {
		return ""
	}
	for _, p := range []string{in.FilePath, in.Path, in.URL} {
		if p != "" {
			return p
		}
	}
	if in.Query != "" {
		return "query:" + in.Query
	}
	return ""
}

// testRun reports whether a command call runs tests: its command names a
// test runner or a test target. A heuristic, erring towards progress: a
// command that looks like a test and gives a new output never trips the
// window.
func testRun(args string) bool {
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal([]byte(args), &in) != nil {
		return false
	}
	cmd := strings.ToLower(in.Command)
	for _, w := range []string{"test", "pytest", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "go vet"} {
		if strings.Contains(cmd, w) {
			return true
		}
	}
	return false
}

// runawayWatch is the supervisor's runaway detector for one specialist
// run. It trips on `identical` identical calls in a row with identical
// results, or on `window` calls in a row none of which read a file not
// read before in the run, changed a file, or gave a test result not seen
// before. Only the Orchestrator touches it.
type runawayWatch struct {
	identical, window int

	last    string // key of the previous call (name, input, result)
	repeats int
	// quiet counts the calls since the last progress.
	quiet int
	read  map[string]bool
	tests map[[sha256.Size]byte]bool
}

func newRunawayWatch(identical, window int) *runawayWatch {
	return &runawayWatch{identical: identical, window: window, read: map[string]bool{}, tests: map[[sha256.Size]byte]bool{}}
}

// see takes a batch of calls in order and returns the verdict of the
// first call that trips a limit, or nil.
func (w *runawayWatch) see(calls []observedCall) *messages.NoProgress {
	var trip *messages.NoProgress
	for _, c := range calls {
		key := c.name + "\x00" + c.input + "\x00" + string(c.result[:])
		if key == w.last {
			w.repeats++
		} else {
			w.last, w.repeats = key, 1
		}
		progress := c.wrote
		if c.read != "" && !w.read[c.read] {
			w.read[c.read] = true
			progress = true
		}
		if c.test && !w.tests[c.result] {
			w.tests[c.result] = true
			progress = true
		}
		if progress {
			w.quiet = 0
		} else {
			w.quiet++
		}
		if trip != nil {
			continue
		}
		switch {
		case w.identical > 0 && w.repeats >= w.identical:
			trip = &messages.NoProgress{Kind: messages.NoProgressRepeat, Calls: w.repeats, Tool: c.name, Input: shorten(c.input, 200)}
		case w.window > 0 && w.quiet >= w.window:
			trip = &messages.NoProgress{Kind: messages.NoProgressStall, Calls: w.quiet}
		}
	}
	return trip
}

// reset starts the counts again: the user let a paused run go on.
func (w *runawayWatch) reset() {
	w.last, w.repeats, w.quiet = "", 0, 0
}
