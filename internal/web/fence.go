package web

import "github.com/odin-code/odin/internal/untrusted"

// Fence marks where untrusted web content begins and ends in a prompt: the
// web kind of untrusted.Fence, the one fencing helper.
type Fence = untrusted.Fence

// NewFence returns a web-content fence with a new random nonce.
func NewFence() Fence {
	return untrusted.NewFence(untrusted.WebContent, "fetched from the web")
}
