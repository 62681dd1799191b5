package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rulePermission refuses calls whose input mentions a banned word, fails
// with err when set, and records what it saw.
type rulePermission struct {
	banned string
	err    error
	seen   []string
}

type denial string

func (d denial) Error() string { return string(d) }
func (d denial) Denied() bool  { return true }

func (p *rulePermission) Authorize(_ context.Context, env *Env, info Info, input json.RawMessage) error {
	p.seen = append(p.seen, info.Name+" "+env.Mode+" "+string(input))
	if p.err != nil {
		return p.err
	}
	var in struct{ Text string }
	_ = json.Unmarshal(input, &in)
	if in.Text == p.banned {
		return denial("refused by rule X: " + in.Text)
	}
	return nil
}

type echoIn struct {
	Text string `json:"text"`
}

func echoTool(runs *int) Tool {
	return New("Echo", ClassWrite, "echo", func(ctx context.Context, env *Env, in echoIn) (Result, error) {
		*runs++
		return Result{Output: in.Text}, nil
	})
}

func TestWithPermission(t *testing.T) {
	runs := 0
	p := &rulePermission{banned: "rm"}
	tool := WithPermission(p)(echoTool(&runs))
	env := &Env{Mode: "edit"}
	if tool.Info().Name != "Echo" {
		t.Fatalf("decorator lost Info: %+v", tool.Info())
	}
	cases := []struct {
		input string
		want  Result
	}{
		{`{"text":"ls"}`, Result{Output: "ls"}},
		{`{"text":"rm"}`, Result{Output: "refused by rule X: rm", IsError: true, Denied: true}},
	}
	for _, c := range cases {
		got, err := tool.Run(t.Context(), env, json.RawMessage(c.input))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.input, diff)
		}
	}
	if runs != 1 {
		t.Errorf("tool ran %d times, want 1 (the denied call must not run)", runs)
	}
	if diff := cmp.Diff([]string{`Echo edit {"text":"ls"}`, `Echo edit {"text":"rm"}`}, p.seen); diff != "" {
		t.Errorf("permission saw (-want +got):\n%s", diff)
	}
}

func TestWithPermissionPropagatesFailures(t *testing.T) {
	runs := 0
	boom := errors.New("approver gone")
	tool := WithPermission(&rulePermission{err: boom})(echoTool(&runs))
	_, err := tool.Run(t.Context(), &Env{}, json.RawMessage(`{"text":"ls"}`))
	if !errors.Is(err, boom) || runs != 0 {
		t.Fatalf("err %v runs %d; want the permission's error and no run", err, runs)
	}
}

func TestWithPermissionNilPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("WithPermission(nil) did not panic")
		}
	}()
	WithPermission(nil)
}
