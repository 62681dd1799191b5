// Package helperproctest is a tiny helper process for helperproc's tests:
// its protocol (Msg) and its side of it (Serve), which the command
// odin-testhelper runs.
package helperproctest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/odin-code/odin/internal/helperproc"
)

// Msg is one line of the test protocol.
type Msg struct {
	helperproc.Line
	// Action is what a call does: see Serve.
	Action string `json:"action,omitempty"`
	Text   string `json:"text,omitempty"`
	// Path is the file a "write" call writes.
	Path string `json:"path,omitempty"`
	Err  string `json:"error,omitempty"`
}

var ops = helperproc.Ops{helperproc.KindCall: "call", helperproc.KindCancel: "cancel",
	helperproc.KindResult: "result", helperproc.KindRequest: "request", helperproc.KindResponse: "response"}

// Route implements helperproc.Message.
func (m Msg) Route() helperproc.Route { return ops.Route(m.Line) }

// Routed implements helperproc.Message.
func (m Msg) Routed(r helperproc.Route) Msg { m.Line = ops.Line(r); return m }

// token tells this process from the next one (process IDs do not: in a
// PID namespace each helper may get the same).
var token = strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.Itoa(os.Getpid())

// Serve is the helper: it answers calls read from r on w until r ends.
// Actions: "echo" answers Text; "token" a string naming this process; "ask" asks Odin
// for Text within the call and "ask-free" outside any call, answering
// Odin's answer; "hang" waits for the call's end and answers "canceled";
// "write" writes Text to Path (the canary); "crash" writes Text to stderr
// and exits 3.
func Serve(r io.Reader, w io.Writer, oneAtATime bool) error {
	s := helperproc.NewServer[Msg](w, oneAtATime)
	return s.Serve(r, func(ctx context.Context, m Msg) Msg {
		switch m.Action {
		case "echo":
			return Msg{Text: m.Text}
		case "token":
			return Msg{Text: token}
		case "ask", "ask-free":
			call := m.ID
			if m.Action == "ask-free" {
				call = 0
			}
			r, err := s.Ask(ctx, call, Msg{Text: m.Text})
			if err != nil {
				return Msg{Err: err.Error()}
			}
			return Msg{Text: r.Text, Err: r.Err}
		case "hang":
			<-ctx.Done()
			return Msg{Text: "canceled"}
		case "write":
			if err := os.WriteFile(m.Path, []byte(m.Text), 0o644); err != nil {
				return Msg{Err: err.Error()}
			}
			return Msg{Text: "written"}
		case "crash":
			fmt.Fprintln(os.Stderr, m.Text)
			os.Exit(3)
		}
		return Msg{Err: fmt.Sprintf("no action %q", m.Action)}
	})
}
