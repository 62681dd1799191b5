package actors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

// dbSize is the size of a SQLite database with its write-ahead log.
func dbSize(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// bigWrite is a session with the real client, store and WriteFile whose
// model writes content to big.txt in one call, streamed in 64 KiB pieces.
func bigWrite(t *testing.T, content string, opts ...harnessOpt) (*harness, *llmtest.Server, string) {
	t.Helper()
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{ToolCalls: []llmtest.ToolCall{llmtest.Call("WriteFile", map[string]any{"file_path": "{{root}}/big.txt", "content": content})}, ChunkSize: 64 << 10},
		llmtest.Reply("written"),
	)
	dbPath := filepath.Join(t.TempDir(), "odin.db")
	st, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var srv *llmtest.Server
	opts = append([]harnessOpt{overHTTP(t, s), func(d *Deps) {
		srv = httpServers[d]
		d.Tools = tools.Builtin(tools.BuiltinOptions{})
	}, withStore(st), withConfig(func(c *config.Config) {
		// One generated file is not a refactor to review.
		c.Quality.RefactorLines = 1 << 30
	})}, opts...)
	h := newHarness(t, s, opts...)
	return h, srv, dbPath
}

// A 2 MB WriteFile reaches the tool whole, but neither the database nor
// the next request to the model holds it: the session keeps a marker with
// the content's size and SHA-256, which match the written file.
func TestLargeToolArgumentIsElidedInTheSession(t *testing.T) {
	content := strings.Repeat("a line of the generated file\n", 2<<20/29)
	h, srv, dbPath := bigWrite(t, content)
	h.sess.Submit("write the big file", messages.ModeEdit)
	if r := h.turn(); r.Status != messages.TurnDone || r.Answer != "written" {
		t.Fatalf("turn: status %s, answer %q, error %q", r.Status, r.Answer, r.Error)
	}
	got, err := os.ReadFile(filepath.Join(h.root, "big.txt"))
	if err != nil || string(got) != content {
		t.Fatalf("big.txt: %d bytes, %v; want the whole %d bytes", len(got), err, len(content))
	}
	reqs := srv.RequestsFor("orchestrator")
	if n := len(reqs[1].Raw); n > 256<<10 {
		t.Errorf("the request after the write is %d bytes: the content was sent back to the model", n)
	}
	h.close()
	if n := dbSize(t, dbPath); n > 1<<20 {
		t.Errorf("the session database is %d bytes after a %d-byte write: the argument was stored whole", n, len(content))
	}
	st, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, err := st.Messages(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	var stored string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if tc, ok := p.(store.ToolCallPart); ok && tc.Name == "WriteFile" {
				stored = tc.Input
			}
		}
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(stored), &in); err != nil {
		t.Fatalf("stored arguments are not a JSON object (%v): %.200q", err, stored)
	}
	if !strings.HasSuffix(in["file_path"], "big.txt") || !strings.HasPrefix(in["content"], "a line of the generated file\n") ||
		!strings.Contains(in["content"], hex.EncodeToString(sum[:])) || len(stored) > storedArgsMax {
		t.Errorf("stored arguments (%d bytes) lack the path, the start of the content or its hash: %.300q", len(stored), stored)
	}
}

// Arguments over context.max_tool_argument are refused without running
// the tool: no file appears, the model is told to write in parts, and the
// session stays small.
func TestOversizedToolArgumentIsRefused(t *testing.T) {
	content := strings.Repeat("y", 3<<20)
	h, srv, dbPath := bigWrite(t, content, withConfig(func(c *config.Config) { c.Context.MaxToolArgument = 1 << 20 }))
	h.sess.Submit("write the big file", messages.ModeEdit)
	if r := h.turn(); r.Status != messages.TurnDone {
		t.Fatalf("turn: status %s, answer %q, error %q", r.Status, r.Answer, r.Error)
	}
	if _, err := os.Stat(filepath.Join(h.root, "big.txt")); !os.IsNotExist(err) {
		t.Errorf("big.txt was written from refused arguments: %v", err)
	}
	reqs := srv.RequestsFor("orchestrator")
	msgs := reqs[1].Body.LLMMessages()
	last := msgs[len(msgs)-1]
	if !strings.Contains(last.Content, "context.max_tool_argument") || !strings.Contains(last.Content, "in parts") {
		t.Errorf("tool result = %q, want the limit and the advice to write in parts", last.Content)
	}
	h.close()
	if n := dbSize(t, dbPath); n > 1<<20 {
		t.Errorf("the session database is %d bytes after a refused %d-byte call", n, len(content))
	}
}

// Elided arguments stay a JSON object (providers reject a past call whose
// arguments are not one), short values are kept, long ones become markers.
func TestElideArgs(t *testing.T) {
	long := strings.Repeat("é", 40<<10)
	edits := `[` + strings.Repeat(`{"old_string":"a","new_string":"b"},`, 3000) + `{}]`
	for _, tc := range []struct {
		name, args string
		keep       []string
	}{
		{"long string", `{"file_path":"/p/a.txt","content":"` + long + `"}`, []string{`"file_path":"/p/a.txt"`, "éé", "bytes, sha256"}},
		{"long array", `{"file_path":"/p/a.txt","edits":` + edits + `}`, []string{`"file_path":"/p/a.txt"`, "Odin elided this value"}},
		{"not an object", `["` + long + `"]`, []string{"odin_elided", "not a JSON object"}},
		{"invalid", `{"content":"` + long, []string{"odin_elided"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := storedCall(llmToolCall(tc.args)).Arguments
			if !json.Valid([]byte(got)) || got[0] != '{' {
				t.Fatalf("elided arguments are not a JSON object: %.200q", got)
			}
			if len(got) > storedArgsMax {
				t.Errorf("elided arguments are %d bytes", len(got))
			}
			for _, k := range tc.keep {
				if !strings.Contains(got, k) {
					t.Errorf("elided arguments lack %q: %.300q", k, got)
				}
			}
		})
	}
	// The hash is of the decoded text, escapes and surrogate pairs
	// included: it matches the file a WriteFile wrote.
	text := strings.Repeat("a \"quoted\" line\twith é, 😀 and \\ \u2028\n", 4000)
	raw, _ := json.Marshal(map[string]any{"file_path": "/p/a.txt", "content": text})
	escaped := strings.ReplaceAll(string(raw), "😀", `\ud83d\ude00`)
	sum := sha256.Sum256([]byte(text))
	got := storedCall(llmToolCall(escaped)).Arguments
	want := fmt.Sprintf("%d bytes, sha256 %s", len(text), hex.EncodeToString(sum[:]))
	if !strings.Contains(got, want) || !strings.Contains(got, `a \"quoted\" line`) {
		t.Errorf("elided arguments lack %q and the start of the text: %.300q", want, got)
	}
	if small := `{"a":"b"}`; storedCall(llmToolCall(small)).Arguments != small {
		t.Error("small arguments were changed")
	}
}

func llmToolCall(args string) llm.ToolCall {
	return llm.ToolCall{ID: "c", Name: "WriteFile", Arguments: args}
}
