package web

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// tokenizerPlain is plain as it was written over golang.org/x/net/html's
// tokenizer, which Odin's binary no longer links: the reference plain is
// checked against.
func tokenizerPlain(s string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.Join(strings.Fields(b.String()), " ")
		case html.TextToken:
			b.Write(z.Text())
		}
	}
}

func TestPlainReadsMarkupAsTheTokenizer(t *testing.T) {
	cases := map[string]string{
		"plain words":                        "plain words",
		"  spaced\n\tout  ":                  "spaced out",
		"Go <strong>generics</strong>":       "Go generics",
		"<b>bold</b> and <i>it</i>alic":      "bold and italic",
		"Tom &amp; Jerry &lt;3 &#x263A;":     "Tom & Jerry <3 \u263a",
		"&copy 2024 &notanentity; &#169;":    "\u00a9 2024 \u00acanentity; \u00a9",
		"&unknownentity; &amp":               "&unknownentity; &",
		"a < b and c<d":                      "a < b and c",
		"1 <2 and 3< 4":                      "1 <2 and 3< 4",
		"x <!-- hidden > still --> y":        "x y",
		"<!DOCTYPE html>text":                "text",
		"<?xml version=\"1.0\"?>text":        "text",
		`<a href="x>y" title='p>q'>link</a>`: "link",
		`<a data-x = "q>r">v</a>`:            "v",
		"<br/>line<br />break":               "linebreak",
		"</p>closed":                         "closed",
		"text<":                              "text<",
		"tail <":                             "tail <",
		"caf&eacute; &AMP; &quot;q&quot;":    "caf\u00e9 & \"q\"",
		"<em>&lt;tag&gt;</em>":               "<tag>",
		"a<span>b</span>c":                   "abc",
	}
	for in, want := range cases {
		if got := plain(in); got != want {
			t.Errorf("plain(%q) = %q, want %q", in, got, want)
		}
		if ref := tokenizerPlain(in); ref != want {
			t.Errorf("the tokenizer reads %q as %q, the case says %q", in, ref, want)
		}
	}
}

// Every short mix of markup pieces reads alike through plain and the
// tokenizer.
func TestPlainMatchesTheTokenizerOnMixes(t *testing.T) {
	pieces := []string{"a", " ", "<", ">", "b", "/", "!", "?", "-", "=", `"`, "'", "&amp;", "&", ";", "<!--", "-->", "<b>", "</b>", "x y"}
	var mix func(prefix string, depth int)
	n := 0
	mix = func(prefix string, depth int) {
		if depth == 0 {
			n++
			if got, want := plain(prefix), tokenizerPlain(prefix); got != want {
				t.Fatalf("plain(%q) = %q, the tokenizer reads %q", prefix, got, want)
			}
			return
		}
		for _, p := range pieces {
			mix(prefix+p, depth-1)
		}
	}
	mix("", 4)
	if n == 0 {
		t.Fatal("no mixes tried")
	}
}
