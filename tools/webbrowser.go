package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/internal/untrusted"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed webbrowser.md
var webBrowserDescription string

// NameWebBrowser is the WebBrowser tool's name (seed 003's web_browser).
const NameWebBrowser = "WebBrowser"

// webBrowserTextLimit caps the page text of one result: it lands in the
// calling model's context.
const webBrowserTextLimit = 40_000

// WebBrowserInput is WebBrowser's input.
type WebBrowserInput struct {
	Action     string `json:"action" jsonschema:"navigate, read, click, type, select, wait, evaluate or screenshot"`
	URL        string `json:"url,omitempty" jsonschema:"navigate: the http or https URL to open"`
	Ref        int    `json:"ref,omitempty" jsonschema:"click, type, select: the element's ref from the latest read of the page"`
	Selector   string `json:"selector,omitempty" jsonschema:"click, type, select: a CSS selector instead of ref; wait: the CSS selector to wait for"`
	Text       string `json:"text,omitempty" jsonschema:"type: the text to enter; select: the option's value or label"`
	Expression string `json:"expression,omitempty" jsonschema:"evaluate: a read-only JavaScript expression"`
	Timeout    int    `json:"timeout,omitempty" jsonschema:"Seconds the action may take (default 30, at most 120)"`
}

// WebBrowserMeta is WebBrowser's structured result, for Odin.
type WebBrowserMeta struct {
	Action string `json:"action"`
	URL    string `json:"url,omitempty"`
	Title  string `json:"title,omitempty"`
	// StartMS is Chromium's start-up time, on the call that started it.
	StartMS int64    `json:"start_ms,omitempty"`
	Blocked []string `json:"blocked,omitempty"`
}

// NewWebBrowser returns WebBrowser, which drives the calling agent run's
// browser from pool (one per run, keyed by the Env's AgentID). Agents get
// it only when their tools list names it (actors.FilterTools). With
// sessions, the page's requests to allowed loopback ports reach the dev
// servers the same run's ShellSession or Python started in their sandbox
// (Sessions.DialLoopback) before the host's loopback.
func NewWebBrowser(pool *browser.Pool, sessions *Sessions) tool.Tool {
	return newBuiltin[WebBrowserInput](NameWebBrowser, tool.ClassWeb, strings.TrimSpace(webBrowserDescription),
		func(ctx context.Context, env *tool.Env, in WebBrowserInput) (tool.Result, error) {
			if pool != nil && sessions != nil && env != nil {
				key := runKey(env)
				pool.SetLoopback(browserRun(env), func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
					return sessions.DialLoopback(ctx, key, a)
				})
			}
			return webBrowse(ctx, pool, env, in)
		},
		tool.WithSchema(func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{browser.ActionNavigate, browser.ActionRead, browser.ActionClick,
				browser.ActionType, browser.ActionSelect, browser.ActionWait, browser.ActionEvaluate, browser.ActionScreenshot}
			setMinimum(s, "ref", 1)
			setMinimum(s, "timeout", 1)
			max := 120.0
			s.Properties["timeout"].Maximum = &max
		}))
}

func webBrowse(ctx context.Context, pool *browser.Pool, env *tool.Env, in WebBrowserInput) (tool.Result, error) {
	if pool == nil {
		return tool.Errorf("WebBrowser is not available in this session."), nil
	}
	run := browserRun(env)
	timeout := 30 * time.Second
	if in.Timeout > 0 {
		timeout = time.Duration(min(in.Timeout, 120)) * time.Second
	}
	cmd := browser.Command{Action: in.Action, URL: strings.TrimSpace(in.URL), Ref: in.Ref, Selector: in.Selector,
		Text: in.Text, Expression: in.Expression, TimeoutMS: timeout.Milliseconds()}
	// Odin's own deadline leaves the browser time to report its timeout.
	cctx, cancel := context.WithTimeout(ctx, timeout+10*time.Second)
	defer cancel()
	res, err := pool.Do(cctx, run, cmd)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("WebBrowser %s: %w", in.Action, context.Cause(ctx))
		}
		return webBrowserFailure(in, err), nil
	}
	meta := WebBrowserMeta{Action: in.Action, URL: res.URL, Title: res.Title, StartMS: res.StartMS, Blocked: res.Blocked}
	var b strings.Builder
	if res.URL != "" {
		fmt.Fprintf(&b, "Page: %s\n", res.URL)
	}
	switch {
	case in.Action == browser.ActionScreenshot:
		label := fmt.Sprintf("[image: screenshot of %s %dx%d]", res.URL, res.Width, res.Height)
		b.WriteString(label)
		writeBlocked(&b, res.Blocked)
		return tool.Result{Output: b.String(), Meta: meta, Images: []messages.Image{{
			Name: "screenshot", MIME: "image/png", Data: res.PNG, Width: res.Width, Height: res.Height}}}, nil
	case in.Action == browser.ActionEvaluate:
		f := untrusted.NewFence(untrusted.WebContent, "computed by a web page")
		b.WriteString("Value:\n" + f.Rule() + "\n\n" + f.Wrap(cutText(res.Value, webBrowserTextLimit)))
	default:
		if res.Title != "" {
			fmt.Fprintf(&b, "Title: %s\n", oneLine(res.Title))
		}
		text := strings.TrimSpace(res.Markdown)
		if text == "" {
			text = "(the page shows no text)"
		}
		f := untrusted.NewFence(untrusted.WebContent, "read from a web page in the browser")
		b.WriteString("\n" + f.Rule() + "\n\n" + f.Wrap(cutText(text, webBrowserTextLimit)))
	}
	writeBlocked(&b, res.Blocked)
	return tool.Result{Output: b.String(), Meta: meta}, nil
}

// browserRun names env's agent run in the browser pool.
func browserRun(env *tool.Env) string {
	if env == nil {
		return ""
	}
	if env.AgentID != "" {
		return env.AgentID
	}
	return env.SessionID
}

// webBrowserFailure is a failed action as a result the model can act on.
func webBrowserFailure(in WebBrowserInput, err error) tool.Result {
	var ce *browser.CommandError
	var b strings.Builder
	switch {
	case errors.As(err, &ce):
		fmt.Fprintf(&b, "WebBrowser %s failed: %s", in.Action, ce.Msg)
		writeBlocked(&b, ce.Blocked)
	case errors.Is(err, browser.ErrClosed):
		fmt.Fprintf(&b, "The browser exited (%v); the next call starts a new one, on a blank page.", err)
	default:
		fmt.Fprintf(&b, "WebBrowser %s failed: %v", in.Action, err)
	}
	return tool.Result{Output: b.String(), IsError: true, Meta: WebBrowserMeta{Action: in.Action}}
}

func writeBlocked(b *strings.Builder, blocked []string) {
	if len(blocked) == 0 {
		return
	}
	b.WriteString("\n\nWhat Odin refused the page (its requests by the address policy, which web.browser in odin.yaml widens for loopback ports; WebSockets; pop-ups):\n")
	for i, r := range blocked {
		if i == 10 {
			fmt.Fprintf(b, "- and %d more\n", len(blocked)-10)
			break
		}
		b.WriteString("- " + oneLine(r) + "\n")
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutText cuts s to at most n bytes on a line boundary, saying so.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > n/2 {
		cut = cut[:i]
	}
	return strings.ToValidUTF8(cut, "") + fmt.Sprintf("\n\n[The page text was cut at %d bytes.]", n)
}
