package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/tools/tool"
)

// A session is one long-lived interpreter (bash or python3) in the
// sandbox, driven by a sentinel protocol rather than by scraping a prompt:
//
//   - requests go to its stdin, which no command it runs can read (bash
//     runs each command with stdin from /dev/null, the Python driver moves
//     the request pipe off fd 0);
//   - what commands print, stdout and stderr, goes to one output pipe;
//   - the interpreter's own stderr is a separate control pipe on which the
//     driver writes one record per request: \x01NONCE KIND PAYLOAD\x00,
//     with a fresh random nonce per request that the command never sees;
//   - after the command the driver also prints "\nNONCE\n" to the output
//     pipe, so that all the command's output has been read when the
//     marker is.
//
// One call runs at a time (mu). The process is killed with its session:
// on Close, when the run it belongs to ends, and with Odin (the sandbox
// dies with its parent).
type session struct {
	mu   sync.Mutex
	proc *sandbox.Process
	in   *os.File
	out  *outputBuf
	ctl  chan ctlRecord
	// exited is closed once the interpreter has exited; waitErr is then
	// its exit status.
	exited  chan struct{}
	waitErr error
	// write is the confinement the session was started with: a session
	// started read-only stays read-only, and one of an edit-mode run is
	// restarted when the mode changes.
	write bool
	// cwd is the working directory the last command left (bash only),
	// under cwdMu rather than mu: the policy reads it while a call runs.
	cwdMu     sync.Mutex
	cwd       string
	closeOnce sync.Once
	// shellPID is bash's $$ (as its sandbox sees it), from the "pid"
	// record of the last request; 0 for Python. Only request uses it,
	// under mu.
	shellPID int
}

// ctlRecord is one record of the control pipe.
type ctlRecord struct {
	nonce, kind, payload string
	// stray is what the interpreter wrote to its stderr outside a record
	// (its own warnings).
	stray string
}

// sessionSpec is how to start an interpreter.
type sessionSpec struct {
	spec sandbox.Spec
	// prelude is written to stdin once, before the first request.
	prelude string
}

// startSession launches spec through the sandbox launcher. The process is
// not bound to any call's context: it lives until close.
func startSession(l *sandbox.Launcher, ss sessionSpec, write bool) (*session, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	closeChild := func() { inR.Close(); outW.Close(); ctlW.Close() }
	proc, err := l.Command(context.Background(), ss.spec)
	if err != nil {
		closeChild()
		inW.Close()
		outR.Close()
		ctlR.Close()
		return nil, err
	}
	proc.Stdin, proc.Stdout, proc.Stderr = inR, outW, ctlW
	if err := proc.Start(); err != nil {
		closeChild()
		inW.Close()
		outR.Close()
		ctlR.Close()
		proc.Release()
		return nil, err
	}
	closeChild() // the interpreter holds them now
	s := &session{proc: proc, in: inW, out: newOutputBuf(), ctl: make(chan ctlRecord, 16), exited: make(chan struct{}), write: write}
	go func() {
		_, _ = io.Copy(s.out, outR)
		outR.Close()
		s.out.markEOF()
	}()
	go s.readControl(ctlR)
	go func() {
		s.waitErr = proc.Wait()
		close(s.exited)
	}()
	if ss.prelude != "" {
		if _, err := io.WriteString(s.in, ss.prelude); err != nil {
			s.close()
			return nil, fmt.Errorf("session: prelude: %w", err)
		}
	}
	return s, nil
}

// readControl parses the control pipe into records until it closes.
func (s *session) readControl(r *os.File) {
	defer r.Close()
	defer close(s.ctl)
	var buf []byte
	chunk := make([]byte, 4096)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			end := bytes.IndexByte(buf, 0)
			if end < 0 {
				break
			}
			rec := string(buf[:end])
			buf = buf[end+1:]
			var cr ctlRecord
			if i := strings.IndexByte(rec, 1); i >= 0 {
				cr.stray, rec = rec[:i], rec[i+1:]
				f := strings.SplitN(rec, " ", 3)
				for len(f) < 3 {
					f = append(f, "")
				}
				cr.nonce, cr.kind, cr.payload = f[0], f[1], f[2]
			} else {
				cr.stray = rec
			}
			s.ctl <- cr
		}
		if len(buf) > 1<<20 { // stray output without a record: keep the end
			buf = buf[len(buf)-1<<16:]
		}
		if err != nil {
			if len(buf) > 0 {
				s.ctl <- ctlRecord{stray: string(buf)}
			}
			return
		}
	}
}

func (s *session) workDir() string {
	s.cwdMu.Lock()
	defer s.cwdMu.Unlock()
	return s.cwd
}

func (s *session) setWorkDir(d string) {
	s.cwdMu.Lock()
	s.cwd = d
	s.cwdMu.Unlock()
}

