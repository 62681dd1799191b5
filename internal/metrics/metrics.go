package metrics

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// registry holds every instrument by name, written in name order.
var registry struct {
	mu  sync.Mutex
	all map[string]instrument
}

type instrument interface {
	write(w io.Writer, name string)
}

func register(name string, i instrument) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.all == nil {
		registry.all = map[string]instrument{}
	}
	if _, dup := registry.all[name]; dup {
		panic("metrics: " + name + " registered twice")
	}
	registry.all[name] = i
}

// WriteAll writes every registered instrument.
func WriteAll(w io.Writer) {
	registry.mu.Lock()
	names := make([]string, 0, len(registry.all))
	for n := range registry.all {
		names = append(names, n)
	}
	all := registry.all
	registry.mu.Unlock()
	slices.Sort(names)
	for _, n := range names {
		all[n].write(w, n)
	}
}

// Counter is a monotonically increasing count, optionally split by one
// label's values.
type Counter struct {
	help, label string
	mu          sync.Mutex
	byValue     map[string]*atomic.Uint64
	plain       atomic.Uint64
}

// NewCounter registers a counter; label, if set, is the name of the label
// that Add's value argument fills.
func NewCounter(name, help, label string) *Counter {
	c := &Counter{help: help, label: label, byValue: map[string]*atomic.Uint64{}}
	register(name, c)
	return c
}

// Inc adds one.
func (c *Counter) Inc() { c.plain.Add(1) }

// Add adds n to the series of the label value v (a counter without a
// label ignores v).
func (c *Counter) Add(v string, n uint64) {
	if c.label == "" {
		c.plain.Add(n)
		return
	}
	c.mu.Lock()
	a, ok := c.byValue[v]
	if !ok {
		a = &atomic.Uint64{}
		c.byValue[v] = a
	}
	c.mu.Unlock()
	a.Add(n)
}

// Value is the count of the label value v ("" for a counter without a
// label).
func (c *Counter) Value(v string) uint64 {
	if c.label == "" {
		return c.plain.Load()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.byValue[v]; ok {
		return a.Load()
	}
	return 0
}

func (c *Counter) write(w io.Writer, name string) {
	Header(w, name, "counter", c.help)
	if c.label == "" {
		Sample(w, name, float64(c.plain.Load()))
		return
	}
	c.mu.Lock()
	vals := make([]string, 0, len(c.byValue))
	for v := range c.byValue {
		vals = append(vals, v)
	}
	c.mu.Unlock()
	slices.Sort(vals)
	for _, v := range vals {
		Sample(w, name, float64(c.Value(v)), c.label, v)
	}
}

// Histogram counts observations in cumulative buckets, with their sum.
type Histogram struct {
	help   string
	bounds []float64
	counts []atomic.Uint64 // one per bound, then +Inf
	sum    atomic.Uint64   // float64 bits
}

// NewHistogram registers a histogram with the given upper bounds
// (ascending).
func NewHistogram(name, help string, bounds ...float64) *Histogram {
	h := &Histogram{help: help, bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
	register(name, h)
	return h
}

// Observe records v.
func (h *Histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v)
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 {
	var n uint64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

func (h *Histogram) write(w io.Writer, name string) {
	Header(w, name, "histogram", h.help)
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		Sample(w, name+"_bucket", float64(cum), "le", formatFloat(b))
	}
	cum += h.counts[len(h.bounds)].Load()
	Sample(w, name+"_bucket", float64(cum), "le", "+Inf")
	Sample(w, name+"_sum", math.Float64frombits(h.sum.Load()))
	Sample(w, name+"_count", float64(cum))
}

// Header writes a metric family's HELP and TYPE lines.
func Header(w io.Writer, name, typ, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(help), name, typ)
}

// Sample writes one sample line; labels are name, value pairs.
func Sample(w io.Writer, name string, v float64, labels ...string) {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels[i])
			b.WriteString(`="`)
			b.WriteString(escapeLabel(labels[i+1]))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
	_, _ = io.WriteString(w, b.String())
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// LatencyBuckets are upper bounds in seconds from 1 ms to 2 minutes, for
// disk writes and model requests alike.
var LatencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// Gauge is a value that goes up and down (members of a cluster, sessions
// hosted).
type Gauge struct {
	help string
	bits atomic.Uint64
}

// NewGauge registers a gauge.
func NewGauge(name, help string) *Gauge {
	g := &Gauge{help: help}
	register(name, g)
	return g
}

// Set sets the value.
func (g *Gauge) Set(v float64) { g.bits.Store(math.Float64bits(v)) }

// Add adds d (negative to subtract).
func (g *Gauge) Add(d float64) {
	for {
		old := g.bits.Load()
		if g.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

// Value is the current value.
func (g *Gauge) Value() float64 { return math.Float64frombits(g.bits.Load()) }

func (g *Gauge) write(w io.Writer, name string) {
	Header(w, name, "gauge", g.help)
	Sample(w, name, g.Value())
}
