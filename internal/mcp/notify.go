package mcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/messages"
)

// progress routes notifications/progress to the call that asked for them:
// each call with somewhere to publish gets a token of its own.
type progress struct {
	next  atomic.Int64
	calls sync.Map // token string -> func(*sdk.ProgressNotificationParams)
}

// track registers fn for a new token and returns it with its release.
// The release keeps the token a moment longer: notifications are handled
// apart from the call's response, so the last ones may come after it.
func (p *progress) track(fn func(*sdk.ProgressNotificationParams)) (string, func()) {
	tok := "odin-" + strconv.FormatInt(p.next.Add(1), 10)
	p.calls.Store(tok, fn)
	return tok, func() { time.AfterFunc(progressGrace, func() { p.calls.Delete(tok) }) }
}

// progressGrace is how long a finished call's progress still shows.
const progressGrace = 2 * time.Second

func (p *progress) handle(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	if fn, ok := p.calls.Load(fmt.Sprint(req.Params.ProgressToken)); ok {
		fn.(func(*sdk.ProgressNotificationParams))(req.Params)
	}
}

// progressNotice is what the user sees of one progress notification.
func progressNotice(toolName string, p *sdk.ProgressNotificationParams) messages.Notice {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", toolName)
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	if p.Total > 0 {
		fmt.Fprintf(&b, "%s/%s", num(p.Progress), num(p.Total))
	} else {
		b.WriteString(num(p.Progress))
	}
	if m := strings.TrimSpace(p.Message); m != "" {
		b.WriteString(" " + m)
	}
	return messages.Notice{Level: "info", Text: b.String()}
}

// mcpLevel is the MCP logging level matching Odin's log level (zerolog's
// names): a server is asked for no more than Odin would log itself.
func mcpLevel(odin string) sdk.LoggingLevel {
	switch strings.ToLower(odin) {
	case "trace", "debug":
		return "debug"
	case "info", "":
		return "info"
	case "warn", "warning":
		return "warning"
	case "error":
		return "error"
	}
	return "critical" // fatal, panic, disabled
}

// zerologLevel is the Odin log level of a server's log message.
func zerologLevel(l sdk.LoggingLevel) zerolog.Level {
	switch l {
	case "debug":
		return zerolog.DebugLevel
	case "info", "notice":
		return zerolog.InfoLevel
	case "warning":
		return zerolog.WarnLevel
	}
	return zerolog.ErrorLevel
}

// logMessage puts a server's notifications/message into Odin's log.
func (s *server) logMessage(_ context.Context, req *sdk.LoggingMessageRequest) {
	if req == nil || req.Params == nil {
		return
	}
	p := req.Params
	ev := s.m.opts.Log.WithLevel(zerologLevel(p.Level)).Str("mcp_server", s.name).Str("mcp_level", string(p.Level))
	if p.Logger != "" {
		ev = ev.Str("mcp_logger", p.Logger)
	}
	ev.Interface("data", p.Data).Msg("mcp server log")
}

// setLogLevel asks a server that logs (capability logging) for Odin's
// log level; best effort, as servers treat it as a hint.
func (s *server) setLogLevel(ctx context.Context, cs *sdk.ClientSession) {
	caps := cs.InitializeResult()
	if caps == nil || caps.Capabilities == nil || caps.Capabilities.Logging == nil {
		return
	}
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: mcpLevel(s.m.opts.LogLevel)}); err != nil && s.m.ctx.Err() == nil {
		s.m.opts.Log.Debug().Err(err).Str("mcp_server", s.name).Msg("mcp: logging/setLevel")
	}
}
