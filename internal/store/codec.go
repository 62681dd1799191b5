package store

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/odin-code/odin/internal/llm"
)

// Messages store their parts in one BLOB column in the protobuf wire
// format. Resuming a session decodes every stored message, and text full
// of quotes and newlines (code, tool output) made JSON's escaping the
// largest cost of a 10,000-message resume; length-prefixed fields decode
// by slicing. Unknown fields are skipped, so a later Odin may add fields
// that this one ignores. The schema, as protobuf would write it:
//
//	message Parts { repeated Part part = 1; }
//	message Part {
//	  Kind   kind         = 1;  // 1 text, 2 reasoning, 3 tool_call, 4 tool_result, 5 finish, 6 image
//	  string text         = 2;  // text, reasoning
//	  string id           = 3;  // tool_call
//	  string name         = 4;  // tool_call, tool_result, image
//	  string input        = 5;  // tool_call
//	  bool   finished     = 6;  // tool_call
//	  string tool_call_id = 7;  // tool_result
//	  string content      = 8;  // tool_result
//	  bool   is_error     = 9;  // tool_result
//	  bool   cancelled    = 10; // tool_result
//	  string reason       = 11; // finish
//	  sint64 time         = 12; // finish, Unix nanoseconds; absent when zero
//	  string extra        = 13; // tool_call: provider's opaque JSON object
//	  string mime         = 14; // image
//	  bytes  data         = 15; // image
//	  int64  width        = 16; // image
//	  int64  height       = 17; // image
//	  bool   injected     = 18; // text Odin added to the user's input
//	}
const (
	fieldPart protowire.Number = 1

	fieldKind       protowire.Number = 1
	fieldText       protowire.Number = 2
	fieldID         protowire.Number = 3
	fieldName       protowire.Number = 4
	fieldInput      protowire.Number = 5
	fieldFinished   protowire.Number = 6
	fieldToolCallID protowire.Number = 7
	fieldContent    protowire.Number = 8
	fieldIsError    protowire.Number = 9
	fieldCancelled  protowire.Number = 10
	fieldReason     protowire.Number = 11
	fieldTime       protowire.Number = 12
	fieldExtra      protowire.Number = 13
	fieldMIME       protowire.Number = 14
	fieldData       protowire.Number = 15
	fieldWidth      protowire.Number = 16
	fieldHeight     protowire.Number = 17
	fieldInjected   protowire.Number = 18
)

const (
	kindText uint64 = iota + 1
	kindReasoning
	kindToolCall
	kindToolResult
	kindFinish
	kindImage
)

var errCorrupt = errors.New("corrupt parts encoding")

// encodeParts renders parts for the messages.parts column.
func encodeParts(parts []Part) ([]byte, error) {
	out := []byte{}
	var scratch []byte
	for i, p := range parts {
		var err error
		scratch, err = appendPart(scratch[:0], p)
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", i, err)
		}
		out = protowire.AppendTag(out, fieldPart, protowire.BytesType)
		out = protowire.AppendBytes(out, scratch)
	}
	return out, nil
}

func appendString(b []byte, n protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBool(b []byte, n protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, 1)
}

func appendInt(b []byte, n protowire.Number, v int) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func appendKind(b []byte, k uint64) []byte {
	b = protowire.AppendTag(b, fieldKind, protowire.VarintType)
	return protowire.AppendVarint(b, k)
}

