// Package htmlproc is odin-fetch's side of WebFetch: it drives colly over
// a transport that owns no network connection — each HTTP request is
// handed to Odin, which makes it through its address policy or refuses —
// and turns the response into the text a model reads (HTML to Markdown
// with html-to-markdown, charset decoding, JSON indentation, the budget's
// cut). It runs in the odin-fetch process, which Odin starts in its
// sandbox: untrusted HTML is parsed in a process that can neither write
// nor connect anywhere, and Odin's own binary links neither colly nor the
// HTML converter.
package htmlproc
