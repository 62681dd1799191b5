package helperproc

import (
	"strings"
	"sync"
)

// tailMax caps the stderr line kept: enough for a panic's first line.
const tailMax = 300

// tail keeps the last line a helper wrote to stderr, to say why it died.
type tail struct {
	mu   sync.Mutex
	last string
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(b)); s != "" {
		lines := strings.Split(s, "\n")
		t.last = lines[len(lines)-1]
		if len(t.last) > tailMax {
			t.last = t.last[:tailMax]
		}
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}
