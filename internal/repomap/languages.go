package repomap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// SitterLanguages are the languages odin-sitter parses (internal/repomap/
// sitter; its test keeps the two lists equal).
var SitterLanguages = []string{"java", "javascript", "python", "rust", "tsx", "typescript"}

// Launch starts the parser process argv: Odin passes its sandbox launcher
// (nothing writable, no network, no secret), so that a C parser reading
// untrusted files runs confined. release is called once the process has
// ended. Nil runs it directly (tests).
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

// sitterTimeout bounds one file's parse: a parser that hangs is killed
// and the file left out.
const sitterTimeout = 20 * time.Second

// languages parses Go in process (go/parser) and the tree-sitter languages
// in the odin-sitter process, started on first use and restarted when it
// dies (at most maxSitterStarts times).
type languages struct {
	path   string
	launch Launch

	mu      sync.Mutex // one request at a time on the process
	proc    *sitterProc
	starts  int
	lastErr error
}

const maxSitterStarts = 3

type sitterProc struct {
	cmd     *exec.Cmd
	release func()
	stdin   io.WriteCloser
	enc     *json.Encoder
	dec     *json.Decoder
}

func newLanguages(launch Launch) *languages {
	return &languages{path: SitterPath(), launch: launch}
}

func (l *languages) supports(lang string) bool {
	if lang == "go" {
		return true
	}
	return l.path != "" && slices.Contains(SitterLanguages, lang)
}

func (l *languages) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stop()
}

// stop ends the process; l.mu is held.
func (l *languages) stop() {
	p := l.proc
	if p == nil {
		return
	}
	l.proc = nil
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	if p.release != nil {
		p.release()
	}
}

// start launches odin-sitter; l.mu is held.
func (l *languages) start() error {
	if l.starts >= maxSitterStarts {
		return fmt.Errorf("repomap: odin-sitter failed %d times (%v); other languages than Go are left out", l.starts, l.lastErr)
	}
	l.starts++
	argv := []string{l.path}
	var cmd *exec.Cmd
	var release func()
	var err error
	if l.launch != nil {
		cmd, release, err = l.launch(context.Background(), argv)
	} else {
		cmd = exec.Command(argv[0])
		cmd.Env = []string{}
	}
	if err != nil {
		l.lastErr = err
		return fmt.Errorf("repomap: start odin-sitter: %w", err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		if release != nil {
			release()
		}
		l.lastErr = err
		return fmt.Errorf("repomap: start odin-sitter: %w", err)
	}
	l.proc = &sitterProc{cmd: cmd, release: release, stdin: in, enc: json.NewEncoder(in),
		dec: json.NewDecoder(bufio.NewReaderSize(out, 1<<20))}
	return nil
}

type sitterRequest struct {
	Lang string `json:"lang"`
	Src  []byte `json:"src"`
}

type sitterResponse struct {
	Defs  []Symbol       `json:"defs"`
	Refs  map[string]int `json:"refs"`
	Error string         `json:"error"`
}

func (l *languages) parse(lang string, src []byte) ([]Symbol, map[string]int, error) {
	if lang == "go" {
		return parseGo(src)
	}
	if !l.supports(lang) {
		return nil, nil, fmt.Errorf("repomap: no parser for %s", lang)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.proc == nil {
		if err := l.start(); err != nil {
			return nil, nil, err
		}
	}
	p := l.proc
	type result struct {
		res sitterResponse
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		if r.err = p.enc.Encode(sitterRequest{Lang: lang, Src: src}); r.err == nil {
			r.err = p.dec.Decode(&r.res)
		}
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(sitterTimeout):
		_ = p.cmd.Process.Kill()
		r = <-done
		r.err = errors.New("timed out")
	}
	if r.err != nil {
		// The process is in an unknown state: the next file starts a new one.
		l.lastErr = r.err
		l.stop()
		return nil, nil, fmt.Errorf("repomap: odin-sitter: %w", r.err)
	}
	if r.res.Error != "" {
		return nil, nil, errors.New(r.res.Error)
	}
	for i := range r.res.Defs {
		r.res.Defs[i].Sig = oneLine(r.res.Defs[i].Sig)
	}
	return r.res.Defs, r.res.Refs, nil
}