func appendPart(b []byte, p Part) ([]byte, error) {
	switch v := p.(type) {
	case TextPart:
		b = appendKind(b, kindText)
		b = appendString(b, fieldText, v.Text)
		b = appendBool(b, fieldInjected, v.Injected)
	case ReasoningPart:
		b = appendKind(b, kindReasoning)
		b = appendString(b, fieldText, v.Text)
	case ToolCallPart:
		b = appendKind(b, kindToolCall)
		b = appendString(b, fieldID, v.ID)
		b = appendString(b, fieldName, v.Name)
		b = appendString(b, fieldInput, v.Input)
		b = appendBool(b, fieldFinished, v.Finished)
		b = appendString(b, fieldExtra, v.Extra)
	case ToolResultPart:
		b = appendKind(b, kindToolResult)
		b = appendString(b, fieldToolCallID, v.ToolCallID)
		b = appendString(b, fieldName, v.Name)
		b = appendString(b, fieldContent, v.Content)
		b = appendBool(b, fieldIsError, v.IsError)
		b = appendBool(b, fieldCancelled, v.Cancelled)
	case FinishPart:
		b = appendKind(b, kindFinish)
		b = appendString(b, fieldReason, string(v.Reason))
		if !v.Time.IsZero() {
			b = protowire.AppendTag(b, fieldTime, protowire.VarintType)
			b = protowire.AppendVarint(b, protowire.EncodeZigZag(v.Time.UnixNano()))
		}
	case ImagePart:
		b = appendKind(b, kindImage)
		b = appendString(b, fieldName, v.Name)
		b = appendString(b, fieldMIME, v.MIME)
		if len(v.Data) > 0 {
			b = protowire.AppendTag(b, fieldData, protowire.BytesType)
			b = protowire.AppendBytes(b, v.Data)
		}
		b = appendInt(b, fieldWidth, v.Width)
		b = appendInt(b, fieldHeight, v.Height)
	case nil:
		return nil, fmt.Errorf("nil part: %w", ErrInvalid)
	default:
		return nil, fmt.Errorf("part type %T: %w", p, ErrInvalid)
	}
	return b, nil
}

// decodeParts parses what encodeParts produced. The parts share no memory
// with b.
func decodeParts(b []byte) ([]Part, error) {
	out := make([]Part, 0, 4)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", errCorrupt, protowire.ParseError(n))
		}
		b = b[n:]
		if num == fieldPart && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, fmt.Errorf("%w: %v", errCorrupt, protowire.ParseError(n))
			}
			p, err := decodePart(v)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", len(out), err)
			}
			out = append(out, p)
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", errCorrupt, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return out, nil
}

func decodePart(b []byte) (Part, error) {
	var (
		kind                                           uint64
		text, id, name, input, callID, content, reason string
		extra, mime                                    string
		data                                           []byte
		width, height                                  int
		finished, isError, cancelled, injected         bool
		at                                             time.Time
	)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", errCorrupt, protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType && (num >= fieldText && num <= fieldReason || num >= fieldExtra && num <= fieldData):
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, fmt.Errorf("%w: %v", errCorrupt, protowire.ParseError(n))
			}
			b = b[n:]
			if num == fieldData {
				data = append([]byte(nil), v...)
				continue
			}
			s := string(v)
			switch num {
			case fieldText:
				text = s
			case fieldID:
				id = s
			case fieldName:
				name = s
			case fieldInput:
				input = s
			case fieldToolCallID:
				callID = s
			case fieldContent:
				content = s
			case fieldReason:
				reason = s
			case fieldExtra:
				extra = s
			case fieldMIME:
				mime = s
			}
		case typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, fmt.Errorf("%w: %v", errCorrupt, protowire.ParseError(n))
			}
			b = b[n:]
			switch num {
			case fieldKind:
				kind = v
			case fieldFinished:
				finished = v != 0
			case fieldIsError:
				isError = v != 0
			case fieldCancelled:
				cancelled = v != 0
			case fieldInjected:
				injected = v != 0
			case fieldTime:
				at = time.Unix(0, protowire.DecodeZigZag(v)).UTC()
			case fieldWidth:
				width = int(v)
			case fieldHeight:
				height = int(v)
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, fmt.Errorf("%w: %v", errCorrupt, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	switch kind {
	case kindText:
		return TextPart{Text: text, Injected: injected}, nil
	case kindReasoning:
		return ReasoningPart{Text: text}, nil
	case kindToolCall:
		return ToolCallPart{ID: id, Name: name, Input: input, Finished: finished, Extra: extra}, nil
	case kindToolResult:
		return ToolResultPart{ToolCallID: callID, Name: name, Content: content, IsError: isError, Cancelled: cancelled}, nil
	case kindFinish:
		return FinishPart{Reason: llm.FinishReason(reason), Time: at}, nil
	case kindImage:
		return ImagePart{Name: name, MIME: mime, Data: data, Width: width, Height: height}, nil
	}
	return nil, fmt.Errorf("%w: unknown part kind %d", errCorrupt, kind)
}
