package odinmd

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/messages"
)

// Budget is the token budget of ODIN.md.
var Budget = messages.TokenBudget{Target: 3600, HardCap: 4800}

// TargetMin is the lower end of the target range.
const TargetMin = 2500

// Order is the canonical order of sections (seed 004); Required marks the
// ones every ODIN.md must have.
var Order = []string{
	"Objective", "Stack", "Main Dependencies", "Architecture", "Design Patterns", "Practices", "Commands",
	"Endpoints", "Project Core", "Sensitive Points", "Environment Variables", "External Integrations",
	"Troubleshooting", "Snippets", "TREE", "References",
}

// Required are the sections that must be present.
var Required = []string{
	"Objective", "Stack", "Main Dependencies", "Architecture", "Design Patterns", "Practices", "Commands",
	"Project Core", "Sensitive Points", "TREE", "References",
}

// optional sections are dropped first when the document is over the cap.
var optional = []string{"Snippets", "Troubleshooting", "External Integrations", "Environment Variables", "Endpoints"}

var (
	beginRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<!-- odin:begin section="([^"]+)" -->$`) })
	endLine = "<!-- odin:end -->"
)

// Tokens estimates the tokens of text, as the budget counts them.
func Tokens(s string) int { return int(llm.EstimateTokens(s)) }

// block is a piece of a document: hand-written text or a generated section.
type block struct {
	name string // empty for hand-written text
	text string // for a section: its body (heading included)
}

// parse splits a document into hand-written text and generated sections.
// An unterminated section is treated as hand-written, so nothing the user
// wrote can be lost.
func parse(doc string) []block {
	lines := strings.SplitAfter(doc, "\n")
	var out []block
	var hand strings.Builder
	for i := 0; i < len(lines); i++ {
		m := beginRe().FindStringSubmatch(strings.TrimRight(lines[i], "\r\n"))
		if m == nil {
			hand.WriteString(lines[i])
			continue
		}
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimRight(lines[j], "\r\n") == endLine {
				end = j
				break
			}
		}
		if end < 0 {
			hand.WriteString(lines[i])
			continue
		}
		if hand.Len() > 0 {
			out = append(out, block{text: hand.String()})
			hand.Reset()
		}
		out = append(out, block{name: m[1], text: strings.Join(lines[i+1:end], "")})
		i = end
	}
	if hand.Len() > 0 {
		out = append(out, block{text: hand.String()})
	}
	return out
}

