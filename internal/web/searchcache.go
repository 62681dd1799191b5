package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/odin-code/odin/config"
)

// CachedSearcher caches a Searcher's results per the research TTLs (seed
// 004: results are cached for 24h, security queries for 1h): a query that
// names a CVE, an advisory or a vulnerability lives
// web.research_ttl.security, any other web.research_ttl.general. Queries
// differing only in case and spacing share an entry. Failed searches are
// not cached. It is safe for concurrent use when its Searcher and Cache
// are.
type CachedSearcher struct {
	Searcher Searcher
	Cache    Cache
	TTL      config.ResearchTTL
	// Now is the clock; default time.Now.
	Now func() time.Time
}

var securityQuery = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(cve-\d{4}-\d+|cve|ghsa-[a-z0-9-]+|advisory|advisories|vulnerabilit(y|ies)|exploit|security)\b`)
})

// Search implements Searcher.
func (c *CachedSearcher) Search(ctx context.Context, query string, n int) ([]SearchHit, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	norm := strings.Join(strings.Fields(strings.ToLower(query)), " ")
	sum := sha256.Sum256([]byte(norm))
	key := fmt.Sprintf("search:v1:%d:%s", n, hex.EncodeToString(sum[:]))
	ttl := ResearchTTL("", c.TTL)
	if securityQuery().MatchString(query) {
		ttl = ResearchTTL(SourceSecurity, c.TTL)
	}
	if raw, at, ok, err := c.Cache.Get(ctx, key); err == nil && ok && now().Sub(at) < ttl {
		var hits []SearchHit
		if json.Unmarshal(raw, &hits) == nil {
			return hits, nil
		}
	}
	hits, err := c.Searcher.Search(ctx, query, n)
	if err != nil {
		return nil, err
	}
	if raw, err := json.Marshal(hits); err == nil {
		// A cache that cannot store only costs the next search.
		_ = c.Cache.Put(ctx, key, raw, now())
	}
	return hits, nil
}
