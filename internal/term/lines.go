package term

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// runLines is line mode, for a stdin or stdout that is not a terminal:
// each input line (a trailing backslash continues it on the next) runs in
// order, one turn at a time, and its output is printed without escape
// sequences. Nobody can answer an approval here, so requests are denied
// at once. SIGINT cancels the running turn; a second one, or one while
// idle, stops.
func runLines(ctx context.Context, o Options) (Session, error) {
	th := NewTheme(o.Out, ColorNone)
	tr := newTranscript(th, 0, o.showRoot())
	sess := o.Session
	mode := o.Mode
	w := o.Out
	println := func(lines ...string) {
		for _, l := range lines {
			// Line mode styles nothing: no control sequence at all.
			fmt.Fprintln(w, termsafe.Text(l))
		}
	}
	println(o.Banner...)
	cmds := map[string]Command{}
	for _, c := range o.Commands {
		cmds[c.Name] = c
	}
	customs, errs := o.customCommands()
	custom := map[string]CustomCommand{}
	for _, c := range customs {
		custom[c.Name] = c
	}
	for _, e := range errs {
		println("! " + e.Error())
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sigs := make(chan os.Signal, 2)
	// SIGHUP and SIGTERM are the caller's (it cancels, saves and ends
	// the REPL through ctx).
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)

	// The subscription follows the session when /resume or /clear
	// replaces it.
	var sub struct {
		cancel context.CancelFunc
		ch     <-chan messages.Envelope
	}
	subscribe := func() {
		if sub.cancel != nil {
			sub.cancel()
		}
		c, cancel := context.WithCancel(ctx)
		sub.cancel, sub.ch = cancel, sess.Subscribe(c)
	}
	subscribe()
	defer func() { sub.cancel() }()
	inputs := withInitial(ctx, o.Initial, readInputs(ctx, o.In))
	var queue []messages.UserMessage // queued inputs, for /queue

	// wait prints events until the turn of input id finishes.
	wait := func(id string) error {
		interrupted := false
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-sigs:
				if interrupted {
					return errStop
				}
				interrupted = true
				println("cancelling… (interrupt again to quit)")
				sess.Cancel("interrupted")
			case env, ok := <-sub.ch:
				if !ok {
					return fmt.Errorf("term: the session's event stream closed")
				}
				switch ev := env.Event.(type) {
				case messages.ApprovalRequested:
					println(fmt.Sprintf("  ! %s asks to run %s %s: denied (approvals need an interactive terminal; use --allow or --yolo)", orDefault(ev.Agent, "orchestrator"), ev.Tool, oneLine(ev.Subject, 120)))
					go func() { _ = sess.Answer(ev.ID, policy.Reject) }()
				case messages.InputQueued:
					queue = append(queue, ev.Input)
				case messages.InputRemoved:
					queue = dropByID(queue, ev.ID)
				case messages.TurnStarted:
					queue = dropByID(queue, ev.Input.ID)
				}
				println(tr.event(env.Event)...)
				if tf, ok := env.Event.(messages.TurnFinished); ok && tf.Result.Input.ID == id {
					return nil
				}
			}
		}
	}
	// waitQueued waits, printing their events, until the session has no
	// turn running or queued.
	waitQueued := func() error {
		for {
			q, err := sess.Queue(ctx)
			if err != nil || q == nil {
				return nil
			}
			last := ""
			if n := len(q.Queued); n > 0 {
				last = q.Queued[n-1].ID
			} else if q.Running != nil {
				last = q.Running.ID
			}
			if last == "" {
				return nil
			}
			if err := wait(last); err != nil {
				return err
			}
		}
	}
	for {
		var text string
		select {
		case <-ctx.Done():
			return sess, nil
		case <-sigs:
			return sess, nil
		case in, ok := <-inputs:
			if !ok {
				// Turns still queued (an interrupted turn the session
				// resumed at its start) finish before the end of input
				// ends the session, as typed ones do.
				if err := waitQueued(); err != nil && !errors.Is(err, errStop) {
					return sess, err
				}
				return sess, nil
			}
			text = in
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		prompt := text
		promptMode := mode
		fromCommand := false // a Go command's Result.Prompt
		var images []messages.Image
		if name, args, ok := splitCommand(text); ok {
			switch name {
			case "help", "?":
				println(helpText(o.Commands, customs, false))
				continue
			case "mode":
				if args == "" {
					println("mode: " + string(mode))
					continue
				}
				md, err := messages.ParseMode(args)
				if err != nil {
					println("! " + err.Error())
					continue
				}
				mode = md
				println("mode: " + string(md))
				continue
			case "queue":
				f := strings.Fields(args)
				if len(f) == 2 && (f[0] == "rm" || f[0] == "remove") {
					n, err := strconv.Atoi(f[1])
					if err != nil || n < 1 || n > len(queue) {
						println(fmt.Sprintf("! no queued input %q", f[1]))
						continue
					}
					rctx, c := context.WithTimeout(ctx, 5*time.Second)
					_, err = sess.Remove(rctx, queue[n-1].ID)
					c()
					if err != nil {
						println("! " + err.Error())
					}
					continue
				}
				println(queueText(queue))
				continue
			case "cost":
				println(tr.costLines()...)
				continue
			case "clear":
				if o.NewSession != nil {
					s, err := o.NewSession(ctx)
					if err != nil {
						println("! /clear: " + err.Error())
						continue
					}
					sess = swapSession(ctx, sess, s)
					subscribe()
					println("Started a new conversation.")
				}
				continue
			case "quit", "exit", "q":
				return sess, nil
			}
			if c, ok := cmds[name]; ok {
				res, err := c.Run(ctx, args)
				if err != nil {
					println(fmt.Sprintf("! /%s: %v", name, err))
					continue
				}
				if res.Session != nil && res.Session != sess {
					sess = swapSession(ctx, sess, res.Session)
					subscribe()
				}
				if res.Text != "" {
					println(strings.TrimRight(res.Text, "\n"))
				}
				if res.Listing != "" {
					println(strings.TrimRight(res.Listing, "\n"))
				}
				if res.Quit {
					return sess, nil
				}
				if res.Prompt == "" {
					continue
				}
				prompt, fromCommand = res.Prompt, true
			} else if c, ok := mcpCommand(o.MCP, name); ok {
				res, err := c.Run(ctx, args)
				if err != nil {
					println(fmt.Sprintf("! /%s: %v", name, err))
					continue
				}
				prompt, fromCommand = res.Prompt, true
			} else if c, ok := custom[name]; ok {
				prompt = c.Expand(args)
				if c.Mode != "" {
					promptMode = c.Mode
				}
			} else {
				println(fmt.Sprintf("! unknown command /%s (see /help)", name))
				continue
			}
		}
		if !fromCommand {
			// Typed text or a custom command's prompt: attach its @files.
			var notes []string
			typed := prompt
			prompt, images, notes = attachMentions(o.Root, o.DenyRead, typed)
			println(notes...)
			if hasResourceMention(o.MCP, typed) {
				block, more, notes := attachResources(ctx, o.MCP, typed)
				println(notes...)
				prompt, images = prompt+block, append(images, more...)
			}
		}
		msg := sess.SubmitImages(prompt, promptMode, images)
		if err := wait(msg.ID); err != nil {
			if errors.Is(err, errStop) {
				return sess, nil
			}
			return sess, err
		}
	}
}

