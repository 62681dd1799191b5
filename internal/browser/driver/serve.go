package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/odin-code/odin/internal/browser"
)

// Serve answers Odin's commands read from r, writing to w, until r ends;
// then it closes Chromium and removes its profile. Commands run one after
// another; the page's requests go to Odin as "http" messages meanwhile.
func Serve(r io.Reader, w io.Writer) error {
	s := &server{out: bufio.NewWriter(w), pending: map[uint64]chan browser.Msg{}}
	s.enc = json.NewEncoder(s.out)
	cmds := make(chan browser.Msg, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range cmds {
			res, err := s.run(m.Command)
			out := browser.Msg{Op: browser.OpResult, ID: m.ID, Result: res}
			if err != nil {
				out.Result, out.Err = nil, err.Error()
			}
			_ = s.send(out)
		}
	}()
	defer func() {
		close(cmds)
		s.abort()
		<-done
		s.close()
	}()
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	for {
		var m browser.Msg
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		switch m.Op {
		case browser.OpDo:
			if m.Command == nil {
				return errors.New("a command without its action")
			}
			cmds <- m
		case browser.OpHTTPResp:
			s.mu.Lock()
			ch := s.pending[m.Req]
			delete(s.pending, m.Req)
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		default:
			return fmt.Errorf("unknown operation %q", m.Op)
		}
	}
}

type server struct {
	wmu sync.Mutex
	out *bufio.Writer
	enc *json.Encoder

	mu      sync.Mutex
	pending map[uint64]chan browser.Msg
	nextReq uint64
	aborted bool

	// The browser, once started (by the command goroutine only).
	chrome *chrome

	// refused are what the driver itself refused the page since the last
	// command (WebSockets, pop-ups), under mu.
	refused []string
}

// refuse records one thing the page was refused, for the command's result.
func (s *server) refuse(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.refused) < 50 {
		s.refused = append(s.refused, what)
	}
}

// takeRefused returns and forgets what was refused.
func (s *server) takeRefused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.refused
	s.refused = nil
	return r
}

func (s *server) send(m browser.Msg) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.enc.Encode(m); err != nil {
		return err
	}
	return s.out.Flush()
}

// fetch asks Odin to make one request of the page and waits for its
// answer.
func (s *server) fetch(ctx context.Context, m browser.Msg) browser.Msg {
	ch := make(chan browser.Msg, 1)
	s.mu.Lock()
	if s.aborted {
		s.mu.Unlock()
		return browser.Msg{Err: "the browser is closing"}
	}
	s.nextReq++
	m.Op, m.Req = browser.OpHTTP, s.nextReq
	s.pending[m.Req] = ch
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.pending, m.Req)
		s.mu.Unlock()
	}
	if err := s.send(m); err != nil {
		forget()
		return browser.Msg{Err: err.Error()}
	}
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		forget()
		return browser.Msg{Err: context.Cause(ctx).Error()}
	}
}

// abort fails the page's requests still waiting: Odin has gone.
func (s *server) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborted = true
	for id, ch := range s.pending {
		ch <- browser.Msg{Err: "odin has gone"}
		delete(s.pending, id)
	}
}

func (s *server) close() {
	if s.chrome != nil {
		s.chrome.close()
	}
}
