package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// WithCommandCheckpoint brackets a command with the Env's BeforeCommand:
// the snapshot is taken before the command runs and what it changed is
// recorded after it, in edit mode; ask mode, read-only agents and other
// tool classes are not bracketed; a snapshot that fails stops the command
// and a record that fails is reported, not hidden.
func TestWithCommandCheckpoint(t *testing.T) {
	type call struct{ before, after int }
	run := func(t *testing.T, mode string, readOnly bool, beforeErr, afterErr error) (tool.Result, call, *tool.Env, error) {
		env := newRootEnv(t)
		env.Mode, env.ReadOnlyCommands = mode, readOnly
		var c call
		var notices []string
		env.Publish = func(ev any) {
			if n, ok := ev.(messages.Notice); ok {
				notices = append(notices, n.Text)
			}
		}
		env.BeforeCommand = func(_ context.Context, root string) (func(context.Context) ([]string, error), error) {
			if root != env.Root {
				t.Errorf("BeforeCommand root %q, want %q", root, env.Root)
			}
			c.before++
			if _, err := os.Stat(filepath.Join(root, "made.txt")); err == nil {
				t.Error("the snapshot was taken after the command ran")
			}
			return func(context.Context) ([]string, error) {
				c.after++
				if _, err := os.Stat(filepath.Join(root, "made.txt")); err != nil && mode != "ask" {
					t.Errorf("the record ran before the command: %v", err)
				}
				return []string{filepath.Join(root, "made.txt")}, afterErr
			}, beforeErr
		}
		raw, _ := json.Marshal(ExecuteCommandInput{Command: "echo x > made.txt"})
		res, err := WithCommandCheckpoint(NewExecuteCommand(ExecuteCommandOptions{})).Run(t.Context(), env, raw)
		if len(notices) > 0 {
			res.Output += "\nNOTICE: " + strings.Join(notices, "; ")
		}
		return res, c, env, err
	}

	t.Run("edit mode", func(t *testing.T) {
		res, c, env, err := run(t, "edit", false, nil, nil)
		if err != nil || res.IsError || c != (call{1, 1}) {
			t.Fatalf("res %+v, err %v, calls %+v; want one snapshot and one record", res, err, c)
		}
		// The files the record found are the call's, as a write tool's.
		if want := filepath.Join(env.Root, "made.txt"); len(res.Files) != 1 || res.Files[0] != want {
			t.Errorf("Files = %v, want [%s]", res.Files, want)
		}
	})
	t.Run("ask mode and read-only agents are not bracketed", func(t *testing.T) {
		for _, tc := range []struct {
			mode     string
			readOnly bool
		}{{"ask", false}, {"plan", false}, {"edit", true}} {
			if _, c, _, _ := run(t, tc.mode, tc.readOnly, nil, nil); c != (call{}) {
				t.Errorf("%s (read-only %v): calls %+v, want none", tc.mode, tc.readOnly, c)
			}
		}
	})
	t.Run("a failed snapshot stops the command", func(t *testing.T) {
		_, c, env, err := run(t, "edit", false, errors.New("disk full"), nil)
		if err == nil || !strings.Contains(err.Error(), "disk full") || c.after != 0 {
			t.Fatalf("err %v, calls %+v; want the snapshot's error and no record", err, c)
		}
		if _, serr := os.Stat(filepath.Join(env.Root, "made.txt")); serr == nil {
			t.Fatal("the command ran without its snapshot")
		}
	})
	t.Run("a failed record is reported", func(t *testing.T) {
		res, _, _, err := run(t, "edit", false, nil, errors.New("store fenced"))
		if err != nil || !strings.Contains(res.Output, "undo will not restore it: store fenced") || !strings.Contains(res.Output, "NOTICE: odin: could not record") {
			t.Fatalf("res %q, err %v; want the output and a notice to say undo will not cover the command", res.Output, err)
		}
	})
	t.Run("other classes are returned as they are", func(t *testing.T) {
		rf := NewReadFile()
		if got := WithCommandCheckpoint(rf); got != rf {
			t.Errorf("ReadFile was wrapped")
		}
	})
}
