package odinmd

import (
	"strings"
	"testing"

	"github.com/odin-code/odin/messages"
)

func sections(content string, names ...string) []messages.InitSection {
	var out []messages.InitSection
	for _, n := range names {
		out = append(out, messages.InitSection{Name: n, Content: content + " " + n, Source: "inferred", Confidence: 0.8})
	}
	return out
}

func TestCreateThenUpdateKeepsHandWrittenText(t *testing.T) {
	first := Assemble("", sections("v1", Required...))
	if first.Mode != "create" || len(first.Warnings) != 0 {
		t.Fatalf("create: mode %s, warnings %v", first.Mode, first.Warnings)
	}
	if strings.Index(first.Doc, "## Objective") > strings.Index(first.Doc, "## TREE") {
		t.Errorf("sections not in canonical order")
	}
	hand := "\n## Team notes\n\nDeploys happen on Tuesdays.\r\nDo not touch `legacy/`.\n"
	doc := first.Doc + hand
	second := Assemble(doc, append(sections("v2", "Objective", "Commands"), messages.InitSection{Name: "endpoints", Content: "GET /health"}))
	if second.Mode != "update" {
		t.Errorf("mode = %s", second.Mode)
	}
	if !strings.Contains(second.Doc, hand) {
		t.Errorf("hand-written section changed:\n%s", second.Doc)
	}
	if !strings.Contains(second.Doc, "v2 Objective") || strings.Contains(second.Doc, "v1 Objective") {
		t.Errorf("Objective not regenerated")
	}
	if !strings.Contains(second.Doc, "v1 Stack") {
		t.Errorf("sections the agent did not regenerate were lost")
	}
	if !strings.Contains(second.Doc, "## Endpoints\n\nGET /health") {
		t.Errorf("new section not added:\n%s", second.Doc)
	}
	want := []string{"updated Objective", "updated Commands", "added Endpoints"}
	if strings.Join(second.Changes, ",") != strings.Join(want, ",") {
		t.Errorf("changes = %v", second.Changes)
	}
	third := Assemble(second.Doc, sections("v2", "Objective", "Commands"))
	if third.Doc != second.Doc || len(third.Changes) != 0 {
		t.Errorf("regenerating the same content changed the document: %v", third.Changes)
	}
}

func TestMissingRequiredSectionsAreReported(t *testing.T) {
	r := Assemble("", sections("x", "Objective"))
	if len(r.Warnings) != len(Required)-1 || !strings.Contains(r.Warnings[0], "required section missing") {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

func TestUnterminatedMarkerIsHandWritten(t *testing.T) {
	doc := "intro\n<!-- odin:begin section=\"Objective\" -->\nmine, no end marker\n"
	r := Assemble(doc, sections("gen", "Objective"))
	if !strings.HasPrefix(r.Doc, doc) {
		t.Errorf("text after an unterminated marker was not kept:\n%s", r.Doc)
	}
}

func TestBudgetCompaction(t *testing.T) {
	big := strings.Repeat("word ", 1500) // ~1900 tokens each
	var secs []messages.InitSection
	for _, n := range []string{"Objective", "Architecture", "Troubleshooting", "Snippets", "TREE"} {
		secs = append(secs, messages.InitSection{Name: n, Content: big})
	}
	hand := "## Mine\n" + strings.Repeat("keep ", 50) + "\n"
	r := Assemble(hand, secs)
	if r.Tokens > Budget.HardCap {
		t.Errorf("tokens = %d, over the cap %d", r.Tokens, Budget.HardCap)
	}
	if !strings.Contains(r.Doc, hand) {
		t.Errorf("compaction touched hand-written text")
	}
	if strings.Contains(r.Doc, "## Snippets") {
		t.Errorf("optional section kept while over budget")
	}
	var sum int
	for _, s := range r.Sections {
		sum += s.TokenCount
	}
	if sum == 0 || sum > r.Tokens {
		t.Errorf("section token counts %d vs document %d", sum, r.Tokens)
	}
}
