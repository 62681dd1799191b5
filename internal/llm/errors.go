package llm

import (
	"fmt"
	"time"
)

// ErrorKind classifies a failed model call.
type ErrorKind string

// Error kinds. Rate limits, server errors and network failures are retried;
// the others are not.
const (
	KindAuth          ErrorKind = "auth"           // 401/403: bad or missing key
	KindRateLimit     ErrorKind = "rate_limit"     // 429
	KindContextLength ErrorKind = "context_length" // the prompt exceeds the model's window
	KindBadRequest    ErrorKind = "bad_request"    // other 4xx
	KindServer        ErrorKind = "server"         // 5xx or an error object mid-stream
	KindNetwork       ErrorKind = "network"        // connection refused, reset, stream cut
	KindTimeout       ErrorKind = "timeout"        // the request or idle timeout expired
	KindBudget        ErrorKind = "budget"         // the call's overall budget ran out
	KindBadResponse   ErrorKind = "bad_response"   // unparseable or empty response
	KindCanceled      ErrorKind = "canceled"       // the caller's context was cancelled
)

// Error is a classified model-call failure.
type Error struct {
	Kind       ErrorKind
	StatusCode int           // HTTP status, 0 if none
	Message    string        // provider's message or a description
	RetryAfter time.Duration // from the Retry-After header, 0 if none
	Attempts   int           // attempts made, including the failing one
	// Hint is the user's next step (the variable a refused key came
	// from, the URL nothing answered at); it ends the message, after
	// the attempts, so the advice is not cut by them.
	Hint string
	Err  error // underlying error, may be nil
}

func (e *Error) Error() string {
	s := "llm: " + string(e.Kind)
	if e.StatusCode != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.StatusCode)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the call may succeed if repeated as is.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindRateLimit, KindServer, KindNetwork, KindTimeout:
		return true
	}
	return false
}
