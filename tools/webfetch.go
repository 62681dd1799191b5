package tools

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/untrusted"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed webfetch.md
var webFetchDescription string

// NameWebFetch is the WebFetch tool's name.
const NameWebFetch = "WebFetch"

// webFetchRawLimit caps the page text returned when there is no small
// model: it lands in the calling model's context, which is dearer than the
// small model's.
const webFetchRawLimit = 30_000

// researchAgent is the roster name whose fetches use the Research cache
// lifetimes (seed 004).
const researchAgent = "research"

// WebFetchInput is WebFetch's input (seed 000 schema).
type WebFetchInput struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt" jsonschema:"What to find or extract from the page"`
}

// WebFetchMeta is WebFetch's structured result, for Odin (the Research
// agent's sources, the UI).
type WebFetchMeta struct {
	URL         string `json:"url"`
	FinalURL    string `json:"final_url,omitempty"`
	Title       string `json:"title,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Status      int    `json:"status,omitempty"`
	RedirectTo  string `json:"redirect_to,omitempty"`
	Cached      bool   `json:"cached,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
	SourceType  string `json:"source_type"`
	Reliability int    `json:"reliability"`
}

// NewWebFetch returns WebFetch: it fetches a URL with f (through f's
// cache), converts the page to Markdown and runs the prompt over it with
// the small model (env.Small), returning the answer with the source URL.
// The page reaches the small model only inside an untrusted.Fence (web.NewFence). Without a small
// model the page itself is returned, fenced and capped. Fetches made by
// the Research agent use its longer cache lifetimes.
func NewWebFetch(f *web.Fetcher) tool.Tool {
	return newBuiltin[WebFetchInput](NameWebFetch, tool.ClassWeb, webFetchDescription,
		func(ctx context.Context, env *tool.Env, in WebFetchInput) (tool.Result, error) {
			return webFetch(ctx, f, env, in)
		},
		tool.WithSchema(func(s *jsonschema.Schema) {
			s.Properties["url"].Format = "uri"
			one := 1
			s.Properties["url"].MinLength = &one
			s.Properties["prompt"].MinLength = &one
		}))
}

func webFetch(ctx context.Context, f *web.Fetcher, env *tool.Env, in WebFetchInput) (tool.Result, error) {
	if f == nil {
		return tool.Errorf("WebFetch is not available in this session."), nil
	}
	prompt := strings.TrimSpace(in.Prompt)
	if prompt == "" {
		return tool.Errorf("prompt is empty: say what to find or extract on the page."), nil
	}
	var (
		page *web.Page
		err  error
	)
	if env != nil && env.Agent == researchAgent {
		page, err = f.FetchMaxAge(ctx, in.URL, f.ResearchMaxAge(in.URL))
	} else {
		page, err = f.Fetch(ctx, in.URL)
	}
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("WebFetch %s: %w", in.URL, err)
		}
		return webFetchFailure(in.URL, err), nil
	}

	sourceType, reliability := web.ClassifySource(page.FinalURL)
	meta := WebFetchMeta{
		URL: page.URL, FinalURL: page.FinalURL, Title: page.Title, Kind: string(page.Kind),
		Status: page.Status, RedirectTo: page.RedirectTo, Cached: page.Cached, Truncated: page.Truncated,
		SourceType: sourceType, Reliability: reliability,
	}
	source := "Source: " + page.FinalURL
	if page.Cached {
		source += " (cached)"
	}

	switch {
	case page.Kind == web.KindRedirect:
		return tool.Result{Meta: meta, Output: fmt.Sprintf(
			"%s redirects (HTTP %d) to a different host: %s\nThe redirect was not followed. To read it, call WebFetch again with url %q and the same prompt.",
			page.URL, page.Status, page.RedirectTo, page.RedirectTo)}, nil
	case page.Kind == web.KindBinary:
		return tool.Result{Meta: meta, IsError: true, Output: fmt.Sprintf(
			"Cannot read binary content: %s is %s (%s). WebFetch reads HTML, Markdown, text and JSON; look for an HTML version of the document.",
			page.FinalURL, cmp.Or(page.ContentType, "an unknown type"), webSize(page.Size))}, nil
	case strings.TrimSpace(page.Content) == "":
		return tool.Result{Meta: meta, IsError: true, Output: fmt.Sprintf(
			"%s has no readable text (the page may be built by JavaScript). Try another URL for the same content.", page.FinalURL)}, nil
	}

	var small tool.SmallModel
	if env != nil {
		small = env.Small
	}
	if small == nil {
		return tool.Result{Meta: meta, Output: webRawPage(page, source, prompt, "No small model is configured, so the page itself follows")}, nil
	}
	fence := web.NewFence()
	answer, err := small.Complete(ctx, webFetchSystem(fence), webFetchUser(page, fence, prompt))
	switch {
	case err != nil && ctx.Err() != nil:
		return tool.Result{}, fmt.Errorf("WebFetch %s: small model: %w", in.URL, err)
	case err != nil:
		return tool.Result{Meta: meta, Output: webRawPage(page, source, prompt, fmt.Sprintf("The small model failed (%v), so the page itself follows", err))}, nil
	case strings.TrimSpace(answer) == "":
		return tool.Result{Meta: meta, Output: webRawPage(page, source, prompt, "The small model gave no answer, so the page itself follows")}, nil
	}
	return tool.Result{Meta: meta, Output: webAnswer(answer, source)}, nil
}

