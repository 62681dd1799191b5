package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLineFilter: the lines that are JSON-RPC 2.0 messages reach the SDK
// unchanged and in order; every other line is answered with the error
// JSON-RPC prescribes and goes no further, and reading goes on after it.
func TestLineFilter(t *testing.T) {
	good := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
		`{"jsonrpc":"2.0","id":"r1","result":{"outcome":{"outcome":"cancelled"}}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"no"}}`,
		` {"jsonrpc":"2.0","id":3,"method":"session/list","params":[]}` + "\r",
	}
	bad := []struct{ line, want string }{
		{"not json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"not JSON"}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"x"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"not JSON"}}`},
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"not a JSON object (batches are not supported)"}}`},
		{`"text"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"not a JSON object (batches are not supported)"}}`},
		{`{"id":5,"method":"initialize"}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request","data":"\"jsonrpc\" must be \"2.0\""}}`},
		{`{"jsonrpc":"2.0","id":"six"}`, `{"jsonrpc":"2.0","id":"six","error":{"code":-32600,"message":"Invalid Request","data":"a request needs a \"method\"; a response an \"id\" and one of \"result\" or \"error\""}}`},
		{`{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"m"}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid Request","data":"a request needs a \"method\"; a response an \"id\" and one of \"result\" or \"error\""}}`},
		{`{"jsonrpc":"2.0","id":8,"method":""}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"Invalid Request","data":"\"method\" must be a non-empty string"}}`},
		{`{"jsonrpc":"2.0","id":true,"method":"initialize"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"\"id\" must be a string or a number"}}`},
		{`{"jsonrpc":"2.0","id":9,"method":"initialize","params":null}`, `{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid Request","data":"\"params\" must be an object or an array"}}`},
		{`{"jsonrpc":"2.0","method":"x","params":{"s":"` + strings.Repeat("a", maxLine) + `"}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":"message larger than 10 MiB"}}`},
	}
	var in strings.Builder
	for i, b := range bad {
		in.WriteString(b.line + "\n\n")
		in.WriteString(good[i%len(good)] + "\n")
	}
	var answers bytes.Buffer
	passed, err := io.ReadAll(newLineFilter(strings.NewReader(in.String()), &answers))
	if err != nil {
		t.Fatal(err)
	}
	var wantPassed, wantAnswers []string
	for i, b := range bad {
		wantPassed = append(wantPassed, good[i%len(good)])
		wantAnswers = append(wantAnswers, b.want)
	}
	if d := cmp.Diff(wantPassed, strings.Split(strings.TrimSuffix(string(passed), "\n"), "\n")); d != "" {
		t.Errorf("passed to the SDK (-want +got):\n%s", d)
	}
	gotAnswers := strings.Split(strings.TrimSuffix(answers.String(), "\n"), "\n")
	if d := cmp.Diff(wantAnswers, gotAnswers); d != "" {
		t.Errorf("answers (-want +got):\n%s", d)
	}
	for _, a := range gotAnswers {
		if !json.Valid([]byte(a)) {
			t.Errorf("answer %q is not JSON", a)
		}
	}
}

// TestLineFilterLastLineWithoutNewline: a stream that ends without a
// newline still delivers its last message.
func TestLineFilterLastLineWithoutNewline(t *testing.T) {
	msg := `{"jsonrpc":"2.0","method":"session/cancel","params":{}}`
	var answers bytes.Buffer
	got, err := io.ReadAll(newLineFilter(strings.NewReader(msg), &answers))
	if err != nil || string(got) != msg+"\n" || answers.Len() != 0 {
		t.Errorf("got %q, %v, answers %q; want the message and a newline", got, err, answers.String())
	}
}
