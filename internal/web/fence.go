package web

import "github.com/odin-code/odin/internal/untrusted"

// NewFence returns the fence that marks where untrusted web content begins
// and ends in a prompt: the web kind of untrusted.Fence, with a new random
// nonce.
func NewFence() untrusted.Fence {
	return untrusted.NewFence(untrusted.WebContent, "fetched from the web")
}