// errStop ends line mode after a second interrupt.
var errStop = fmt.Errorf("term: stopped")

// readInputs reads r's lines, joining a line that ends with a backslash to
// the next, until r ends or ctx does.
func readInputs(ctx context.Context, r io.Reader) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var cur []string
		for sc.Scan() {
			line := strings.TrimSuffix(sc.Text(), "\r")
			if strings.HasSuffix(line, "\\") {
				cur = append(cur, strings.TrimSuffix(line, "\\"))
				continue
			}
			cur = append(cur, line)
			select {
			case out <- strings.Join(cur, "\n"):
			case <-ctx.Done():
				return
			}
			cur = nil
		}
		if len(cur) > 0 {
			select {
			case out <- strings.Join(cur, "\n"):
			case <-ctx.Done():
			}
		}
	}()
	return out
}

func swapSession(ctx context.Context, old, s Session) Session {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = old.Close(cctx)
	return s
}

func dropByID(q []messages.UserMessage, id string) []messages.UserMessage {
	for i, m := range q {
		if m.ID == id {
			return append(q[:i:i], q[i+1:]...)
		}
	}
	return q
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// withInitial yields initial (when not empty) before the inputs of in.
func withInitial(ctx context.Context, initial string, in <-chan string) <-chan string {
	if initial == "" {
		return in
	}
	out := make(chan string)
	go func() {
		defer close(out)
		select {
		case out <- initial:
		case <-ctx.Done():
			return
		}
		for s := range in {
			select {
			case out <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// showRoot is the directory paths are shown relative to (Options.ShowRoot).
func (o Options) showRoot() string {
	if o.ShowRoot != "" {
		return o.ShowRoot
	}
	return o.Root
}