// alive reports whether the interpreter still runs.
func (s *session) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// close kills the interpreter and everything it started (the sandbox's
// namespace, or the init helper's process tree) and waits for it.
func (s *session) close() {
	s.closeOnce.Do(func() {
		_ = s.in.Close()
		_ = s.proc.Kill()
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
		s.proc.Release()
	})
}

// exchange is the outcome of one request.
type exchange struct {
	// done is the driver's "done" record's payload; ok is false when none
	// came (the interpreter exited, or the hard deadline passed).
	payload string
	ok      bool
	// timedOut: the call's watchdog found the timeout expired and
	// interrupted the shell's foreground command.
	timedOut bool
	// jobPids is the payload of the driver's "pids" record: the PIDs of
	// a background job the shell was asked for (action kill).
	jobPids string
	// output is what the command printed (with stray interpreter output).
	output string
	// truncated is how many bytes of output were dropped from the middle.
	truncated int64
	// cancelled: ctx ended; the session was killed.
	cancelled bool
}

// newNonce returns a fresh unguessable marker.
func newNonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "ODIN" + hex.EncodeToString(b[:])
}

// errSessionGone is returned when the interpreter exited during a request.
var errSessionGone = errors.New("session: the interpreter exited")

// watchdog is a shell call's timeout, kept by Odin rather than by the
// sandboxed shell: once after passes, the shell's foreground command gets
// SIGINT at every tick, and SIGKILL once grace has passed as well
// (sandbox.Process.SignalForeground). The shell itself and its background
// jobs are left alone.
type watchdog struct {
	after, grace time.Duration
}

// watchTick is how often an interrupted command is signalled again: a
// loop may start a new process after the last one was interrupted.
const watchTick = 100 * time.Millisecond

// request writes req (built for nonce) to the interpreter and waits for
// its done record. w, when not nil, interrupts the shell's foreground
// command when its timeout passes. hard bounds the wait: past it the
// session is killed (the timeout did not get the command to stop). A ctx
// that ends kills the session too: the command must not run on unseen.
func (s *session) request(ctx context.Context, nonce, req string, w *watchdog, hard time.Duration, maxOut int) (exchange, error) {
	var ex exchange
	s.out.startCall(nonce)
	// Drain records a previous call left behind (a late timeout record).
	for drained := false; !drained; {
		select {
		case r, ok := <-s.ctl:
			if !ok {
				drained = true
			} else if r.stray != "" {
				s.out.addStray(r.stray)
			}
		default:
			drained = true
		}
	}
	if _, err := io.WriteString(s.in, req); err != nil {
		s.close()
		return ex, errSessionGone
	}
	timer := time.NewTimer(hard)
	defer timer.Stop()
	var soft, tick <-chan time.Time
	if w != nil && w.after > 0 {
		t := time.NewTimer(w.after)
		defer t.Stop()
		soft = t.C
	}
	var killAt time.Time
	interrupt := func() {
		sig := syscall.SIGINT
		if !time.Now().Before(killAt) {
			sig = syscall.SIGKILL
		}
		// A shell not found (it exited) ends the call by itself.
		_, _ = s.proc.SignalForeground(s.shellPID, sig)
	}
	var gone bool
wait:
	for {
		select {
		case r, ok := <-s.ctl:
			if !ok {
				gone = true
				break wait
			}
			if r.stray != "" {
				s.out.addStray(r.stray)
			}
			if r.nonce != nonce {
				continue
			}
			switch r.kind {
			case "pid":
				s.shellPID, _ = strconv.Atoi(r.payload)
			case "pids":
				ex.jobPids = r.payload
			case "done":
				ex.payload, ex.ok = r.payload, true
				break wait
			}
		case <-soft:
			ex.timedOut = true
			killAt = time.Now().Add(w.grace)
			ticker := time.NewTicker(watchTick)
			defer ticker.Stop()
			tick = ticker.C
			interrupt()
		case <-tick:
			interrupt()
		case <-timer.C:
			s.close()
			break wait
		case <-ctx.Done():
			ex.cancelled = true
			s.close()
			break wait
		}
	}
	if ex.ok {
		// The output marker follows the done record at once; a command
		// that redirected the shell's own stdout away never prints it.
		s.out.waitMarker(2 * time.Second)
	} else {
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
		s.out.waitEOF(2 * time.Second)
	}
	ex.output, ex.truncated = s.out.take(maxOut)
	// The session outlives this call, and the user's git may run in the
	// project meanwhile: what the call planted for it goes now.
	if removed := s.proc.SweepGit(); len(removed) > 0 {
		ex.output += fmt.Sprintf("\n[odin: removed what this command planted where git would run it outside the sandbox: %s. A new repository may hold only what `git init` makes; ask the user to create or configure it]\n", strings.Join(removed, "; "))
	}
	if gone && !ex.ok {
		return ex, errSessionGone
	}
	return ex, nil
}

