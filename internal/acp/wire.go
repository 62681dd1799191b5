package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// JSON-RPC 2.0's codes for a message that cannot be handled at all.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// maxLine bounds one incoming message. The SDK's scanner stops reading at
// 10 MiB, which would end the connection: a longer line is answered and
// dropped here instead.
const maxLine = 10<<20 - 1

// lineFilter sits between the client's stream and the SDK, which drops a
// line that is not JSON and handles any JSON object as best it can,
// answering nothing: the client would wait forever. It passes on the
// lines that are JSON-RPC 2.0 messages and answers the others itself, as
// JSON-RPC 2.0 says: -32700 (id null) for a line that is not JSON, -32600
// for JSON that is not a request, notification or response (with the
// message's id when it has a valid one, else null). The connection goes
// on either way. Read is called by the SDK's one reading goroutine.
type lineFilter struct {
	r     *bufio.Reader
	reply io.Writer // the connection's writer, whose writes are whole messages
	rest  []byte    // what is left of a line being passed on
	err   error     // the end of the client's stream, once reached
}

func newLineFilter(r io.Reader, reply io.Writer) *lineFilter {
	return &lineFilter{r: bufio.NewReaderSize(r, 64<<10), reply: reply}
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.rest) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, tooLong, err := f.readLine()
		f.err = err
		switch {
		case tooLong:
			f.answer(nil, codeInvalidRequest, "Invalid Request", "message larger than 10 MiB")
		case len(bytes.TrimSpace(line)) == 0:
		default:
			if code, id, why := check(line); code != 0 {
				msg := "Parse error"
				if code == codeInvalidRequest {
					msg = "Invalid Request"
				}
				f.answer(id, code, msg, why)
				continue
			}
			f.rest = append(line, '\n')
		}
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// readLine reads one line without its newline; a line over maxLine is
// read to its end and reported as too long, not kept.
func (f *lineFilter) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := f.r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > maxLine+1 {
				line, tooLong = nil, true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// check says what is wrong with line as a JSON-RPC 2.0 message: code 0
// when nothing is, else the error code, the id to answer with (nil for
// null) and why.
func check(line []byte) (code int, id json.RawMessage, why string) {
	if !json.Valid(line) {
		return codeParseError, nil, "not JSON"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return codeInvalidRequest, nil, "not a JSON object (batches are not supported)"
	}
	if raw, ok := m["id"]; ok && validID(raw) {
		id = raw
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	var version, method string
	switch {
	case json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0":
		return codeInvalidRequest, id, `"jsonrpc" must be "2.0"`
	case m["method"] == nil:
		// A response to one of the agent's requests to the client.
		if m["id"] == nil || hasResult == hasError {
			return codeInvalidRequest, id, `a request needs a "method"; a response an "id" and one of "result" or "error"`
		}
		return 0, nil, ""
	case json.Unmarshal(m["method"], &method) != nil || method == "":
		return codeInvalidRequest, id, `"method" must be a non-empty string`
	case m["id"] != nil && !validID(m["id"]) && string(bytes.TrimSpace(m["id"])) != "null":
		return codeInvalidRequest, nil, `"id" must be a string or a number`
	}
	if p, ok := m["params"]; ok {
		if t := bytes.TrimSpace(p); len(t) == 0 || (t[0] != '{' && t[0] != '[') {
			return codeInvalidRequest, id, `"params" must be an object or an array`
		}
	}
	return 0, nil, ""
}

// validID reports whether raw is an id JSON-RPC allows and can echo: a
// string or a number.
func validID(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return false
	}
	if t[0] == '"' {
		var s string
		return json.Unmarshal(t, &s) == nil
	}
	var n json.Number
	return json.Unmarshal(t, &n) == nil
}

// answer writes a JSON-RPC error response in one write; a write that
// fails leaves the connection to end on the SDK's own next write.
func (f *lineFilter) answer(id json.RawMessage, code int, msg, why string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    string `json:"data"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg, why}})
	if err != nil {
		return
	}
	_, _ = f.reply.Write(append(b, '\n'))
}
