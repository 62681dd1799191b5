package llm

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// apiError is the body of a provider error: {"error": {...}} or a bare
// string. code may be a string or a number depending on the provider.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Param   string          `json:"param"`
}

func (e apiError) code() string {
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s
	}
	return strings.Trim(string(e.Code), `"`)
}

// streamError classifies an error object received inside a 200 stream.
// Partial output is discarded by the caller; most such errors are transient
// server faults and are retried.
func streamError(raw json.RawMessage) *Error {
	var e apiError
	if json.Unmarshal(raw, &e) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			e.Message = s
		} else {
			e.Message = string(raw)
		}
	}
	kind := classifyBody(0, e.code(), e.Type, e.Message)
	if kind == "" {
		kind = KindServer
	}
	msg := e.Message
	if msg == "" {
		msg = "error object in stream"
	}
	if c := e.code(); c != "" && !strings.Contains(msg, c) {
		msg = c + ": " + msg
	} else if e.Type != "" && !strings.Contains(msg, e.Type) {
		msg = e.Type + ": " + msg
	}
	return &Error{Kind: kind, Message: "in stream: " + msg}
}

// contextLengthMarkers are phrases providers use when the prompt does not
// fit: OpenAI, Azure, vLLM, llama.cpp, Ollama, Anthropic-compatible and
// OpenRouter wordings.
var contextLengthMarkers = []string{
	"context_length_exceeded",
	"context length",
	"context window",
	"maximum context",
	"prompt is too long",
	"input is too long",
	"too many tokens",
	"reduce the length",
	"input tokens exceed",
	"exceeds the available context",
	"exceed_context_size",
}

func isContextLength(code, typ, msg string) bool {
	s := strings.ToLower(code + " " + typ + " " + msg)
	for _, m := range contextLengthMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// classifyBody picks a kind from what an error says about itself; "" means
// the body does not decide and the status code does.
func classifyBody(status int, code, typ, msg string) ErrorKind {
	switch {
	case isContextLength(code, typ, msg) && (status == 0 || status == 400 || status == 413 || status == 422):
		return KindContextLength
	case code == "insufficient_quota" || typ == "insufficient_quota":
		// A 429 for an exhausted balance never clears by waiting.
		return KindBadRequest
	case status == 0 && (code == "rate_limit_exceeded" || typ == "rate_limit_exceeded" || typ == "rate_limit_error"):
		return KindRateLimit
	case status == 0 && (typ == "invalid_request_error" || typ == "authentication_error"):
		if typ == "authentication_error" {
			return KindAuth
		}
		return KindBadRequest
	}
	return ""
}

// classifyStatus maps an HTTP error status onto a kind.
func classifyStatus(status int, code, typ, msg string) ErrorKind {
	if k := classifyBody(status, code, typ, msg); k != "" {
		return k
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return KindAuth
	case status == http.StatusTooManyRequests:
		return KindRateLimit
	case status == http.StatusRequestTimeout:
		return KindTimeout
	case status == http.StatusRequestEntityTooLarge:
		return KindContextLength
	case status >= 500:
		return KindServer
	default:
		return KindBadRequest
	}
}

// retryAfter reads how long the server asks us to wait: retry-after-ms
// (OpenAI, Azure), else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
