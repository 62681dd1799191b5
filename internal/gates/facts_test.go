package gates

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

func TestDecide(t *testing.T) {
	q := config.Default().Quality
	cases := []struct {
		name     string
		facts    ChangeFacts
		required bool
		reasons  []string
	}{
		{"one low-risk file", ChangeFacts{Files: []string{"internal/price/price.go"}}, false, []string{}},
		{"no change", ChangeFacts{}, false, []string{}},
		{"two files", ChangeFacts{Files: []string{"a.go", "b.go"}}, true, []string{"multi-file change: 2 files changed"}},
		{"auth directory", ChangeFacts{Files: []string{"internal/auth/token.go"}}, true,
			[]string{"risk path: internal/auth/token.go matches **/*auth*/**"}},
		{"case-insensitive risk", ChangeFacts{Files: []string{"pkg/Payments/Refund.go"}}, true,
			[]string{"risk path: pkg/Payments/Refund.go matches **/*payment*/**"}},
		{"dotenv", ChangeFacts{Files: []string{".env.local"}}, true, []string{"risk path: .env.local matches **/.env*"}},
		{"secret in a file name", ChangeFacts{Files: []string{"config/secrets.yaml"}}, true,
			[]string{"risk path: config/secrets.yaml matches **/*secret*"}},
		{"authoring is not auth", ChangeFacts{Files: []string{"docs/guide.md"}}, false, []string{}},
		{"Go API change", ChangeFacts{Files: []string{"api/x.go"}, APIChanges: map[string][]string{"api/x.go": {"added Limiter"}}}, true,
			[]string{"public API change in api/x.go: added Limiter"}},
		{"proto file", ChangeFacts{Files: []string{"proto/user.proto"}}, true, []string{"public API file: proto/user.proto matches **/*.proto"}},
		{"the Orchestrator asks", ChangeFacts{Files: []string{"a.go"}, Requested: "subtle locking"}, true,
			[]string{"requested by the Orchestrator: subtle locking"}},
		{"every reason is kept", ChangeFacts{Files: []string{"auth/a.go", "b.go"}, Requested: "why not"}, true,
			[]string{"multi-file change: 2 files changed", "risk path: auth/a.go matches **/*auth*/**", "requested by the Orchestrator: why not"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.facts.Quality = q
			d := Decide(c.facts)
			if d.ReviewRequired != c.required || d.QARequired != c.required {
				t.Errorf("review %v qa %v, want %v", d.ReviewRequired, d.QARequired, c.required)
			}
			if diff := cmp.Diff(c.reasons, d.Reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGoAPIChanges(t *testing.T) {
	const before = `package shop

// Total sums.
func Total(p []int) int { return 0 }
func helper() {}

type Cart struct {
	Items []int
	owner string
}

func (c *Cart) Add(i int) {}
func (c *cart) ignored() {}

const Max = 10
var Debug bool
`
	cases := []struct {
		name    string
		after   string
		existed bool
		path    string
		want    []string
	}{
		{"body and comments only", `package shop

// Total sums all prices.
func Total(p []int) int { s := 0; for _, x := range p { s += x }; return s }
func helper() { println() }

type Cart struct {
	Items []int
	owner string
	cache map[int]int
}

func (c *Cart) Add(i int) { c.Items = append(c.Items, i) }

const Max = 10
var Debug bool
`, true, "shop/shop.go", nil},
		{"signature, field, removal, addition", `package shop

func Total(p []int, discount int) int { return 0 }

type Cart struct {
	Items []string
}

func (c *Cart) Add(i int) {}
func (c Cart) Len() int { return 0 }

const Max = 10
`, true, "shop/shop.go", []string{"added Cart.Len", "changed Cart", "changed Total", "removed Debug"}},
		{"new file", "package shop\n\nfunc New() {}\nfunc old() {}\n", false, "shop/new.go", []string{"added New"}},
		{"package main has no API", "package main\n\nfunc Exported() {}\n", false, "cmd/x/main.go", nil},
		{"test files have no API", "package shop\n\nfunc TestX() {}\n", false, "shop/x_test.go", nil},
		{"not Go", "anything", false, "README.md", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := GoAPIChanges(c.path, []byte(before), []byte(c.after), c.existed)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBlockingIssues(t *testing.T) {
	cases := []struct {
		name   string
		review messages.ReviewResult
		want   []string // messages of the blocking issues
	}{
		{"critical and major block, minor and info do not", messages.ReviewResult{Approved: true, Issues: []messages.ReviewIssue{
			{Severity: "critical", Message: "a"}, {Severity: "Major", Message: "b"}, {Severity: "minor", Message: "c"}, {Severity: "info", Message: "d"},
		}}, []string{"a", "b"}},
		{"approved with minor notes passes", messages.ReviewResult{Approved: true, Issues: []messages.ReviewIssue{{Severity: "minor", Message: "c"}}}, nil},
		{"an unknown severity blocks", messages.ReviewResult{Approved: true, Issues: []messages.ReviewIssue{{Severity: "high", Message: "h"}}}, []string{"h"}},
		{"an empty severity blocks", messages.ReviewResult{Approved: true, Issues: []messages.ReviewIssue{{Message: "e"}}}, []string{"e"}},
		{"a rejection without blocking issues blocks", messages.ReviewResult{Approved: false, Summary: "REJECT: severe security hole",
			Issues: []messages.ReviewIssue{{Severity: "minor", Message: "c"}}},
			[]string{"the review did not approve the change: REJECT: severe security hole"}},
		{"a rejection with no issues at all blocks", messages.ReviewResult{Approved: false}, []string{"the review did not approve the change: no reason given"}},
		{"a rejection with blocking issues lists them only", messages.ReviewResult{Approved: false, Summary: "no",
			Issues: []messages.ReviewIssue{{Severity: "major", Message: "b"}}}, []string{"b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, is := range BlockingIssues(c.review) {
				got = append(got, is.Message)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("blocking (-want +got):\n%s", diff)
			}
		})
	}
}
