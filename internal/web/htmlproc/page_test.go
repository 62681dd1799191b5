package htmlproc

import (
	"net/url"
	"strings"
	"testing"
)

// A page snapshot keeps its widgets' labels readable (the converter's
// escaping of their brackets is undone), keeps navigation, and drops
// scripts and styles.
func TestPageMarkdown(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:5173/app/")
	doc := `<html><head><title>App</title><style>p{}</style></head><body>
<nav><a href="/docs">Docs [ref=1]</a></nav>
<p>Status: ok</p> [button "Save" ref=2] [input type=text name="q" ref=3]
<script>alert("x")</script></body></html>`
	title, md, err := PageMarkdown(t.Context(), doc, u)
	if err != nil {
		t.Fatal(err)
	}
	if title != "App" {
		t.Errorf("title = %q", title)
	}
	for _, want := range []string{"[Docs [ref=1]](http://127.0.0.1:5173/docs)", "Status: ok", `[button "Save" ref=2]`, `[input type=text name="q" ref=3]`} {
		if !strings.Contains(md, want) {
			t.Errorf("lacks %s:\n%s", want, md)
		}
	}
	if strings.Contains(md, "alert") || strings.Contains(md, `\[`) {
		t.Errorf("a script or an escaped label is left:\n%s", md)
	}
}
