// Package web fetches web pages and searches the web for Odin's models:
// WebFetch's fetcher (colly, HTML to Markdown, size budget, cache), the
// address policy that keeps model-chosen URLs off internal networks, the
// web kind of the untrusted-content fence (internal/untrusted) for prompts,
// the source classifier and cache
// lifetimes of the Research agent, and the web search backends (SearXNG,
// Brave, Tavily).
//
// Only this package imports colly and html-to-markdown.
//
// Security model: every outbound connection is checked when it is made,
// on the IP actually dialled (after DNS, so rebinding cannot slip
// through): loopback, private, link-local, CGNAT, multicast, unspecified,
// IPv6 unique-local and other special-purpose addresses are refused unless
// the user listed the host in web.allow_hosts. Proxies from the
// environment are ignored for the same reason. Fetched text reaches a
// model only inside an untrusted.Fence, whose random nonce the page cannot forge.
package web
