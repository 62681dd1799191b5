// Command benchserve runs the serve load (package serveload) large, for
// `make bench-serve`: for each session count it measures the build in
// -bin and, with -base, an older build beside it in alternating rounds
// (the shared machine's speed drifts; each figure is the median over the
// rounds), and prints throughput, latency against one session, serve CPU
// per turn, memory, file descriptors and model connections.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/odin-code/odin/test/serveload"
)

func main() {
	bin := flag.String("bin", "bin", "directory holding the odin to measure")
	base := flag.String("base", os.Getenv("BASE_BIN"), "directory holding an older odin to measure beside it (BASE_BIN)")
	sessions := flag.String("sessions", "300,1000", "session counts, comma-separated")
	turns := flag.Int("turns", 3, "turns per session")
	single := flag.Int("single", 20, "turns of the lone session measured first (the latency baseline)")
	rounds := flag.Int("rounds", envInt("ROUNDS", 1), "rounds per build (ROUNDS)")
	latency := flag.Duration("model-latency", time.Second, "the scripted model's time to first byte of every answer")
	settle := flag.Duration("settle", 40*time.Second, "idle time after the burst before memory, fds and model connections are read again")
	verbose := flag.Bool("v", false, "log progress")
	keep := flag.String("keep", "", "keep each run's project and state directory (the serve log, the store) under this directory")
	profile := flag.String("cpuprofile", "", "directory to write each run's serve CPU profile to (BUILD-SESSIONS-ROUND.pprof)")
	flag.Parse()
	builds := []string{*bin}
	names := []string{"now"}
	if *base != "" {
		builds = append([]string{*base}, builds...)
		names = append([]string{"base"}, names...)
	}
	logf := func(string, ...any) {}
	if *verbose {
		logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "benchserve: "+f+"\n", a...) }
	}
	fmt.Printf("%-8s %-5s %8s %8s %7s %8s %7s %10s %9s %9s %6s %6s %6s\n",
		"sessions", "build", "turns/s", "p50 ms", "p50/1", "p99 ms", "p99/1", "cpu ms/t", "peak MB", "after MB", "fds", "after", "conns")
	fails := 0
	for _, s := range strings.Split(*sessions, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchserve: -sessions %q: %v\n", s, err)
			os.Exit(2)
		}
		rows := make([][]*serveload.Result, len(builds))
		for r := range *rounds {
			for b, dir := range builds {
				abs, _ := filepath.Abs(dir)
				logf("%d sessions, %s (%s), round %d", n, names[b], abs, r+1)
				var env []string
				if *profile != "" {
					p, _ := filepath.Abs(filepath.Join(*profile, fmt.Sprintf("%s-%d-%d.pprof", names[b], n, r+1)))
					env = append(env, "ODIN_SERVE_CPUPROFILE="+p)
				}
				dir := ""
				if *keep != "" {
					dir = filepath.Join(*keep, fmt.Sprintf("%s-%d-%d", names[b], n, r+1))
					if err := os.MkdirAll(dir, 0o755); err != nil {
						fmt.Fprintln(os.Stderr, "benchserve:", err)
						os.Exit(1)
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
				res, err := serveload.Run(ctx, serveload.Config{Bin: filepath.Join(abs, "odin"), Sessions: n, Turns: *turns,
					Single: *single, Settle: *settle, ModelLatency: *latency, Dir: dir, Env: env, Logf: logf})
				cancel()
				if err != nil {
					fails++
					msg := err.Error()
					if lines := strings.SplitN(msg, "\n", 5); len(lines) == 5 {
						msg = strings.Join(lines[:4], "\n") + "\n..."
					}
					fmt.Fprintf(os.Stderr, "benchserve: %d sessions, %s: %s\n", n, names[b], msg)
				}
				if res != nil {
					rows[b] = append(rows[b], res)
				}
			}
		}
		cpu := make([]float64, len(builds))
		for b := range builds {
			if len(rows[b]) == 0 {
				continue
			}
			m := func(f func(*serveload.Result) float64) float64 {
				var xs []float64
				for _, r := range rows[b] {
					xs = append(xs, f(r))
				}
				slices.Sort(xs)
				return xs[len(xs)/2]
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			p50 := m(func(r *serveload.Result) float64 { return ms(serveload.P(r.Lat, .5)) })
			p99 := m(func(r *serveload.Result) float64 { return ms(serveload.P(r.Lat, .99)) })
			one := m(func(r *serveload.Result) float64 { return ms(serveload.P(r.SingleLat, .5)) })
			cpu[b] = m(func(r *serveload.Result) float64 { return ms(r.CPUPerTurn) })
			fmt.Printf("%-8d %-5s %8.1f %8.1f %6.1fx %8.1f %6.1fx %10.2f %9.0f %9.0f %6.0f %6.0f %6.0f\n", n, names[b],
				m(func(r *serveload.Result) float64 { return r.TurnsPerSec }),
				p50, p50/one, p99, p99/one, cpu[b],
				m(func(r *serveload.Result) float64 { return float64(r.PeakRSS) / (1 << 20) }),
				m(func(r *serveload.Result) float64 { return float64(r.RSSAfter) / (1 << 20) }),
				m(func(r *serveload.Result) float64 { return float64(r.PeakFDs) }),
				m(func(r *serveload.Result) float64 { return float64(r.FDsAfter) }),
				m(func(r *serveload.Result) float64 { return float64(r.ModelConns) }))
		}
		if len(builds) == 2 && cpu[0] > 0 && cpu[1] > 0 {
			fmt.Printf("%-8d CPU per turn now/base: %.2fx\n", n, cpu[1]/cpu[0])
		}
	}
	fmt.Printf("model latency %v; p50/1, p99/1: against one session alone (%d turns) on the same server; cpu ms/t: serve's user+sys CPU per turn;\n", *latency, *single)
	fmt.Printf("after: %v after the burst; conns: serve's open connections to the model server then.\n", *settle)
	if fails > 0 {
		os.Exit(1)
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
