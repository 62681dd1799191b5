package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// varsFlag collects repeated --var name=value flags.
type varsFlag []string

func (v *varsFlag) String() string     { return strings.Join(*v, ",") }
func (v *varsFlag) Set(s string) error { *v = append(*v, s); return nil }

// run serves until ctx ends and returns the exit code: 0 after a clean
// stop, 1 when the server cannot start, 2 for bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scripted-model", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "script file (YAML or JSON) to serve (required)")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on; port 0 picks a free port")
	verbose := fs.Bool("v", false, "log each request to stderr")
	cache := fs.Bool("prompt-cache", true, "report cached prompt tokens as a provider's automatic prefix cache would")
	window := fs.Int("context-window", 0, "refuse as OpenAI does (400, context_length_exceeded) a request whose estimated prompt is over this many tokens; 0: no limit")
	var vars varsFlag
	fs.Var(&vars, "var", "name=value substituted for {{name}} in the script (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scripted-model --script file.yaml [--addr 127.0.0.1:0] [--var name=value ...] [-v]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *script == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "scripted-model: --script is required and no arguments are taken")
		fs.Usage()
		return 2
	}
	vm, err := llmtest.ParseVars(vars)
	if err != nil {
		fmt.Fprintf(stderr, "scripted-model: %v\n", err)
		return 2
	}
	s, err := llmtest.LoadScript(*script)
	if err != nil {
		fmt.Fprintf(stderr, "scripted-model: %v\n", err)
		return 1
	}
	// The server logs from its handler goroutines while this one reports
	// progress, and an io.Writer need not be safe for concurrent use.
	stderr = &lockedWriter{w: stderr}
	opts := []llmtest.ServerOption{llmtest.WithVars(vm)}
	if *cache {
		opts = append(opts, llmtest.WithPromptCache())
	}
	if *verbose {
		opts = append(opts, llmtest.WithLog(stderr))
	}
	if *window > 0 {
		opts = append(opts, llmtest.WithContextWindow(*window))
	}
	srv, err := llmtest.Serve(*addr, s, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "scripted-model: %v\n", err)
		return 1
	}
	if _, err := fmt.Fprintln(stdout, srv.URL()); err != nil {
		_ = srv.Close()
		fmt.Fprintf(stderr, "scripted-model: writing the URL: %v\n", err)
		return 1
	}
	if *verbose {
		fmt.Fprintf(stderr, "scripted-model: serving %s at %s (Ctrl-C to stop)\n", *script, srv.URL())
	}
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "scripted-model: closing: %v\n", err)
		return 1
	}
	if unused := srv.Unused(); *verbose && len(unused) > 0 {
		fmt.Fprintf(stderr, "scripted-model: %d steps were never used: %s\n", len(unused), strings.Join(unused, "; "))
	}
	return 0
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
