package metrics

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExposition(t *testing.T) {
	c := NewCounter("test_things_total", "Things done.\nTwo lines.", "kind")
	c.Add(`a"b`, 2)
	c.Add("plain", 1)
	h := NewHistogram("test_wait_seconds", "Waits.", .1, 1)
	h.Observe(.05)
	h.Observe(.5)
	h.Observe(7)
	var b strings.Builder
	c.write(&b, "test_things_total")
	h.write(&b, "test_wait_seconds")
	want := `# HELP test_things_total Things done.\nTwo lines.
# TYPE test_things_total counter
test_things_total{kind="a\"b"} 2
test_things_total{kind="plain"} 1
# HELP test_wait_seconds Waits.
# TYPE test_wait_seconds histogram
test_wait_seconds_bucket{le="0.1"} 1
test_wait_seconds_bucket{le="1"} 2
test_wait_seconds_bucket{le="+Inf"} 3
test_wait_seconds_sum 7.55
test_wait_seconds_count 3
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}
	if h.Count() != 3 || c.Value("plain") != 1 {
		t.Errorf("count %d, value %d", h.Count(), c.Value("plain"))
	}
}

func TestGauge(t *testing.T) {
	g := NewGauge("test_members", "Members.")
	g.Set(3)
	g.Add(-1)
	g.Add(0.5)
	var b strings.Builder
	g.write(&b, "test_members")
	want := "# HELP test_members Members.\n# TYPE test_members gauge\ntest_members 2.5\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}
}