func render(blocks []block) string {
	var b strings.Builder
	for _, bl := range blocks {
		if bl.name == "" {
			b.WriteString(bl.text)
			continue
		}
		fmt.Fprintf(&b, "<!-- odin:begin section=%q -->\n%s", bl.name, bl.text)
		if !strings.HasSuffix(bl.text, "\n") {
			b.WriteString("\n")
		}
		b.WriteString(endLine + "\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func sectionBody(s messages.InitSection) string {
	return "## " + s.Name + "\n\n" + strings.TrimSpace(s.Content) + "\n"
}

// Result is an assembled document.
type Result struct {
	Doc      string
	Mode     string // create or update
	Tokens   int
	Sections []messages.InitSection
	Changes  []string
	Warnings []string
}

// canonical maps a section name to its canonical spelling.
func canonical(name string) string {
	n := strings.TrimSpace(strings.TrimLeft(name, "# "))
	for _, c := range Order {
		if strings.EqualFold(c, n) || strings.EqualFold(strings.ReplaceAll(c, " ", ""), strings.ReplaceAll(n, " ", "")) {
			return c
		}
	}
	if strings.HasPrefix(strings.ToLower(n), "practices") {
		return "Practices"
	}
	if strings.EqualFold(n, "tree") || strings.EqualFold(n, "directory structure") {
		return "TREE"
	}
	return n
}

// Assemble merges generated sections into an existing document (empty for
// a new one). Generated sections are replaced by name in place; new ones
// follow the last generated section in canonical order; hand-written text
// is kept byte for byte. The result is compacted if over the hard cap.
func Assemble(existing string, generated []messages.InitSection) Result {
	res := Result{Mode: "create"}
	blocks := parse(existing)
	hasGenerated := false
	for _, b := range blocks {
		if b.name != "" {
			hasGenerated = true
		}
	}
	if strings.TrimSpace(existing) != "" {
		res.Mode = "update"
	}
	byName := map[string]messages.InitSection{}
	var names []string
	for _, s := range generated {
		s.Name = canonical(s.Name)
		if strings.TrimSpace(s.Content) == "" {
			continue
		}
		if _, dup := byName[s.Name]; !dup {
			names = append(names, s.Name)
		}
		byName[s.Name] = s
	}
	for _, r := range Required {
		if _, ok := byName[r]; !ok {
			res.Warnings = append(res.Warnings, "required section missing: "+r)
		}
	}
	placed := map[string]bool{}
	lastGen := -1
	for i, b := range blocks {
		if b.name == "" {
			continue
		}
		lastGen = i
		s, ok := byName[b.name]
		if !ok {
			continue // kept as it was: the agent did not regenerate it
		}
		body := sectionBody(s)
		if body != b.text {
			res.Changes = append(res.Changes, "updated "+b.name)
		}
		blocks[i].text = body
		placed[b.name] = true
	}
	// Each new section is preceded by a blank line, kept as hand-written
	// text, so that parsing the result again gives the same blocks.
	var fresh []block
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	for _, n := range names {
		if placed[n] {
			continue
		}
		fresh = append(fresh, block{text: "\n"}, block{name: n, text: sectionBody(byName[n])})
		res.Changes = append(res.Changes, "added "+n)
	}
	switch {
	case !hasGenerated && strings.TrimSpace(existing) == "":
		blocks = append([]block{{text: "# ODIN.md\n\nProject context for coding agents, generated by `odin init`. Sections between odin markers are regenerated; write your own notes outside them and they are kept.\n"}}, fresh...)
	case lastGen < 0:
		blocks = append(blocks, fresh...)
	default:
		blocks = slices.Insert(blocks, lastGen+1, fresh...)
	}
	res.Doc = render(blocks)
	res.Doc, res.Warnings = compact(res.Doc, res.Warnings)
	res.Tokens = Tokens(res.Doc)
	for _, b := range parse(res.Doc) {
		if b.name == "" {
			continue
		}
		s := byName[b.name]
		s.Name = b.name
		if s.Source == "" {
			s.Source = "manual"
		}
		s.TokenCount = Tokens(b.text)
		res.Sections = append(res.Sections, s)
	}
	switch {
	case res.Tokens > Budget.HardCap:
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d tokens, over the hard cap of %d even after compaction", res.Tokens, Budget.HardCap))
	case res.Tokens > Budget.Target:
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d tokens: near the limit (target %d-%d, cap %d)", res.Tokens, TargetMin, Budget.Target, Budget.HardCap))
	}
	return res
}

func rank(name string) int {
	if i := slices.Index(Order, name); i >= 0 {
		return i
	}
	return len(Order) - 1 // unknown sections go before References
}

// compact brings a document over the hard cap down: optional generated
// sections go first, then the TREE is shortened, then the longest
// generated sections are cut. Hand-written text is never touched.
func compact(doc string, warnings []string) (string, []string) {
	if Tokens(doc) <= Budget.HardCap {
		return doc, warnings
	}
	blocks := parse(doc)
	for _, name := range optional {
		if Tokens(render(blocks)) <= Budget.HardCap {
			break
		}
		for i, b := range blocks {
			if b.name == name {
				blocks = slices.Delete(blocks, i, i+1)
				warnings = append(warnings, "dropped optional section "+name+" to fit the budget")
				break
			}
		}
	}
	for i, b := range blocks {
		if b.name == "TREE" && Tokens(render(blocks)) > Budget.HardCap {
			lines := strings.Split(b.text, "\n")
			if len(lines) > 40 {
				blocks[i].text = strings.Join(lines[:40], "\n") + "\n… (tree shortened)\n```\n"
				warnings = append(warnings, "shortened the TREE to fit the budget")
			}
		}
	}
	for Tokens(render(blocks)) > Budget.HardCap {
		longest, size := -1, 0
		for i, b := range blocks {
			if b.name != "" && Tokens(b.text) > size {
				longest, size = i, Tokens(b.text)
			}
		}
		if longest < 0 || size < 80 {
			break
		}
		text := blocks[longest].text
		blocks[longest].text = text[:len(text)*3/4] + "\n… (cut to fit the budget)\n"
		warnings = append(warnings, "cut section "+blocks[longest].name+" to fit the budget")
	}
	return render(blocks), warnings
}
