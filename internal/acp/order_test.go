package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// fakeSession is a Session whose turns the test ends by publishing on its
// bus; submitted inputs arrive on submitted.
type fakeSession struct {
	bus       *events.Bus
	submitted chan messages.UserMessage
	mu        sync.Mutex
	n         int
}

func newFakeSession() *fakeSession {
	return &fakeSession{bus: events.New("s1", nil), submitted: make(chan messages.UserMessage, 16)}
}

func (f *fakeSession) ID() string { return "s1" }
func (f *fakeSession) SubmitImages(body string, mode messages.Mode, _ []messages.Image) messages.UserMessage {
	f.mu.Lock()
	f.n++
	m := messages.UserMessage{ID: fmt.Sprintf("in-%d", f.n), Body: body, Mode: mode}
	f.mu.Unlock()
	f.submitted <- m
	return m
}
func (f *fakeSession) Cancel(string) {}
func (f *fakeSession) Queue(context.Context) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}
func (f *fakeSession) Remove(context.Context, string) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}
func (f *fakeSession) SetMode(context.Context, messages.Mode) error { return nil }
func (f *fakeSession) Bus() *events.Bus                             { return f.bus }
func (f *fakeSession) Answer(string, policy.Decision) error         { return nil }
func (f *fakeSession) Commands() []Command                          { return nil }
func (f *fakeSession) Compact(context.Context) (string, error)      { return "", nil }
func (f *fakeSession) Title(context.Context) (string, error)        { return "", nil }
func (f *fakeSession) ContextWindow() int                           { return 0 }
func (f *fakeSession) Models() (string, []string)                   { return "", nil }
func (f *fakeSession) SetModel(context.Context, string) error       { return nil }
func (f *fakeSession) Close(context.Context) error                  { return nil }

type fakeOpener struct{ s *fakeSession }

func (o fakeOpener) New(context.Context, string, OpenOptions) (Session, error) { return o.s, nil }
func (o fakeOpener) Load(context.Context, string, string, OpenOptions) (Session, Loaded, error) {
	return nil, Loaded{}, fmt.Errorf("no")
}
func (o fakeOpener) List(context.Context, string) ([]StoredSession, error) { return nil, nil }

// quietClient is an editor that takes every update and asks nothing.
type quietClient struct{}

func (quietClient) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }
func (quietClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{}, nil
}
func (quietClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, nil
}
func (quietClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, nil
}
func (quietClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, nil
}
func (quietClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, nil
}
func (quietClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, nil
}
func (quietClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, nil
}
func (quietClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, nil
}

// TestNextTurnWaitsForThePreviousResponse: the Orchestrator starts a queued
// turn the moment the previous one finished, and here that turn's first
// update is published at once, before the previous prompt's handler has
// even returned. It must still reach the client after that prompt's
// response, 20 times over.
func TestNextTurnWaitsForThePreviousResponse(t *testing.T) {
	const rounds = 20
	fs := newFakeSession()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, Options{Opener: fakeOpener{fs}}, agentIn, agentOut) }()

	// Record the agent's messages in the order it wrote them.
	var mu sync.Mutex
	var got []string
	tapR, tapW := io.Pipe()
	go func() {
		sc := bufio.NewScanner(clientIn)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID     *json.RawMessage `json:"id"`
				Method string           `json:"method"`
				Params struct {
					Update struct {
						Content struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"update"`
				} `json:"params"`
				Result struct {
					StopReason string `json:"stopReason"`
				} `json:"result"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				mu.Lock()
				switch {
				case m.Method == "session/update" && m.Params.Update.Content.Text != "":
					got = append(got, "update "+m.Params.Update.Content.Text)
				case m.Method == "" && m.Result.StopReason != "":
					got = append(got, "response "+m.Result.StopReason)
				}
				mu.Unlock()
			}
			if _, err := tapW.Write(append(sc.Bytes(), '\n')); err != nil {
				return
			}
		}
		tapW.Close()
	}()
	conn := sdk.NewClientSideConnection(quietClient{}, clientOut, tapR)
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	ns, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for r := range rounds {
		answered := make(chan error, 1)
		go func() {
			_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(fmt.Sprintf("q%d", r))}})
			answered <- err
		}()
		in := <-fs.submitted
		fs.bus.Publish(messages.TurnFinished{Result: messages.TurnResult{Input: in, Status: messages.TurnDone}})
		// The next turn, already running.
		fs.bus.Publish(messages.TextDelta{Text: fmt.Sprintf("next turn %d", r)})
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
		want = append(want, "response end_turn", fmt.Sprintf("update next turn %d", r))
	}
	// The last update may still be on its way.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("on the wire:\n%q\nwant:\n%q", got, want)
	}
	clientOut.Close()
	if err := <-served; err != nil {
		t.Error(err)
	}
}
