package cluster

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// knownRaces lists, one per line, the stack signatures (see raceReport)
// of data races the race detector reports in third-party code Odin's
// cluster runs (protoactor-go, grpc), with a comment line (#) saying where
// each is and why it is tolerated. A report whose signature is not in it
// fails the test; a report in Odin's own code always does.
const knownRaces = "testdata/races-known.txt"

// raceReport is one report of the race detector in a node's log.
type raceReport struct {
	text string
	// accesses are the top frames (function names) of the two
	// conflicting accesses, the runtime's and sync's own left out.
	accesses []string
	// odin is set when either access is in an Odin package.
	odin bool
}

// signature names a report by its two accesses' top frames, in order.
func (r raceReport) signature() string {
	a := append([]string(nil), r.accesses...)
	sort.Strings(a)
	return strings.Join(a, " <> ")
}

var (
	accessLine = regexp.MustCompile(`^(Previous )?(read|write|Read|Write)( at)? .*by (goroutine|main goroutine)`)
	frameLine  = regexp.MustCompile(`^  (\S+)\(`)
)

// parseRaces splits a race log into its reports.
func parseRaces(text string) []raceReport {
	var out []raceReport
	for _, block := range strings.Split(text, "==================") {
		if !strings.Contains(block, "WARNING: DATA RACE") {
			continue
		}
		r := raceReport{text: strings.TrimSpace(block)}
		sc := bufio.NewScanner(strings.NewReader(block))
		inAccess, took := false, false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case accessLine.MatchString(line):
				inAccess, took = true, false
			case line == "" || strings.HasPrefix(line, "Goroutine "):
				inAccess = false
			case inAccess && !took:
				m := frameLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				fn := m[1]
				if strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "sync.") || strings.HasPrefix(fn, "sync/atomic.") || strings.HasPrefix(fn, "internal/") {
					continue
				}
				r.accesses = append(r.accesses, fn)
				r.odin = r.odin || strings.HasPrefix(fn, "github.com/odin-code/odin/")
				took = true
			}
		}
		out = append(out, r)
	}
	return out
}

// checkRaces reads the race logs the fleet's nodes wrote (GORACE
// log_path, one file per process) and fails t for a report in Odin's code
// or one whose signature knownRaces does not list; known ones are logged.
func (f *fleet) checkRaces() {
	logs, _ := filepath.Glob(filepath.Join(f.dir, "race", "*"))
	if len(logs) == 0 {
		return
	}
	known := map[string]bool{}
	if b, err := os.ReadFile(knownRaces); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				known[l] = true
			}
		}
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			f.t.Errorf("race log %s: %v", l, err)
			continue
		}
		for _, r := range parseRaces(string(b)) {
			switch sig := r.signature(); {
			case r.odin:
				f.t.Errorf("a data race in Odin's code (%s):\n%s", filepath.Base(l), r.text)
			case known[sig]:
				f.t.Logf("a known data race of a dependency (%s): %s", filepath.Base(l), sig)
			default:
				f.t.Errorf("a new data race in a dependency (%s); add its signature to %s if it is theirs and harmless:\n%s\n%s", filepath.Base(l), knownRaces, sig, r.text)
			}
		}
	}
}

// TestParseRaces: a report's signature is its two accesses' top frames
// outside the runtime, and a report with an Odin frame there is Odin's.
func TestParseRaces(t *testing.T) {
	log := `==================
WARNING: DATA RACE
Read at 0x00c0001a2b40 by goroutine 42:
  runtime.mapaccess1_faststr()
      /usr/lib/go/src/runtime/map_faststr.go:13 +0x0
  github.com/asynkron/protoactor-go/cluster.(*MemberList).Members()
      /mod/cluster/member_list.go:80 +0x44

Previous write at 0x00c0001a2b40 by goroutine 17:
  github.com/asynkron/protoactor-go/cluster.(*MemberList).UpdateClusterTopology()
      /mod/cluster/member_list.go:120 +0x88
  github.com/odin-code/odin/internal/cluster.(*Provider).tick()
      /src/internal/cluster/provider.go:140 +0x10

Goroutine 42 (running) created at:
  github.com/odin-code/odin/internal/cluster.Start()
      /src/internal/cluster/node.go:1 +0x1
==================
==================
WARNING: DATA RACE
Write at 0x00c000 by goroutine 3:
  github.com/odin-code/odin/internal/cluster.(*sessionGrain).onIdle()
      /src/internal/cluster/grain.go:1 +0x1

Previous read at 0x00c000 by goroutine 4:
  github.com/asynkron/protoactor-go/actor.(*ActorContext).Send()
      /mod/actor/actor_context.go:1 +0x1
==================
`
	rs := parseRaces(log)
	if len(rs) != 2 {
		t.Fatalf("%d reports, want 2", len(rs))
	}
	if got, want := rs[0].signature(), "github.com/asynkron/protoactor-go/cluster.(*MemberList).Members <> github.com/asynkron/protoactor-go/cluster.(*MemberList).UpdateClusterTopology"; got != want || rs[0].odin {
		t.Errorf("first: %q odin=%v, want %q and not Odin's", got, rs[0].odin, want)
	}
	if !rs[1].odin {
		t.Errorf("second: %q, want Odin's", rs[1].signature())
	}
}
