package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
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
