// Package untrusted fences content that did not come from the user or from
// Odin — web pages, files, command output, summaries of them — before it is
// placed in a prompt, so that a model reads it as data and never as
// instructions.
//
// A Fence wraps the content between two markers that carry a fresh random
// nonce; the content cannot close the fence early because it cannot know
// the nonce, and Wrap defuses anything in it that imitates a marker of any
// kind. Rule is the sentence that explains a fence to the model reading it;
// the system prompts say the same in general terms. Every place that puts
// untrusted content into a prompt uses this one helper (web.Fence is the
// web kind of it). Fences are values, safe for concurrent use.
package untrusted
