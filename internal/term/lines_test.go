package term

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// syncBuffer is a bytes.Buffer safe for the test to read while Run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLineModeRunsInputsInOrder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "explain.md"), "---\nmode: ask\n---\nExplain $ARGUMENTS")
	f := newFake("s1", answerAt("answer to"))
	in := strings.NewReader("hello\n/mode plan\nsecond \\\ncontinued\n\n/explain gates\n/cost\n/nope\n/quit\nnever sent\n")
	var out syncBuffer
	no := false
	last, err := Run(t.Context(), Options{In: in, Out: &out, Session: f, Mode: messages.ModeEdit,
		CommandDirs: []string{dir}, Banner: []string{"banner line"}, Interactive: &no})
	if err != nil {
		t.Fatal(err)
	}
	if last != f {
		t.Errorf("Run returned another session")
	}
	sub, _, _, _ := f.snapshot()
	type in2 struct {
		Body string
		Mode messages.Mode
	}
	var got []in2
	for _, m := range sub {
		got = append(got, in2{m.Body, m.Mode})
	}
	want := []in2{{"hello", messages.ModeEdit}, {"second \ncontinued", messages.ModePlan}, {"Explain gates", messages.ModeAsk}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("submitted (-want +got):\n%s", diff)
	}
	s := out.String()
	if strings.Contains(s, "\x1b") {
		t.Errorf("line mode wrote escape sequences:\n%q", s)
	}
	for _, w := range []string{"banner line", "❯ [edit] hello", "answer to hello", "mode: plan", "❯ [plan] second ", "answer to second ", "Usage over 3 turns:", "total", "$0.0300", "unknown command /nope"} {
		if !strings.Contains(s, w) {
			t.Errorf("output lacks %q:\n%s", w, s)
		}
	}
	if strings.Index(s, "answer to hello") > strings.Index(s, "❯ [plan] second") {
		t.Errorf("the second input started before the first answer:\n%s", s)
	}
}

func TestLineModeDeniesApprovals(t *testing.T) {
	f := newFake("s1", func(f *fakeSession, m messages.UserMessage) {
		f.emit(messages.TurnStarted{Input: m},
			messages.ApprovalRequested{ID: "ap1", Origin: messages.Origin{Agent: "code", TaskID: "t1"}, Tool: "ExecuteCommand", Subject: "rm -rf build", Reason: "not allowed"})
		go func() {
			// The turn ends once the request is answered, as the policy does.
			for {
				_, _, _, a := f.snapshot()
				if a["ap1"] != "" {
					f.emit(messages.ApprovalResolved{ID: "ap1", Decision: string(a["ap1"])}, messages.TurnFinished{Result: messages.TurnResult{Input: m, Status: messages.TurnDone, Answer: "could not"}})
					return
				}
			}
		}()
	})
	var out syncBuffer
	no := false
	if _, err := Run(t.Context(), Options{In: strings.NewReader("clean\n"), Out: &out, Session: f, Interactive: &no}); err != nil {
		t.Fatal(err)
	}
	_, _, _, answers := f.snapshot()
	if answers["ap1"] != policy.Reject {
		t.Errorf("answer = %q, want deny", answers["ap1"])
	}
	for _, w := range []string{"code asks to run ExecuteCommand rm -rf build: denied", "could not"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}

func TestLineModeCommandsAndSessionSwap(t *testing.T) {
	first := newFake("first", answerAt("first says"))
	second := newFake("second", answerAt("second says"))
	cmds := []Command{
		{Name: "resume", Run: func(ctx context.Context, args string) (Result, error) {
			return Result{Session: second, Text: "resumed " + args}, nil
		}},
		{Name: "fail", Run: func(context.Context, string) (Result, error) { return Result{}, os.ErrPermission }},
		{Name: "ask", Run: func(_ context.Context, args string) (Result, error) { return Result{Prompt: "prompted " + args}, nil }},
	}
	var out syncBuffer
	no := false
	last, err := Run(t.Context(), Options{In: strings.NewReader("a\n/resume xyz\nb\n/fail\n/ask q\n"), Out: &out, Session: first, Commands: cmds, Interactive: &no})
	if err != nil {
		t.Fatal(err)
	}
	if last != second {
		t.Fatalf("Run returned %v, want the resumed session", last.ID())
	}
	if !first.closed {
		t.Errorf("the replaced session was not closed")
	}
	s := out.String()
	for _, w := range []string{"first says a", "resumed xyz", "second says b", "/fail: permission denied", "second says prompted q"} {
		if !strings.Contains(s, w) {
			t.Errorf("output lacks %q:\n%s", w, s)
		}
	}
}

func TestRunWithoutSession(t *testing.T) {
	if _, err := Run(t.Context(), Options{}); !errors.Is(err, ErrNoSession) {
		t.Errorf("err = %v, want ErrNoSession", err)
	}
}
