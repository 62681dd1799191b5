package repomap

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGoDefinitionsAndReferences(t *testing.T) {
	src := `package p

import (
	"errors"
	yaml "go.yaml.in/yaml/v3"
)

type Handler interface {
	ServeHTTP(w Writer, r *Request)
	Writer
}

type List[T any] struct{ items []T }

func (l *List[T]) Push(v T) { l.items = append(l.items, v) }

func New(h Handler) (*List[int], error) {
	_ = yaml.Marshal
	if h == nil {
		return nil, errors.New("no handler")
	}
	h.ServeHTTP(nil, nil)
	return &List[int]{}, nil
}

const Answer = 42

var (
	ErrNone error
	_       = 1
)
`
	defs, refs, err := parseGo([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range defs {
		got = append(got, d.Kind+" "+d.Parent+"."+d.Name+" | "+d.Sig)
	}
	want := []string{
		"type .Handler | type Handler interface",
		"method Handler.ServeHTTP | ServeHTTP(w Writer, r *Request)",
		"type .List | type List[T any] struct",
		"method List.Push | func (l *List[T]) Push(v T)",
		"func .New | func New(h Handler) (*List[int], error)",
		"const .Answer | const Answer",
		"var .ErrNone | var ErrNone error",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("definitions (-want +got):\n%s", diff)
	}
	for ref, n := range map[string]int{
		"Handler": 1, "List": 3, ".ServeHTTP": 1, "errors.New": 1, "yaml.Marshal": 1, "Writer": 2, ".items": 2, "append": 1,
	} {
		if refs[ref] != n {
			t.Errorf("refs[%q] = %d, want %d", ref, refs[ref], n)
		}
	}
	for _, not := range []string{"New", ".New", "errors", "yaml", "Push", "ErrNone"} {
		if refs[not] != 0 {
			t.Errorf("refs[%q] = %d, want 0 (a definition or a package name is no use of a definition)", not, refs[not])
		}
	}
}

func TestGoSyntaxErrorKeepsWhatWasRecovered(t *testing.T) {
	defs, _, err := parseGo([]byte("package p\n\nfunc Good() {}\n\nfunc Bad( {\n"))
	if err == nil {
		t.Fatal("no error for broken Go")
	}
	if len(defs) == 0 || defs[0].Name != "Good" {
		t.Errorf("defs = %+v, want Good kept", defs)
	}
}
