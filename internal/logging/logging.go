package logging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
)

// Open returns a logger writing JSON lines to path at level (debug, info,
// warn, error) and the file to close. An empty path discards everything.
func Open(path, level string) (zerolog.Logger, io.Closer, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	if path == "" {
		return zerolog.Nop(), io.NopCloser(nil), nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return zerolog.Nop(), nil, fmt.Errorf("logging: %w", err)
	}
	// The log holds prompts, paths and tool output: owner-only, also for a
	// file an older version created with a wider mode.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return zerolog.Nop(), nil, fmt.Errorf("logging: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return zerolog.Nop(), nil, fmt.Errorf("logging: %w", err)
	}
	return zerolog.New(closedQuiet{f}).Level(lvl).With().Timestamp().Int("os_pid", os.Getpid()).Logger(), f, nil
}

// closedQuiet is the log file as the logger writes it. Goroutines that
// outlive the app's Close (an MCP server's stderr reader, a child's
// reaper, an actor stopping) may still log while the process exits; a
// write to the closed file has nowhere to go, and zerolog would print its
// failure on the user's stderr, in the middle of the command's output.
type closedQuiet struct{ f *os.File }

func (w closedQuiet) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if errors.Is(err, os.ErrClosed) {
		return len(p), nil
	}
	return n, err
}

// Slog returns a *slog.Logger that writes through l.
func Slog(l zerolog.Logger) *slog.Logger {
	return slog.New(&handler{l: l})
}

type handler struct {
	l      zerolog.Logger
	attrs  []slog.Attr
	groups []string
}

func (h *handler) Enabled(_ context.Context, level slog.Level) bool {
	return h.l.GetLevel() <= toZerolog(level)
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	ev := h.l.WithLevel(toZerolog(r.Level))
	for _, a := range h.attrs {
		ev = ev.Str(a.Key, a.Value.Resolve().String())
	}
	prefix := h.prefix()
	r.Attrs(func(a slog.Attr) bool {
		ev = ev.Str(prefix+a.Key, a.Value.Resolve().String())
		return true
	})
	ev.Msg(r.Message)
	return nil
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	prefix := h.prefix()
	for _, a := range attrs {
		c.attrs = append(c.attrs, slog.Attr{Key: prefix + a.Key, Value: a.Value})
	}
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	c := *h
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

// prefix is the dotted group path attributes are qualified with.
func (h *handler) prefix() string {
	if len(h.groups) == 0 {
		return ""
	}
	return strings.Join(h.groups, ".") + "."
}

func toZerolog(l slog.Level) zerolog.Level {
	switch {
	case l >= slog.LevelError:
		return zerolog.ErrorLevel
	case l >= slog.LevelWarn:
		return zerolog.WarnLevel
	case l >= slog.LevelInfo:
		return zerolog.InfoLevel
	}
	return zerolog.DebugLevel
}
