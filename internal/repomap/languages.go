package repomap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/helperproc"
	"github.com/odin-code/odin/internal/repomap/sitterwire"
)

// SitterLanguages are the languages odin-sitter parses (internal/repomap/
// sitter; its test keeps the two lists equal).
var SitterLanguages = []string{"java", "javascript", "python", "rust", "tsx", "typescript"}

// Launch starts the parser process argv: Odin passes its sandbox launcher
// (nothing writable, no network, no secret), so that a C parser reading
// untrusted files runs confined. release is called once the process has
// ended. Nil runs it in a sandbox of its own (bubblewrap, else Landlock),
// or not at all: never plainly.
type Launch func(ctx context.Context, argv []string) (cmd *exec.Cmd, release func(), err error)

// SitterPath finds odin-sitter: $ODIN_SITTER, else beside the running
// executable, else on PATH; "" when there is none (the map then covers Go
// only and counts the other files as unsupported).
func SitterPath() string {
	if p := os.Getenv("ODIN_SITTER"); p != "" {
		return p
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "odin-sitter")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath("odin-sitter"); err == nil {
		return p
	}
	return ""
}

// sitterTimeout bounds one file's parse: a parser that hangs is stopped
// and the file left out.
const sitterTimeout = 20 * time.Second

// languages parses Go in process (go/parser) and the tree-sitter languages
// in the odin-sitter process (helperproc), started on first use and again
// after it died or hung, at most maxSitterStarts times.
type languages struct {
	path string
	proc *helperproc.Client[sitterwire.Msg]

	mu sync.Mutex // one file at a time: its deadline is its own parse's
}

const maxSitterStarts = 3

// errNoSitter is a parse without odin-sitter (supports rules it out).
var errNoSitter = errors.New("repomap: odin-sitter was not found beside odin, on PATH or in $ODIN_SITTER")

// newLanguages finds odin-sitter; launch starts it confined (nil: in a
// sandbox of its own, bubblewrap else Landlock, or not at all).
func newLanguages(launch Launch) *languages {
	path := SitterPath()
	// A parse that times out leaves the parser in an unknown state: it is
	// stopped (StopOnCancel), and the next file starts a new one.
	return &languages{path: path, proc: helperproc.New(helperproc.Config[sitterwire.Msg]{Name: "odin-sitter",
		Prefix: "repomap", Path: path, NotFound: errNoSitter, Launch: helperproc.Launch(launch),
		StopOnCancel: true, MaxStarts: maxSitterStarts})}
}

func (l *languages) supports(lang string) bool {
	if lang == "go" {
		return true
	}
	return l.path != "" && slices.Contains(SitterLanguages, lang)
}

func (l *languages) close() { l.proc.Close() }

func (l *languages) parse(lang string, src []byte) ([]Symbol, map[string]int, error) {
	if lang == "go" {
		return parseGo(src)
	}
	if !l.supports(lang) {
		return nil, nil, fmt.Errorf("repomap: no parser for %s", lang)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), sitterTimeout)
	defer cancel()
	r, err := l.proc.Call(ctx, sitterwire.Msg{Lang: lang, Src: src}, nil)
	switch {
	case errors.Is(err, helperproc.ErrTooManyStarts):
		return nil, nil, fmt.Errorf("%w; other languages than Go are left out", err)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, nil, errors.New("repomap: odin-sitter: timed out")
	case err != nil:
		return nil, nil, err // helperproc's: it names odin-sitter
	case r.Error != "":
		return nil, nil, errors.New(r.Error)
	}
	var defs []Symbol
	if len(r.Defs) > 0 {
		if err := json.Unmarshal(r.Defs, &defs); err != nil {
			return nil, nil, fmt.Errorf("repomap: odin-sitter's definitions: %w", err)
		}
	}
	for i := range defs {
		defs[i].Sig = oneLine(defs[i].Sig)
	}
	return defs, r.Refs, nil
}
