package web

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors, matched with errors.Is. Each fetch error wraps one of
// them (or an *HTTPError) with the URL and the detail.
var (
	// ErrInvalidURL: the URL is malformed, not http(s), or carries
	// credentials.
	ErrInvalidURL = errors.New("invalid URL")
	// ErrBlockedAddress: the host resolves to an address Odin refuses to
	// connect to (private, loopback, link-local...). Returned errors are
	// *BlockedError values.
	ErrBlockedAddress = errors.New("address not allowed")
	// ErrTimeout: the fetch did not complete within web.timeout.
	ErrTimeout = errors.New("timed out")
	// ErrRedirectLoop: a redirect led back to a URL already visited.
	ErrRedirectLoop = errors.New("redirect loop")
	// ErrTooManyRedirects: more than MaxRedirects redirects.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrSearchNotConfigured: NewSearcher was given no backend.
	ErrSearchNotConfigured = errors.New("web search is not configured")
)

// BlockedError is a connection refused by the address policy.
type BlockedError struct {
	Host   string // host:port as requested
	Addr   string // the resolved IP
	Reason string // "private address", "loopback address", ...
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s resolves to %s, a %s; Odin does not fetch internal addresses (add the host to web.allow_hosts to permit it)", e.Host, e.Addr, e.Reason)
}

// Is makes errors.Is(err, ErrBlockedAddress) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlockedAddress }

// DeniedHostError is a fetch of a host on web.deny_hosts.
type DeniedHostError struct {
	Host string
	Rule string // the deny_hosts entry it falls under
}

func (e *DeniedHostError) Error() string {
	return fmt.Sprintf("%s is on web.deny_hosts (rule %s): Odin does not fetch it; do not try to reach it another way", e.Host, e.Rule)
}

// Is makes errors.Is(err, ErrBlockedAddress) true: callers treat it as
// any refused address.
func (e *DeniedHostError) Is(target error) bool { return target == ErrBlockedAddress }

// HTTPError is a final response whose status is not a success.
type HTTPError struct {
	URL        string
	StatusCode int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("HTTP %d %s from %s", e.StatusCode, http.StatusText(e.StatusCode), e.URL)
}
