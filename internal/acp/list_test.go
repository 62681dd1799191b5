package acp

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ids are the IDs of ss, in order.
func ids(ss []StoredSession) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

// pageAll pages through all with size, returning every page's IDs.
func pageAll(t *testing.T, all []StoredSession, size int) [][]string {
	t.Helper()
	var pages [][]string
	var cursor *string
	for range len(all) + 2 {
		pg, next, err := listPageAfter(all, cursor, size)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, ids(pg))
		if next == nil {
			return pages
		}
		cursor = next
	}
	t.Fatalf("paging %d sessions by %d did not end", len(all), size)
	return nil
}

func TestListPagesCoverEverySessionOnce(t *testing.T) {
	base := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	// Newest first, as the store lists them; every three share an update
	// time, so page boundaries fall inside ties.
	var all []StoredSession
	for i := range 10 {
		all = append(all, StoredSession{ID: fmt.Sprintf("s%02d", i), UpdatedAt: base.Add(-time.Duration(i/3) * time.Second)})
	}
	for _, tc := range []struct {
		size int
		want [][]string
	}{
		{4, [][]string{{"s00", "s01", "s02", "s03"}, {"s04", "s05", "s06", "s07"}, {"s08", "s09"}}},
		{5, [][]string{{"s00", "s01", "s02", "s03", "s04"}, {"s05", "s06", "s07", "s08", "s09"}}},
		{10, [][]string{ids(all)}},
		{50, [][]string{ids(all)}},
	} {
		if diff := cmp.Diff(tc.want, pageAll(t, all, tc.size)); diff != "" {
			t.Errorf("pages of %d (-want +got):\n%s", tc.size, diff)
		}
	}
	if diff := cmp.Diff([][]string{{}}, pageAll(t, nil, 5)); diff != "" {
		t.Errorf("no sessions (-want +got):\n%s", diff)
	}
}

func TestListCursorSurvivesChangesBetweenPages(t *testing.T) {
	base := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	var all []StoredSession
	for i := range 6 {
		all = append(all, StoredSession{ID: fmt.Sprintf("s%d", i), UpdatedAt: base.Add(-time.Duration(i) * time.Second)})
	}
	first, next, err := listPageAfter(all, nil, 3)
	if err != nil || next == nil {
		t.Fatalf("first page: %v, next %v", err, next)
	}
	if diff := cmp.Diff([]string{"s0", "s1", "s2"}, ids(first)); diff != "" {
		t.Fatalf("first page (-want +got):\n%s", diff)
	}
	// A new session, and s4 updated: both move to the front. The next
	// page goes on after s2 and neither repeats s0..s2 nor loses s3 or s5.
	moved := append([]StoredSession{
		{ID: "s4", UpdatedAt: base.Add(2 * time.Second)},
		{ID: "new", UpdatedAt: base.Add(time.Second)},
	}, all[0], all[1], all[2], all[3], all[5])
	second, end, err := listPageAfter(moved, next, 3)
	if err != nil || end != nil {
		t.Fatalf("second page: %v, next %v", err, end)
	}
	if diff := cmp.Diff([]string{"s3", "s5"}, ids(second)); diff != "" {
		t.Errorf("second page after changes (-want +got):\n%s", diff)
	}
	// The cursor's own session updated since: the page goes on with the
	// first session older than it was.
	s2moved := append([]StoredSession{{ID: "s2", UpdatedAt: base.Add(time.Second)}}, all[0], all[1], all[3], all[4], all[5])
	second, _, err = listPageAfter(s2moved, next, 3)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s3", "s4", "s5"}, ids(second)); diff != "" {
		t.Errorf("second page after the cursor's session moved (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "not base64!", "bm90IGpzb24", "e30"} {
		if _, _, err := listPageAfter(all, &bad, 3); err == nil {
			t.Errorf("cursor %q was accepted", bad)
		}
	}
}
