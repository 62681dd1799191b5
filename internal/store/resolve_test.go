package store_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/internal/store"
)

func TestResolveSessionID(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	project := t.TempDir()
	for _, id := range []string{"abcd1234-0000", "abcd9999-0000", "ffff0000-1111"} {
		if _, err := st.CreateSession(ctx, store.Session{ID: id, Project: project, Agent: store.AgentOrchestrator}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateSession(ctx, store.Session{ID: "child-1", ParentID: "ffff0000-1111", Agent: "search"}); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"abcd1234-0000": "abcd1234-0000", "abcd1234": "abcd1234-0000", "ABCD9": "abcd9999-0000",
		"ffff0000": "ffff0000-1111", "child": "child-1", " ffff ": "ffff0000-1111",
	} {
		got, err := store.ResolveSessionID(ctx, st, in)
		if err != nil || got != want {
			t.Errorf("ResolveSessionID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := store.ResolveSessionID(ctx, st, "abcd"); !errors.Is(err, store.ErrAmbiguous) {
		t.Errorf("abcd: err = %v, want ErrAmbiguous", err)
	}
	for _, in := range []string{"zzz", ""} {
		if _, err := store.ResolveSessionID(ctx, st, in); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%q: err = %v, want ErrNotFound", in, err)
		}
	}
}