// webAnswer fences the small model's answer for the calling model: it is
// derived from the page, so a page that talked the small model into
// relaying instructions still reaches the caller as data.
func webAnswer(answer, source string) string {
	f := untrusted.NewFence(untrusted.WebContent, "derived from a web page (another model's answer about it)")
	return f.Rule() + "\n\n" + f.Wrap(strings.TrimSpace(answer)) + "\n\n" + source
}

// webFetchSystem is the small model's system prompt: answer the agent's
// prompt from the page, treating the page strictly as data.
func webFetchSystem(f untrusted.Fence) string {
	return "You read a web page on behalf of a coding agent and answer the agent's request about it.\n\n" +
		f.Rule() + "\n\n" +
		"Answer the request that follows the closing marker, using only what the page says:\n" +
		"- Be concise and specific; keep exact names, versions, flags, code and values verbatim (code in fenced blocks).\n" +
		"- If the page does not contain the answer, say so plainly; never invent content.\n" +
		"- Quote short passages rather than paraphrasing when wording matters.\n" +
		"- No preamble."
}

// webFetchUser is the small model's user message: the page, fenced, then
// the agent's request outside the fence.
func webFetchUser(p *web.Page, f untrusted.Fence, prompt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Page: %s\n", p.FinalURL)
	if p.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", f.Defuse(p.Title))
	}
	if p.Truncated {
		b.WriteString("(The page was cut to fit; its end is missing.)\n")
	}
	b.WriteString("\n" + f.Wrap(p.Content) + "\n\n")
	b.WriteString("Request from the agent:\n" + prompt)
	return b.String()
}

// webRawPage returns the page itself, fenced and capped, for the calling
// model to read when no small model answered.
func webRawPage(p *web.Page, source, prompt, why string) string {
	f := web.NewFence()
	content, _ := web.Cut(p.Content, webFetchRawLimit)
	var b strings.Builder
	b.WriteString(source + "\n")
	if p.Title != "" {
		b.WriteString("Title: " + f.Defuse(p.Title) + "\n")
	}
	fmt.Fprintf(&b, "%s; answer the prompt from it yourself: %q\n\n", why, prompt)
	b.WriteString(f.Rule() + "\n\n")
	b.WriteString(f.Wrap(content))
	return b.String()
}

// webFetchFailure turns a fetch error into a result the model can act on.
func webFetchFailure(rawURL string, err error) tool.Result {
	var (
		blocked *web.BlockedError
		status  *web.HTTPError
	)
	switch {
	case errors.As(err, &blocked):
		return tool.Errorf("Refused to fetch %s: %v.", rawURL, blocked)
	case errors.As(err, &status):
		return tool.Errorf("%s answered HTTP %d (%s). Check the URL, or find the page another way.", status.URL, status.StatusCode, webStatusHint(status.StatusCode))
	case errors.Is(err, web.ErrInvalidURL):
		return tool.Errorf("Cannot fetch %q: %s. Give a complete http:// or https:// URL.", rawURL, strings.TrimPrefix(err.Error(), "web: "))
	case errors.Is(err, web.ErrTimeout):
		return tool.Errorf("Fetching %s timed out. The site may be slow or down; try again later or another source.", rawURL)
	}
	return tool.Errorf("Could not fetch %s: %s", rawURL, strings.TrimPrefix(err.Error(), "web: "))
}

func webStatusHint(code int) string {
	switch {
	case code == 401 || code == 403:
		return "access denied; the page needs a login or blocks automated readers"
	case code == 404 || code == 410:
		return "not found"
	case code == 429:
		return "rate limited"
	case code >= 500:
		return "server error"
	}
	return "request failed"
}

func webSize(n int64) string {
	switch {
	case n < 0:
		return "size unknown"
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
