package actors

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// imageMCP is an MCP tool whose result carries an image.
type imageMCP struct{}

func (imageMCP) Info() tool.Info {
	return tool.Info{Name: "mcp__fx__shot", Class: tool.ClassMCP, ReadOnly: true, Description: "screenshot"}
}
func (imageMCP) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Result{Output: "[image: shot 2x2] follows", Images: []messages.Image{{Name: "shot", MIME: "image/png", Data: []byte("png"), Width: 2, Height: 2}}}, nil
}

// TestMCPToolListChangesReachTheNextRequest: a tool that appears mid-turn
// (tools/list_changed) is offered on the turn's next model request.
func TestMCPToolListChangesReachTheNextRequest(t *testing.T) {
	var changed atomic.Bool
	flip := tool.New[echoIn]("Flip", tool.ClassRead, "the server's tools change", func(context.Context, *tool.Env, echoIn) (tool.Result, error) {
		changed.Store(true)
		return tool.Result{Output: "flipped"}, nil
	})
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("Flip", map[string]any{"text": "x"})),
		llmtest.Reply("done"))
	h := newHarness(t, script, func(d *Deps) {
		d.Tools = d.Tools.With(flip)
		d.MCP = func() []tool.Tool {
			if changed.Load() {
				return []tool.Tool{imageMCP{}}
			}
			return nil
		}
	})
	h.sess.Submit("go", messages.ModeEdit)
	if res := h.turn(); res.Status != messages.TurnDone {
		t.Fatalf("turn = %+v", res)
	}
	reqs := h.client.RequestsFor("orchestrator")
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if slices.Contains(toolNames(reqs[0]), "mcp__fx__shot") || !slices.Contains(toolNames(reqs[1]), "mcp__fx__shot") {
		t.Errorf("tools: first %v, second %v; want the new tool on the second only", toolNames(reqs[0]), toolNames(reqs[1]))
	}
}

// TestImagesReachTheModel: the user's images go on the user message, an MCP
// tool's on its tool message; a model that takes no images gets a
// text-only request and refuses attached images without a model call.
func TestImagesReachTheModel(t *testing.T) {
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("mcp__fx__shot", map[string]any{})),
		llmtest.Reply("seen"))
	var noImages atomic.Bool
	h := newHarness(t, script, func(d *Deps) {
		d.MCP = func() []tool.Tool { return []tool.Tool{imageMCP{}} }
		inner := d.Models
		d.Models = ModelFunc(func(name string) (Model, error) {
			m, err := inner.Model(name)
			m.NoImages = noImages.Load()
			return m, err
		})
	})
	pic := messages.Image{Name: "a.png", MIME: "image/png", Data: []byte("user png"), Width: 1, Height: 1}
	h.sess.SubmitImages("look", messages.ModeEdit, []messages.Image{pic})
	if res := h.turn(); res.Status != messages.TurnDone {
		t.Fatalf("turn = %+v", res)
	}
	reqs := h.client.RequestsFor("orchestrator")
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	var user, tool *llm.Message
	for i, m := range reqs[1].Messages {
		switch m.Role {
		case llm.RoleUser:
			user = &reqs[1].Messages[i]
		case llm.RoleTool:
			tool = &reqs[1].Messages[i]
		}
	}
	if user == nil || len(user.Images) != 1 || string(user.Images[0].Data) != "user png" {
		t.Errorf("user message = %+v", user)
	}
	if tool == nil || len(tool.Images) != 1 || string(tool.Images[0].Data) != "png" || reqs[1].TextOnly {
		t.Errorf("tool message = %+v, text only %v", tool, reqs[1].TextOnly)
	}

	noImages.Store(true)
	h.sess.SubmitImages("and this", messages.ModeEdit, []messages.Image{pic})
	res := h.turn()
	if res.Status != messages.TurnFailed || !strings.Contains(res.Error, "does not take images") {
		t.Errorf("turn with images on a text-only model = %+v", res)
	}
	if n := len(h.client.RequestsFor("orchestrator")); n != 2 {
		t.Errorf("a refused turn called the model: %d requests", n)
	}
}
