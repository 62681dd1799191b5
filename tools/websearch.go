package tools

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed websearch.md
var webSearchDescription string

// NameWebSearch is the WebSearch tool's name.
const NameWebSearch = "WebSearch"

// webSearchDefaultCount is how many results a search returns when the
// model does not say: enough to choose from, few enough to read.
const webSearchDefaultCount = 8

// WebSearchInput is WebSearch's input.
type WebSearchInput struct {
	Query string `json:"query" jsonschema:"The search query"`
	Count int    `json:"count,omitempty" jsonschema:"Results, 1-20 (default 8)"`
}

// WebSearchHit is one result with the Research agent's classification of
// its source.
type WebSearchHit struct {
	web.SearchHit
	SourceType  string `json:"source_type"`
	Reliability int    `json:"reliability"`
}

// WebSearchMeta is WebSearch's structured result.
type WebSearchMeta struct {
	Query string         `json:"query"`
	Hits  []WebSearchHit `json:"hits"`
}

// NewWebSearch returns WebSearch over s. With a nil s (no backend
// configured) every call returns an error result saying so, so a roster
// that lists the tool still works.
func NewWebSearch(s web.Searcher) tool.Tool {
	return newBuiltin[WebSearchInput](NameWebSearch, tool.ClassWeb, webSearchDescription,
		func(ctx context.Context, _ *tool.Env, in WebSearchInput) (tool.Result, error) {
			return webSearch(ctx, s, in)
		},
		tool.WithSchema(func(sc *jsonschema.Schema) {
			one, lo, hi := 1, 1.0, float64(web.MaxSearchResults)
			sc.Properties["query"].MinLength = &one
			sc.Properties["count"].Minimum = &lo
			sc.Properties["count"].Maximum = &hi
		}))
}

func webSearch(ctx context.Context, s web.Searcher, in WebSearchInput) (tool.Result, error) {
	if s == nil {
		return tool.Errorf("Web search is not configured (web.search in odin.yaml). Use WebFetch on URLs you know: official documentation sites, the project's repository, pkg.go.dev, docs.rs..."), nil
	}
	query := strings.TrimSpace(in.Query)
	if query == "" {
		return tool.Errorf("query is empty."), nil
	}
	n := in.Count
	if n <= 0 {
		n = webSearchDefaultCount
	}
	hits, err := s.Search(ctx, query, n)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("WebSearch: %w", err)
		}
		return tool.Errorf("Web search failed: %v", err), nil
	}
	meta := WebSearchMeta{Query: query, Hits: make([]WebSearchHit, len(hits))}
	for i, h := range hits {
		kind, rel := web.ClassifySource(h.URL)
		meta.Hits[i] = WebSearchHit{SearchHit: h, SourceType: kind, Reliability: rel}
	}
	if len(hits) == 0 {
		return tool.Result{Meta: meta, Output: fmt.Sprintf("No results for %q. Try other words, fewer terms, or a site's own documentation.", query)}, nil
	}
	fence := web.NewFence()
	var b strings.Builder
	for i, h := range meta.Hits {
		fmt.Fprintf(&b, "%d. %s\n   %s\n   [%s, reliability %d/10", i+1, cmp.Or(h.Title, "(no title)"), h.URL, h.SourceType, h.Reliability)
		if h.Published != "" {
			fmt.Fprintf(&b, ", %s", h.Published)
		}
		b.WriteString("]\n")
		if h.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", h.Snippet)
		}
	}
	out := fmt.Sprintf("%d results for %q.\n%s\n\n%s", len(hits), query, fence.Rule(), fence.Wrap(strings.TrimRight(b.String(), "\n")))
	return tool.Result{Meta: meta, Output: out}, nil
}