// outputBuf collects the output pipe. Between calls it keeps what
// background jobs print (the end of it, up to a bound), shown with the next
// call; during a call it looks for the call's marker.
type outputBuf struct {
	mu     sync.Mutex
	data   []byte
	marker []byte
	found  int // index of the marker in data, -1 while not seen
	eof    bool
	wake   chan struct{}
	// dropped counts bytes dropped from the middle of an over-long output.
	dropped int64
}

// outputKeep bounds what the buffer holds: beyond it the middle is
// dropped, keeping the head and the tail (where the marker is).
const outputKeep = 1 << 20

func newOutputBuf() *outputBuf { return &outputBuf{found: -1, wake: make(chan struct{}, 1)} }

func (b *outputBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.data = append(b.data, p...)
	if len(b.data) > 2*outputKeep {
		head := outputKeep / 2
		if b.found >= 0 && b.found < len(b.data)-outputKeep/2 {
			head = b.found + len(b.marker) // never drop a marker seen
		}
		cut := len(b.data) - outputKeep
		if cut > head {
			b.dropped += int64(cut - head)
			b.data = append(b.data[:head], b.data[cut:]...)
		}
	}
	b.scan()
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// scan looks for the marker; call with mu held.
func (b *outputBuf) scan() {
	if b.found < 0 && b.marker != nil {
		b.found = bytes.Index(b.data, b.marker)
	}
}

func (b *outputBuf) markEOF() {
	b.mu.Lock()
	b.eof = true
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// startCall sets the marker of the call about to run; what is in the
// buffer already is background output, shown first.
func (b *outputBuf) startCall(nonce string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.marker = []byte("\n" + nonce + "\n")
	b.found = -1
	if len(b.data) > 0 {
		bg := b.data
		b.data = nil
		b.data = append(b.data, "[output of background jobs since the last call]\n"...)
		b.data = append(b.data, bg...)
		if !bytes.HasSuffix(bg, []byte("\n")) {
			b.data = append(b.data, '\n')
		}
		b.data = append(b.data, "[end of background output]\n"...)
	}
	b.scan()
}

// addStray appends what the interpreter wrote outside a record.
func (b *outputBuf) addStray(s string) {
	s = strings.Trim(s, "\n")
	if s == "" {
		return
	}
	b.mu.Lock()
	b.data = append(b.data, s+"\n"...)
	b.mu.Unlock()
}

func (b *outputBuf) waitFor(cond func() bool, d time.Duration) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		ok := cond()
		b.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-b.wake:
		case <-deadline.C:
			return
		}
	}
}

func (b *outputBuf) waitMarker(d time.Duration) { b.waitFor(func() bool { return b.found >= 0 }, d) }
func (b *outputBuf) waitEOF(d time.Duration)    { b.waitFor(func() bool { return b.eof }, d) }

// take returns the call's output (up to the marker), keeping what follows
// it for the next call, with the middle cut to max bytes.
func (b *outputBuf) take(max int) (string, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []byte
	if b.found >= 0 {
		out = b.data[:b.found]
		rest := b.data[b.found+len(b.marker):]
		b.data = append([]byte(nil), rest...)
	} else {
		out = b.data
		b.data = nil
	}
	b.found, b.marker = -1, nil
	ht := newHeadTail(max)
	_, _ = ht.Write(out)
	s, dropped := ht.String()
	dropped += b.dropped
	b.dropped = 0
	return s, dropped
}

// sessionPool holds the sessions of one tool: one per agent run, each
// closed when its run ends (tool.Env.Done) or when the pool is closed.
type sessionPool struct {
	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
}

func newSessionPool() *sessionPool { return &sessionPool{sessions: map[string]*session{}} }

// runKey names env's agent run.
func runKey(env *tool.Env) string { return env.SessionID + "\x00" + env.Agent + "\x00" + env.AgentID }

func (p *sessionPool) get(key string) *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions[key]
}

// put records s as key's session, closing the one it replaces, and closes
// it when done is closed.
func (p *sessionPool) put(key string, s *session, done <-chan struct{}) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		s.close()
		return errors.New("session: the tool is closed")
	}
	old := p.sessions[key]
	p.sessions[key] = s
	p.mu.Unlock()
	if old != nil {
		old.close()
	}
	if done != nil {
		go func() {
			select {
			case <-done:
				p.drop(key, s)
			case <-s.exited:
				p.drop(key, s)
			}
		}()
	}
	return nil
}

// drop closes s and forgets it if it is still key's session.
func (p *sessionPool) drop(key string, s *session) {
	p.mu.Lock()
	if p.sessions[key] == s {
		delete(p.sessions, key)
	}
	p.mu.Unlock()
	s.close()
}

// Close kills every session; later calls start none.
func (p *sessionPool) Close() {
	p.mu.Lock()
	p.closed = true
	all := p.sessions
	p.sessions = map[string]*session{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
}
