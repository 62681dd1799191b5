package driver

import (
	"context"
	"io"
	"sync"

	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/internal/helperproc"
)

// Serve answers Odin's commands read from r, writing to w, until r ends;
// then it closes Chromium and removes its profile. Commands run one after
// another; the page's requests go to Odin as "http" messages meanwhile.
func Serve(r io.Reader, w io.Writer) error {
	s := &server{odin: helperproc.NewServer[browser.Msg](w, true)}
	defer s.close()
	return s.odin.Serve(r, func(_ context.Context, m browser.Msg) browser.Msg {
		if m.Command == nil {
			return browser.Msg{Err: "a command without its action"}
		}
		res, err := s.run(m.Command)
		if err != nil {
			return browser.Msg{Err: err.Error()}
		}
		return browser.Msg{Result: res}
	})
}

type server struct {
	odin *helperproc.Server[browser.Msg]

	// The browser, once started (by the command goroutine only).
	chrome *chrome

	// refused are what the driver itself refused the page since the last
	// command (WebSockets, pop-ups); Chromium's event goroutines add to it.
	mu      sync.Mutex
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

// fetch asks Odin to make one request of the page and waits for its
// answer. The page's requests belong to no command: a page keeps loading
// after the command that opened it has returned.
func (s *server) fetch(ctx context.Context, m browser.Msg) browser.Msg {
	r, err := s.odin.Ask(ctx, 0, m)
	if err != nil {
		return browser.Msg{Err: err.Error()}
	}
	return r
}

func (s *server) close() {
	if s.chrome != nil {
		s.chrome.close()
	}
}
