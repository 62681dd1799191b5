package tools

import (
	"context"
	"encoding/json"
	"github.com/odin-code/odin/tools/tool"
	"os"
	"path/filepath"
	"testing"
)

func TestThinkChangesNothing(t *testing.T) {
	root := t.TempDir()
	before, _ := os.ReadDir(root)
	res, err := NewThink().Run(context.Background(), &tool.Env{Root: root}, json.RawMessage(`{"thought":"write /etc/x? no: I only reason here"}`))
	if err != nil || res.IsError || res.Output != "Thought recorded." || len(res.Files) != 0 || res.Meta != nil {
		t.Fatalf("Think = %+v, %v", res, err)
	}
	after, _ := os.ReadDir(root)
	if len(before) != len(after) {
		t.Errorf("Think changed %s", filepath.Base(root))
	}
	if info := NewThink().Info(); info.Class != tool.ClassRead {
		t.Errorf("Think class = %v, want read (no side effects, allowed in ask and plan)", info.Class)
	}
}

func TestThinkRejectsABlankThought(t *testing.T) {
	for _, in := range []string{`{"thought":""}`, `{"thought":"   "}`, `{}`} {
		res, err := NewThink().Run(context.Background(), &tool.Env{}, json.RawMessage(in))
		if err != nil || !res.IsError {
			t.Errorf("Think(%s) = %+v, %v; want a tool error", in, res, err)
		}
	}
}
