package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
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

// classify maps a media type (lower case, without parameters) to a kind;
// ok is false when the type says nothing useful and the body must be
// sniffed.
func classify(mediaType string) (kind PageKind, ok bool) {
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

// sniff classifies a body whose Content-Type was missing or generic.
func sniff(body []byte) (PageKind, string) {
	mt := mediaTypeOf(http.DetectContentType(body))
	switch mt {
	case "text/html", "text/xml":
		if mt == "text/html" {
			return KindHTML, mt
		}
		return KindText, mt
	case "text/plain":
		trimmed := bytes.TrimSpace(body)
		if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
			return KindJSON, "application/json"
		}
		return KindText, mt
	}
	return KindBinary, mt
}

func mediaTypeOf(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		// A malformed header still usually starts with the type.
		mt, _, _ = strings.Cut(contentType, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// decode turns body into valid UTF-8. headerDecoded is true when the
// Content-Type header declared a charset: colly has then already converted
// the body to UTF-8. Otherwise the encoding comes from a byte-order mark or
// a <meta> declaration; undeclared bodies are UTF-8 when they validate as
// such (the whole body is checked, not just the first kilobyte), else
// Windows-1252 as browsers assume.
func decode(body []byte, headerDecoded bool) string {
	if headerDecoded {
		return strings.ToValidUTF8(strings.TrimPrefix(string(body), "\ufeff"), "\ufffd")
	}
	enc, name, certain := charset.DetermineEncoding(body, "")
	if !certain && name == "windows-1252" && utf8.Valid(body) {
		enc = encoding.Nop
	}
	if enc == encoding.Nop {
		return strings.ToValidUTF8(strings.TrimPrefix(string(body), "\ufeff"), "\ufffd")
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\ufffd")
	}
	return strings.ToValidUTF8(strings.TrimPrefix(string(out), "\ufeff"), "\ufffd")
}

// newConverter builds the HTML to Markdown converter. A Converter keeps
// per-call state in the call's context, so one is shared by all fetches.
func newConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
}

// chrome is what a reader skips: navigation, sidebars, scripts, embeds,
// widgets and anything hidden. It is removed before the main content is
// chosen, so a <main> inside a sidebar cannot win.
const chrome = "script, style, noscript, template, iframe, frame, frameset, object, embed, " +
	"svg, canvas, video, audio, nav, aside, dialog, button, input, select, textarea, " +
	"link, meta, [role=navigation], [role=banner], [role=contentinfo], [role=complementary], " +
	"[role=search], [aria-hidden=true], [hidden]"

// htmlToMarkdown extracts the main content of an HTML document and
// converts it to Markdown, resolving relative links against pageURL (or the
// document's <base href>).
func htmlToMarkdown(ctx context.Context, conv *converter.Converter, doc string, pageURL *url.URL) (title, md string, err error) {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		return "", "", fmt.Errorf("parse HTML: %w", err)
	}
	d := goquery.NewDocumentFromNode(root)
	title = pageTitle(d)

	baseURL := pageURL
	if href, ok := d.Find("base[href]").First().Attr("href"); ok {
		if b, err := pageURL.Parse(strings.TrimSpace(href)); err == nil && (b.Scheme == "http" || b.Scheme == "https") {
			baseURL = b
		}
	}

	d.Find(chrome).Remove()
	// Forms are widgets (search boxes, logins) unless, as on some
	// frameworks' pages, the whole content sits inside one.
	d.Find("form").Each(func(_ int, f *goquery.Selection) {
		if f.Find("main, article, [role=main], h1, h2, h3").Length() > 0 {
			f.Find("label").Remove()
			f.ReplaceWithSelection(f.Contents())
			return
		}
		f.Remove()
	})
	// Inline data: images are base64 blobs that would eat the budget.
	d.Find(`img[src^="data:"]`).Each(func(_ int, img *goquery.Selection) {
		img.ReplaceWithHtml(html.EscapeString(img.AttrOr("alt", "")))
	})

	content := mainContent(d)
	if goquery.NodeName(content) == "body" {
		// Without a main element, headers and footers outside the
		// content's own sections are page chrome.
		content.Find("header, footer").Each(func(_ int, s *goquery.Selection) {
			if s.ParentsFiltered("article, section").Length() == 0 {
				s.Remove()
			}
		})
	}
	if content.Length() == 0 {
		return title, "", nil
	}
	out, err := conv.ConvertNode(content.Nodes[0], converter.WithDomain(baseURL.String()), converter.WithContext(ctx))
	if err != nil {
		return title, "", fmt.Errorf("convert HTML: %w", err)
	}
	return title, strings.TrimSpace(string(out)), nil
}

// mainContent picks the element holding the page's own content: the first
// <main> (or role=main) that has text, else the only <article>, else the
// body.
func mainContent(d *goquery.Document) *goquery.Selection {
	var found *goquery.Selection
	d.Find("main, [role=main]").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if strings.TrimSpace(s.Text()) != "" {
			found = s
			return false
		}
		return true
	})
	if found != nil {
		return found
	}
	if a := d.Find("article"); a.Length() == 1 && strings.TrimSpace(a.Text()) != "" {
		return a
	}
	if b := d.Find("body"); b.Length() > 0 {
		return b.First()
	}
	return d.Selection
}

func pageTitle(d *goquery.Document) string {
	candidates := []string{
		d.Find("head title").First().Text(),
		d.Find(`meta[property="og:title"]`).AttrOr("content", ""),
		d.Find("h1").First().Text(),
	}
	for _, c := range candidates {
		if t := strings.Join(strings.Fields(c), " "); t != "" {
			return t
		}
	}
	return ""
}

// prettyJSON indents a compact JSON document so the model can read its
// structure; a document already spread over lines, or invalid, is kept as
// is.
func prettyJSON(s string) string {
	trimmed := strings.TrimSpace(s)
	if strings.Count(trimmed, "\n") > 0 || !json.Valid([]byte(trimmed)) {
		return s
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(trimmed), "", "  "); err != nil {
		return s
	}
	return buf.String()
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
