package htmlproc

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// pageChrome is what a page snapshot drops: code, styles and embeds have no
// text for a reader. Unlike a fetched page's, its navigation and widgets
// stay: an agent driving the page clicks them.
const pageChrome = "script, style, noscript, template, iframe, frame, frameset, object, embed, svg, canvas, video, audio, link, meta"

// refMark is a widget label the snapshot wrote ("[button "Save" ref=3]"),
// as the converter escapes it.
var refMark = regexp.MustCompile(`\\\[([^\[\]\n]*?ref=\d+)\\?\]`)

// PageMarkdown converts a browser's snapshot of a whole page (the DOM as
// rendered, widgets already replaced by labels naming their element
// references) to Markdown, resolving links against pageURL. It is
// WebBrowser's reader; conversion runs with the converter WebFetch uses.
func PageMarkdown(ctx context.Context, doc string, pageURL *url.URL) (title, md string, err error) {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		return "", "", fmt.Errorf("parse HTML: %w", err)
	}
	d := goquery.NewDocumentFromNode(root)
	title = pageTitle(d)
	d.Find(pageChrome).Remove()
	d.Find(`img[src^="data:"]`).Each(func(_ int, img *goquery.Selection) {
		img.ReplaceWithHtml(html.EscapeString(img.AttrOr("alt", "")))
	})
	body := d.Find("body").First()
	if body.Length() == 0 {
		return title, "", nil
	}
	out, err := conv.ConvertNode(body.Nodes[0], converter.WithDomain(pageURL.String()), converter.WithContext(ctx))
	if err != nil {
		return title, "", fmt.Errorf("convert HTML: %w", err)
	}
	md = refMark.ReplaceAllString(strings.TrimSpace(string(out)), "[$1]")
	return title, md, nil
}
