package llm

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzChunks feeds arbitrary chunk payloads through the accumulator: a
// provider may send anything, and the answer must be an error or a
// response, never a panic.
func FuzzChunks(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var payloads [][]byte
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "[DONE]" {
				payloads = append(payloads, []byte(d))
			}
		}
		f.Add(bytes.Join(payloads, []byte("\x00")))
	}
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[{"index":-1},{"index":99999999999}]}}]}`))
	f.Add([]byte(`{"choices":[{"delta":{"content":[{"type":"thinking","thinking":7}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		acc := newAccumulator(func(Event) {}, 0)
		req := &Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}
		for _, chunk := range bytes.Split(data, []byte("\x00")) {
			if err := acc.chunk(chunk); err != nil {
				if e := (*Error)(nil); !errors.As(err, &e) {
					t.Fatalf("error %v is a %T, want *Error", err, err)
				}
				return
			}
		}
		r, err := acc.response(req)
		if err == nil && r == nil {
			t.Fatal("nil response without an error")
		}
		if err == nil {
			for _, tc := range r.ToolCalls {
				if tc.ID == "" || strings.TrimSpace(tc.Arguments) == "" {
					t.Fatalf("call %+v lacks an id or arguments", tc)
				}
			}
		}
	})
}
