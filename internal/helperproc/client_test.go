package helperproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/helperproc"
	"github.com/odin-code/odin/internal/helperproc/helperproctest"
	"github.com/odin-code/odin/internal/sandbox"
)

type msg = helperproctest.Msg

var errExited = errors.New("test: odin-testhelper exited")

func newClient(t *testing.T, cfg helperproc.Config[msg]) *helperproc.Client[msg] {
	t.Helper()
	cfg.Name, cfg.Prefix, cfg.Exited = "odin-testhelper", "test", errExited
	c := helperproc.New(cfg)
	t.Cleanup(c.Close)
	return c
}

func helper(t testing.TB) string {
	t.Helper()
	p := os.Getenv("ODIN_TESTHELPER")
	if p == "" {
		t.Fatal("TestMain did not build odin-testhelper")
	}
	return p
}

// do makes one call and fails the test on an error.
func do(t *testing.T, c *helperproc.Client[msg], m msg, serve func(context.Context, msg) msg) msg {
	t.Helper()
	r, err := c.Call(t.Context(), m, serve)
	if err != nil {
		t.Fatalf("%s: %v", m.Action, err)
	}
	if r.Err != "" {
		t.Fatalf("%s: the helper said %q", m.Action, r.Err)
	}
	return r
}

func token(t *testing.T, c *helperproc.Client[msg]) string {
	t.Helper()
	return do(t, c, msg{Action: "token"}, nil).Text
}

// hangCancelled makes a call that hangs and cancels it once it has had
// time to reach the helper (either way it must end with the cancel).
func hangCancelled(t *testing.T, c *helperproc.Client[msg]) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	if _, err := c.Call(ctx, msg{Action: "hang"}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("hang: %v", err)
	}
}

// TestClient drives a real helper (odin-testhelper, in the sandbox) through
// each path of the client: routing by ID, requests inside and outside
// calls, crashes and restarts, both kinds of cancel, the start limit,
// Close and a missing program.
func TestClient(t *testing.T) {
	tests := []struct {
		name string
		cfg  helperproc.Config[msg]
		run  func(t *testing.T, c *helperproc.Client[msg])
	}{
		{"a call's result comes back", helperproc.Config[msg]{}, func(t *testing.T, c *helperproc.Client[msg]) {
			if r := do(t, c, msg{Action: "echo", Text: "hello"}, nil); r.Text != "hello" {
				t.Errorf("echo = %q", r.Text)
			}
		}},
		{"concurrent calls share one helper and each gets its own result", helperproc.Config[msg]{}, func(t *testing.T, c *helperproc.Client[msg]) {
			want := token(t, c)
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					text := fmt.Sprint("call ", i)
					r, err := c.Call(t.Context(), msg{Action: "echo", Text: text}, nil)
					if err != nil || r.Text != text {
						t.Errorf("call %d = %q, %v", i, r.Text, err)
					}
				}()
			}
			wg.Wait()
			if got := token(t, c); got != want {
				t.Errorf("the calls started another helper (%s, then %s)", want, got)
			}
		}},
		{"a call's requests are answered by that call's serve", helperproc.Config[msg]{}, func(t *testing.T, c *helperproc.Client[msg]) {
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					serve := func(_ context.Context, m msg) msg { return msg{Text: fmt.Sprint(m.Text, " answered by ", i)} }
					r, err := c.Call(t.Context(), msg{Action: "ask", Text: fmt.Sprint("q", i)}, serve)
					if want := fmt.Sprint("q", i, " answered by ", i); err != nil || r.Text != want {
						t.Errorf("ask %d = %q, %v; want %q", i, r.Text, err, want)
					}
				}()
			}
			wg.Wait()
		}},
		{"requests outside calls go to Config.Serve, under the helper's context", helperproc.Config[msg]{
			Serve: func(ctx context.Context, m msg) msg {
				if ctx.Err() != nil {
					return msg{Err: "served under an ended context"}
				}
				return msg{Text: "free: " + m.Text}
			},
		}, func(t *testing.T, c *helperproc.Client[msg]) {
			serveCall := func(context.Context, msg) msg { return msg{Err: "the call's serve answered a request outside it"} }
			if r := do(t, c, msg{Action: "ask-free", Text: "q"}, serveCall); r.Text != "free: q" {
				t.Errorf("ask-free = %q", r.Text)
			}
		}},
		{"a crash is Exited with its last stderr line, and the next call starts a new helper", helperproc.Config[msg]{}, func(t *testing.T, c *helperproc.Client[msg]) {
			before := token(t, c)
			_, err := c.Call(t.Context(), msg{Action: "crash", Text: "boom: out of luck"}, nil)
			if !errors.Is(err, errExited) || !strings.Contains(err.Error(), "out of luck") {
				t.Fatalf("crash: %v", err)
			}
			if after := token(t, c); after == before {
				t.Errorf("after the crash the same helper (%s) answered", after)
			}
		}},
		{"a cancelled call sends a cancel and the helper serves on", helperproc.Config[msg]{}, func(t *testing.T, c *helperproc.Client[msg]) {
			before := token(t, c)
			hangCancelled(t, c)
			if after := token(t, c); after != before {
				t.Errorf("the cancel replaced the helper (%s, then %s)", before, after)
			}
		}},
		{"with StopOnCancel a cancelled call stops the helper", helperproc.Config[msg]{StopOnCancel: true}, func(t *testing.T, c *helperproc.Client[msg]) {
			before := token(t, c)
			hangCancelled(t, c)
			if after := token(t, c); after == before {
				t.Errorf("the same helper (%s) answered after the cancel", after)
			}
		}},
		{"MaxStarts gives up on a helper that keeps dying", helperproc.Config[msg]{MaxStarts: 2}, func(t *testing.T, c *helperproc.Client[msg]) {
			for range 2 {
				if _, err := c.Call(t.Context(), msg{Action: "crash", Text: "boom"}, nil); !errors.Is(err, errExited) {
					t.Fatalf("crash: %v", err)
				}
			}
			_, err := c.Call(t.Context(), msg{Action: "echo"}, nil)
			if !errors.Is(err, helperproc.ErrTooManyStarts) || !strings.Contains(err.Error(), "boom") {
				t.Errorf("a third start: %v", err)
			}
		}},
		{"Close stops the helper and refuses later calls", helperproc.Config[msg]{}, func(t *testing.T, c *helperproc.Client[msg]) {
			token(t, c)
			c.Close()
			if _, err := c.Call(t.Context(), msg{Action: "echo"}, nil); !errors.Is(err, helperproc.ErrClosed) {
				t.Errorf("after Close: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Path = helper(t)
			tt.run(t, newClient(t, tt.cfg))
		})
	}
}

