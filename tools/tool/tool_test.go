package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type echoIn struct {
	Text string `json:"text"`
	Any  any    `json:"any,omitempty"`
}

func TestInputBounds(t *testing.T) {
	ran := false
	tl := New[echoIn]("Echo", ClassRead, "echo", func(ctx context.Context, env *Env, in echoIn) (Result, error) {
		ran = true
		return Result{Output: in.Text}, nil
	})
	big, _ := json.Marshal(echoIn{Text: strings.Repeat("x", MaxInputBytes)})
	deep := `{"text":"a","any":` + strings.Repeat("[", MaxInputDepth+1) + strings.Repeat("]", MaxInputDepth+1) + `}`
	// Brackets inside a string do not count as nesting.
	shallow := `{"text":"` + strings.Repeat("[", 500) + `\"]"}`
	for _, c := range []struct {
		name, input string
		wantErr     string
	}{
		{"oversized", string(big), "more than the 16 MiB"},
		{"too deep", deep, "levels deep"},
		{"brackets in a string", shallow, ""},
	} {
		ran = false
		res, err := tl.Run(t.Context(), &Env{}, json.RawMessage(c.input))
		if err != nil {
			t.Fatal(err)
		}
		if c.wantErr == "" {
			if res.IsError || !ran {
				t.Errorf("%s: %+v, want the handler to run", c.name, res.Output)
			}
			continue
		}
		if !res.IsError || !strings.Contains(res.Output, c.wantErr) || ran {
			t.Errorf("%s: error %v %q, handler ran %v; want a refusal before decoding", c.name, res.IsError, res.Output, ran)
		}
	}
}

type boundedIn struct {
	Count int      `json:"count,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

// The schema models see leaves out what tells them nothing (a minimum of
// 0, the null of an optional list), and the schema that validates still
// refuses a negative count and accepts the null.
func TestSchemaForModelDropsOnlyWhatValidationKeeps(t *testing.T) {
	tl := New[boundedIn]("Bounded", ClassRead, "bounded", func(_ context.Context, _ *Env, in boundedIn) (Result, error) {
		return Result{Output: "ran"}, nil
	}, WithSchema(func(s *jsonschema.Schema) {
		zero := 0.0
		s.Properties["count"].Minimum = &zero
	}))
	const want = `{"type":"object","properties":{"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`
	if got := string(tl.Info().Schema); got != want {
		t.Errorf("schema sent = %s\nwant %s", got, want)
	}
	for input, wantErr := range map[string]bool{`{"count":-1}`: true, `{"tags":null}`: false, `{"count":2}`: false} {
		res, err := tl.Run(t.Context(), &Env{}, json.RawMessage(input))
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != wantErr {
			t.Errorf("%s: error %v (%s), want %v", input, res.IsError, res.Output, wantErr)
		}
	}
}

// decode must give what encoding/json gives, values and errors alike: the
// model reads the errors, and the handlers the values.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	type in struct {
		Path  string   `json:"path"`
		Lines []int    `json:"lines,omitempty"`
		Limit *float64 `json:"limit"`
		Extra any      `json:"extra"`
	}
	inputs := []string{
		`{"path":"a.go","lines":[1,2],"limit":2.5,"extra":{"k":[true,null,"x"]}}`,
		`{"path":"a","path":"b"}`,           // duplicate names: the last wins
		`{"PATH":"case-insensitive match"}`, // encoding/json matches names without case
		"{\"path\":\"\xff\xfe bad utf-8\"}",
		`{"path":"\u003cb\u003e \u2028"}`,
		`{"lines":[1,2.5]}`,
		`{"path":3}`,
		`{"lines":"x"}`,
		`{"path":"a",}`,
		`{"path":"a"`,
		`[1,2]`,
		`nul`,
		`{"path":"a"} trailing`,
	}
	for _, raw := range inputs {
		var want, got in
		wantErr := json.Unmarshal([]byte(raw), &want)
		gotErr := decode([]byte(raw), &got)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Errorf("decode(%s) = %+v, %v; encoding/json: %+v, %v", raw, got, gotErr, want, wantErr)
		}
		var wantAny, gotAny any
		wantErr = json.Unmarshal([]byte(raw), &wantAny)
		gotErr = decode([]byte(raw), &gotAny)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(gotAny, wantAny) {
			t.Errorf("decode(%s) into any = %#v, %v; encoding/json: %#v, %v", raw, gotAny, gotErr, wantAny, wantErr)
		}
	}
}
