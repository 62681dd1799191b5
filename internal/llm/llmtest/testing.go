package llmtest

import "testing"

// NewServer serves script on a free loopback port for the duration of the
// test: it is closed by t.Cleanup, and a script that cannot be served fails
// the test at once.
func NewServer(t testing.TB, script *Script, opts ...ServerOption) *Server {
	t.Helper()
	s, err := Serve("127.0.0.1:0", script, opts...)
	if err != nil {
		t.Fatalf("llmtest.NewServer: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("llmtest: closing server: %v", err)
		}
	})
	return s
}