// TestClientCannotStart: no program is NotFound; a program that is not
// there is a start error naming the helper.
func TestClientCannotStart(t *testing.T) {
	notFound := errors.New("no odin-testhelper; build it")
	c := newClient(t, helperproc.Config[msg]{NotFound: notFound})
	if _, err := c.Call(t.Context(), msg{Action: "echo"}, nil); !errors.Is(err, notFound) {
		t.Errorf("no path: %v", err)
	}
	c = newClient(t, helperproc.Config[msg]{Path: filepath.Join(t.TempDir(), "missing")})
	if _, err := c.Call(t.Context(), msg{Action: "echo"}, nil); err == nil || !strings.Contains(err.Error(), "odin-testhelper") {
		t.Errorf("a missing program: %v", err)
	}
}

// TestNeverUnconfined is the attack "run the helper outside the sandbox":
// the helper is asked to write a canary file outside anything it may
// write. Without a Launch (bubblewrap, else Landlock) and under Landlock
// the write fails; where no sandbox works the helper is refused, with the
// fix named, and never started. The control (permissions.sandbox: off,
// the user's own choice) shows the canary does appear when the helper
// runs plainly.
func TestNeverUnconfined(t *testing.T) {
	noLandlock := func() sandbox.LandlockStatus { return sandbox.LandlockStatus{Reason: "simulated: no Landlock"} }
	tests := []struct {
		name    string
		launch  func(t *testing.T) helperproc.Launch
		refused bool // the helper does not start
		written bool // the control
	}{
		{"default launcher", func(*testing.T) helperproc.Launch { return nil }, false, false},
		{"landlock", func(t *testing.T) helperproc.Launch {
			if st := sandbox.Probe(); !st.Available {
				t.Skip("no Landlock here: " + st.Reason)
			}
			return helperproc.Sandboxed(sandbox.New(sandbox.Options{Mode: sandbox.ModeLandlock, Root: t.TempDir()}), sandbox.Spec{})
		}, false, false},
		{"auto with neither bubblewrap nor Landlock", func(t *testing.T) helperproc.Launch {
			l := sandbox.New(sandbox.Options{Root: t.TempDir(), Bwrap: "/nonexistent/bwrap", ProbeLandlock: noLandlock})
			return helperproc.Sandboxed(l, sandbox.Spec{})
		}, true, false},
		{"bubblewrap mode without bubblewrap", func(t *testing.T) helperproc.Launch {
			l := sandbox.New(sandbox.Options{Mode: sandbox.ModeBubblewrap, Root: t.TempDir(), Bwrap: "/nonexistent/bwrap"})
			return helperproc.Sandboxed(l, sandbox.Spec{})
		}, true, false},
		{"control: sandbox off", func(t *testing.T) helperproc.Launch {
			return helperproc.Sandboxed(sandbox.New(sandbox.Options{Mode: sandbox.ModeOff, Root: t.TempDir()}), sandbox.Spec{})
		}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			canary := filepath.Join(t.TempDir(), "canary")
			c := newClient(t, helperproc.Config[msg]{Path: helper(t), Launch: tt.launch(t)})
			r, err := c.Call(t.Context(), msg{Action: "write", Path: canary, Text: "escaped"}, nil)
			t.Logf("result %+v, error %v", r, err)
			switch {
			case tt.refused && (!errors.Is(err, sandbox.ErrNoSandbox) || !strings.Contains(err.Error(), "bubblewrap")):
				t.Errorf("not refused with the fix named: %v", err)
			case !tt.refused && err != nil:
				t.Errorf("the helper did not run: %v", err)
			case !tt.refused && !tt.written && r.Err == "":
				t.Errorf("the write succeeded: %+v", r)
			}
			_, statErr := os.Stat(canary)
			if written := statErr == nil; written != tt.written {
				t.Errorf("canary written = %v, want %v", written, tt.written)
			}
		})
	}
}
