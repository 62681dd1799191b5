package helperproc

// Kind is what a line of a helper protocol does.
type Kind int

// Kinds of line.
const (
	// KindUnknown is a line the protocol does not know; it ends the
	// helper's side.
	KindUnknown Kind = iota
	// KindCall (Odin → helper) starts call Route.Call.
	KindCall
	// KindCancel (Odin → helper) ends call Route.Call early.
	KindCancel
	// KindResult (helper → Odin) is call Route.Call's answer; it ends the
	// call.
	KindResult
	// KindRequest (helper → Odin) asks Odin to do something for the
	// helper (make an HTTP request): request Route.Req, made for call
	// Route.Call, or for no call when that is 0.
	KindRequest
	// KindResponse (Odin → helper) answers request Route.Req.
	KindResponse
)

// Route is what a line is and the IDs that route it.
type Route struct {
	Kind Kind
	// Call is the call a line belongs to; 0 for a request made outside
	// any call (a page's own requests between commands).
	Call uint64
	// Req is the request a KindRequest or KindResponse line names.
	Req uint64
}

// Message is a protocol's line type M, a JSON object. Both methods work on
// a copy: a message is never changed once sent.
type Message[M any] interface {
	// Route says what the line is and which call and request it belongs to.
	Route() Route
	// Routed returns the message with its kind and IDs set to r.
	Routed(r Route) M
}

// Ops names a protocol's operations (the "op" of its lines) by kind.
type Ops map[Kind]string

// Kind is the kind of operation op; KindUnknown for none of o's.
func (o Ops) Kind(op string) Kind {
	for k, name := range o {
		if name == op {
			return k
		}
	}
	return KindUnknown
}

// Line is the head of a protocol's line, embedded in its message type:
// the operation and the IDs that route it.
type Line struct {
	Op string `json:"op"`
	// ID names the call a line belongs to.
	ID uint64 `json:"id,omitempty"`
	// Req names one request the helper made of Odin.
	Req uint64 `json:"req,omitempty"`
}

// Route is l's route.
func (o Ops) Route(l Line) Route { return Route{Kind: o.Kind(l.Op), Call: l.ID, Req: l.Req} }

// Line is the head of a line routed by r.
func (o Ops) Line(r Route) Line { return Line{Op: o[r.Kind], ID: r.Call, Req: r.Req} }
