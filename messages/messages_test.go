package messages

import (
	"encoding/json"
	"testing"
	"time"
)

func TestEnvelopeJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got, err := json.Marshal(Envelope{Session: "s1", Time: at, Event: ToolStarted{Origin: Origin{Agent: "code", TaskID: "t1"}, CallID: "c", Name: "LS", Input: `{"path":"/x"}`}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"tool_started","session":"s1","time":"2026-01-02T03:04:05Z","agent":"code","task_id":"t1","call_id":"c","name":"LS","input":"{\"path\":\"/x\"}"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	empty, _ := json.Marshal(Envelope{Time: at, Event: InputRemoved{}})
	if string(empty) != `{"type":"input_removed","time":"2026-01-02T03:04:05Z","id":""}` {
		t.Errorf("empty event: %s", empty)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"ask": ModeAsk, "plan_mode": ModePlan, "edit": ModeEdit} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseMode("write"); err == nil {
		t.Error("unknown mode accepted")
	}
	if !ModeAsk.ReadOnly() || !ModePlan.ReadOnly() || ModeEdit.ReadOnly() {
		t.Error("ReadOnly is wrong")
	}
}

func TestUsageAdd(t *testing.T) {
	a := Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3, Cost: 0.5}
	b := Usage{PromptTokens: 10, CachedTokens: 4, TotalTokens: 10, Cost: 0.25, Estimated: true}
	got := a.Add(b)
	if got.PromptTokens != 11 || got.CompletionTokens != 2 || got.CachedTokens != 4 || got.TotalTokens != 13 || got.Cost != 0.75 || !got.Estimated {
		t.Errorf("Add = %+v", got)
	}
}
