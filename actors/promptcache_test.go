package actors

import (
	"reflect"
	"strings"
	"testing"

	"github.com/odin-code/odin/prompts"
)

// Every field of prompts.Data but Agents is part of the cache key: a field
// added to Data without a place in promptKey would let two different
// prompts share one cache entry.
func TestPromptKeyCoversPromptData(t *testing.T) {
	key := map[string]bool{}
	kt := reflect.TypeFor[promptKey]()
	for i := range kt.NumField() {
		key[strings.ToLower(kt.Field(i).Name)] = true
	}
	dt := reflect.TypeFor[prompts.Data]()
	for i := range dt.NumField() {
		name := dt.Field(i).Name
		if name == "Agents" {
			continue
		}
		if !key[strings.ToLower(name)] {
			t.Errorf("prompts.Data.%s is not in promptKey", name)
		}
	}
}

// A cached prompt is served only for the same data: each field that
// differs renders anew.
func TestPromptCacheRendersChangedData(t *testing.T) {
	var pc promptCache
	base := prompts.Data{Root: "/p", Date: "2026-01-02", OS: "linux/amd64", Mode: "ask", AgentName: "search", Instructions: "Use tabs."}
	first, err := pc.render(prompts.Search, base)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := pc.render(prompts.Search, base)
	if again != first {
		t.Fatal("the same data rendered differently")
	}
	for _, tt := range []struct {
		name string
		edit func(*prompts.Data)
		want string
	}{
		{"date", func(d *prompts.Data) { d.Date = "2026-01-03" }, "2026-01-03"},
		{"root", func(d *prompts.Data) { d.Root = "/elsewhere" }, "/elsewhere"},
		{"instructions", func(d *prompts.Data) { d.Instructions = "Use spaces." }, "Use spaces."},
	} {
		d := base
		tt.edit(&d)
		got, err := pc.render(prompts.Search, d)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, tt.want) || strings.Contains(first, tt.want) {
			t.Errorf("%s changed: prompt does not say %q", tt.name, tt.want)
		}
		if want, _ := prompts.Render(prompts.Search, d); got != want {
			t.Errorf("%s changed: cached render differs from a fresh one", tt.name)
		}
	}
}
