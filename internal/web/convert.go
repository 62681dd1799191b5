package web

import (
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
)

// PageKind says what a fetched body was and how it was turned into text.
type PageKind string

// Page kinds.
const (
	KindHTML     PageKind = "html"     // converted to Markdown
	KindMarkdown PageKind = "markdown" // passed through
	KindJSON     PageKind = "json"     // passed through, indented when compact
	KindText     PageKind = "text"     // plain text, XML, source code: passed through
	KindBinary   PageKind = "binary"   // not read: PDFs, images, archives...
	KindRedirect PageKind = "redirect" // a redirect to another host, not followed
)

// Classify maps a media type (lower case, without parameters) to a kind;
// ok is false when the type says nothing useful and the body must be
// sniffed.
func Classify(mediaType string) (kind PageKind, ok bool) {
	switch mediaType {
	case "", "application/octet-stream", "binary/octet-stream", "application/unknown":
		return "", false
	case "text/html", "application/xhtml+xml":
		return KindHTML, true
	case "text/markdown", "text/x-markdown":
		return KindMarkdown, true
	case "application/json", "text/json":
		return KindJSON, true
	case "image/svg+xml":
		return KindText, true
	case "application/javascript", "application/ecmascript", "application/x-javascript",
		"application/xml", "application/yaml", "application/x-yaml", "application/toml",
		"application/x-sh", "application/sql", "application/graphql", "application/x-ndjson":
		return KindText, true
	}
	switch {
	case strings.HasSuffix(mediaType, "+json"):
		return KindJSON, true
	case strings.HasSuffix(mediaType, "+xml"):
		return KindText, true
	case strings.HasPrefix(mediaType, "text/"):
		return KindText, true
	}
	return KindBinary, true
}

// MediaType returns the lower-case media type of a Content-Type header
// value, without its parameters.
func MediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		// A malformed header still usually starts with the type.
		mt, _, _ = strings.Cut(contentType, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// Cut shortens text to at most limit bytes (limit must leave room for the
// note, about 150 bytes), cutting at a paragraph or line break when one is
// near, closing a code fence left open, and ending with a note saying how
// much was kept. cut is false when text already fits.
func Cut(text string, limit int) (out string, cut bool) {
	if len(text) <= limit {
		return text, false
	}
	note := fmt.Sprintf("\n\n[Content cut to fit: showing about %d of %d bytes.]", limit, len(text))
	keep := max(limit-len(note)-len("\n```"), 0)
	for keep > 0 && !utf8.RuneStart(text[keep]) {
		keep--
	}
	head := text[:keep]
	// Prefer a break in the last quarter, so the cut does not split a
	// sentence or a table row.
	if i := strings.LastIndex(head, "\n\n"); i >= keep*3/4 {
		head = head[:i]
	} else if i := strings.LastIndexByte(head, '\n'); i >= keep*3/4 {
		head = head[:i]
	}
	if fences(head)%2 == 1 {
		head += "\n```"
	}
	return head + note, true
}

// fences counts the lines of s that open or close a fenced code block.
func fences(s string) int {
	n := 0
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			n++
		}
	}
	return n
}
