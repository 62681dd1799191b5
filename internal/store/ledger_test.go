package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/store"
)

// A call's token ledger is kept with its usage record and summed by part;
// calls recorded without one (older Odins, other clients) count in no
// part and do not break the sum.
func TestUsageLedger(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	sess, err := s.CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	ledger := func(sys, sysCached, input int64) []store.UsagePart {
		return []store.UsagePart{{Part: "system", Tokens: sys, Cached: sysCached}, {Part: "tools", Tokens: 0}, {Part: "input", Tokens: input}}
	}
	at := time.Unix(1_800_000_000, 0)
	for _, u := range []store.UsageRecord{
		{SessionID: sess.ID, Agent: "code", PromptTokens: 130, CachedTokens: 0, Parts: ledger(100, 0, 30), At: at},
		{SessionID: sess.ID, Agent: "code", PromptTokens: 150, CachedTokens: 100, Parts: ledger(100, 100, 50), At: at},
		{SessionID: sess.ID, Agent: "review", PromptTokens: 70, At: at},
	} {
		if err := s.AddUsage(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.UsageRecords(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[2].Parts != nil {
		t.Fatalf("records: %+v", recs)
	}
	if diff := cmp.Diff(ledger(100, 100, 50), recs[1].Parts); diff != "" {
		t.Errorf("the second call's ledger (-want +got):\n%s", diff)
	}
	rows, err := s.Stats(ctx, store.StatsQuery{Project: "/p", GroupBy: store.GroupByPart})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.StatsRow{
		{Key: "system", Calls: 2, PromptTokens: 200, CachedTokens: 100},
		{Key: "tools", Calls: 0},
		{Key: "input", Calls: 2, PromptTokens: 80},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("stats by part (-want +got):\n%s", diff)
	}
}
