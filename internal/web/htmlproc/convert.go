package htmlproc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/odin-code/odin/internal/web"
)

// sniff classifies a body whose Content-Type was missing or generic.
func sniff(body []byte) (web.PageKind, string) {
	mt := web.MediaType(http.DetectContentType(body))
	switch mt {
	case "text/html", "text/xml":
		if mt == "text/html" {
			return web.KindHTML, mt
		}
		return web.KindText, mt
	case "text/plain":
		trimmed := bytes.TrimSpace(body)
		if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
			return web.KindJSON, "application/json"
		}
		return web.KindText, mt
	}
	return web.KindBinary, mt
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
