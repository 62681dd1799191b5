package store_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/odin-code/odin/internal/store"
)

// Agent runs are kept per session in first-stored order, replaced in
// place, rejected when malformed, and deleted with their session.
func TestAgentRuns(t *testing.T) {
	st := openTemp(t)
	ctx := t.Context()
	if _, err := st.CreateSession(ctx, store.Session{ID: "s1", Project: "/p"}); err != nil {
		t.Fatal(err)
	}
	put := func(id, data string) error {
		return st.PutAgentRun(ctx, store.AgentRunRecord{ID: id, SessionID: "s1", Data: json.RawMessage(data)})
	}
	for _, r := range [][2]string{{"r1", `{"status":"running"}`}, {"r2", `{"status":"running"}`}, {"r1", `{"status":"ok"}`}} {
		if err := put(r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.AgentRuns(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "r1" || string(got[0].Data) != `{"status":"ok"}` || got[1].ID != "r2" {
		t.Fatalf("runs = %+v", got)
	}
	if err := put("r3", "not json"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("bad data: %v", err)
	}
	if err := st.PutAgentRun(ctx, store.AgentRunRecord{ID: "r4", SessionID: "nope", Data: json.RawMessage(`{}`)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no session: %v", err)
	}
	if err := st.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if got, err := st.AgentRuns(ctx, "s1"); err != nil || len(got) != 0 {
		t.Errorf("after delete: %+v %v", got, err)
	}
}
