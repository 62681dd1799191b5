package actors

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
)

// The parent completes a received report without writing to it: the
// sender, or anyone the report was shown to, may still be reading it on
// another goroutine (run with -race: a write in place is a data race).
func TestCompletingAReportLeavesTheSentOneAlone(t *testing.T) {
	sent := &messages.Report{TaskID: "t1", Agent: "code", Status: messages.ReportOK, Files: []string{"/p/a.go"}}
	want := *sent
	want.Files = []string{"/p/a.go"}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the sender, still looking at what it sent
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = sent.Restarts + len(sent.SessionID)
			}
		}
	}()
	var got *messages.Report
	for range 100 {
		got = withRunFacts(sent, 2, "t1")
	}
	close(stop)
	wg.Wait()
	if diff := cmp.Diff(&want, sent); diff != "" {
		t.Errorf("the sent report changed (-before +after):\n%s", diff)
	}
	if got == sent || got.Restarts != 2 || got.SessionID != "t1" {
		t.Errorf("completed report = %+v (same pointer: %v)", got, got == sent)
	}
	if r := withRunFacts(&messages.Report{Restarts: 1, SessionID: "s"}, 2, "t1"); r.Restarts != 1 || r.SessionID != "s" {
		t.Errorf("facts the report already had were overwritten: %+v", r)
	}
}
