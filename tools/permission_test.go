package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/tools/tool"
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

func (p *rulePermission) Authorize(_ context.Context, env *tool.Env, info tool.Info, input json.RawMessage) error {
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

func echoTool(runs *int) tool.Tool {
	return tool.New("Echo", tool.ClassWrite, "echo", func(ctx context.Context, env *tool.Env, in echoIn) (tool.Result, error) {
		*runs++
		return tool.Result{Output: in.Text}, nil
	})
}

func TestWithPermission(t *testing.T) {
	runs := 0
	p := &rulePermission{banned: "rm"}
	tl := WithPermission(p)(echoTool(&runs))
	env := &tool.Env{Mode: "edit"}
	if tl.Info().Name != "Echo" {
		t.Fatalf("decorator lost Info: %+v", tl.Info())
	}
	cases := []struct {
		input string
		want  tool.Result
	}{
		{`{"text":"ls"}`, tool.Result{Output: "ls"}},
		{`{"text":"rm"}`, tool.Result{Output: "refused by rule X: rm", IsError: true, Denied: true}},
	}
	for _, c := range cases {
		got, err := tl.Run(t.Context(), env, json.RawMessage(c.input))
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
	tl := WithPermission(&rulePermission{err: boom})(echoTool(&runs))
	_, err := tl.Run(t.Context(), &tool.Env{}, json.RawMessage(`{"text":"ls"}`))
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
