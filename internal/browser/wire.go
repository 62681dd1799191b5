package browser

import (
	"net/http"

	"github.com/odin-code/odin/internal/helperproc"
)

// Msg is one line of the protocol between Odin and odin-browser, one JSON
// object per line each way. Odin sends "do" (a command) and answers
// "http" with "http_resp"; odin-browser sends "http" (a request of the
// page, which Odin makes or refuses) and "result".
type Msg struct {
	helperproc.Line

	// do
	Command *Command `json:"command,omitempty"`

	// http and http_resp
	Method string      `json:"method,omitempty"`
	URL    string      `json:"url,omitempty"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body,omitempty"`
	Status int         `json:"status,omitempty"`

	// result
	Result *Result `json:"result,omitempty"`

	// http_resp and result: what went wrong.
	Err string `json:"error,omitempty"`
}

// Protocol operations.
const (
	OpDo       = "do"
	OpHTTP     = "http"
	OpHTTPResp = "http_resp"
	OpResult   = "result"
)

// ops are the operations as helperproc's kinds of line.
var ops = helperproc.Ops{helperproc.KindCall: OpDo, helperproc.KindResult: OpResult,
	helperproc.KindRequest: OpHTTP, helperproc.KindResponse: OpHTTPResp}

// Route implements helperproc.Message.
func (m Msg) Route() helperproc.Route { return ops.Route(m.Line) }

// Routed implements helperproc.Message.
func (m Msg) Routed(r helperproc.Route) Msg { m.Line = ops.Line(r); return m }

// Command is one WebBrowser action.
type Command struct {
	// Action is one of the Action constants.
	Action string `json:"action"`
	// Chromium is the browser program, started on the first command.
	Chromium   string `json:"chromium,omitempty"`
	URL        string `json:"url,omitempty"`
	Ref        int    `json:"ref,omitempty"`
	Selector   string `json:"selector,omitempty"`
	Text       string `json:"text,omitempty"`
	Expression string `json:"expression,omitempty"`
	// TimeoutMS bounds the command in the browser.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// Actions.
const (
	ActionNavigate   = "navigate"
	ActionRead       = "read"
	ActionClick      = "click"
	ActionType       = "type"
	ActionSelect     = "select"
	ActionWait       = "wait"
	ActionEvaluate   = "evaluate"
	ActionScreenshot = "screenshot"
)

// Result is what a command produced.
type Result struct {
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	// Markdown is the page as read (navigate, read, click, type, select).
	Markdown string `json:"markdown,omitempty"`
	// Value is an evaluated expression's value, as JSON.
	Value string `json:"value,omitempty"`
	// PNG is a screenshot of the viewport.
	PNG    []byte `json:"png,omitempty"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	// StartMS is how long Chromium took to start, on the command that
	// started it.
	StartMS int64 `json:"start_ms,omitempty"`
	// Refused are what odin-browser itself refused the page during the
	// command: WebSockets (not routed through Odin) and pop-ups (closed).
	Refused []string `json:"refused,omitempty"`
	// Blocked are the page's requests Odin refused since the last
	// command (filled in by Odin), then Refused.
	Blocked []string `json:"-"`
}
