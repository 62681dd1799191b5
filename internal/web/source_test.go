package web

import (
	"testing"
	"time"

	"github.com/odin-code/odin/config"
)

func TestClassifySource(t *testing.T) {
	tests := []struct {
		url         string
		kind        string
		reliability int
	}{
		{"https://go.dev/doc/effective_go", SourceOfficialDocs, 9},
		{"https://docs.python.org/3/library/json.html", SourceOfficialDocs, 9},
		{"https://developer.mozilla.org/en-US/docs/Web/HTTP", SourceOfficialDocs, 9},
		{"https://fastify.dev/docs/latest/", SourceOfficialDocs, 9},
		{"https://docs.example.io/start", SourceOfficialDocs, 9},
		{"https://requests.readthedocs.io/en/latest/", SourceOfficialDocs, 9},
		{"https://nvd.nist.gov/vuln/detail/CVE-2021-44228", SourceSecurity, 9},
		{"https://github.com/advisories/GHSA-jfh8-c2jp-5v3q", SourceSecurity, 9},
		{"https://github.com/lodash/lodash/security/advisories/GHSA-x", SourceSecurity, 9},
		{"https://pkg.go.dev/vuln/GO-2023-1", SourceSecurity, 9},
		{"https://github.com/golang/go/issues/1", SourceGitHub, 8},
		{"https://raw.githubusercontent.com/a/b/main/README.md", SourceGitHub, 8},
		{"https://stackoverflow.com/questions/1/x", SourceStackOverflow, 7},
		{"https://unix.stackexchange.com/questions/2/y", SourceStackOverflow, 7},
		{"https://blog.golang.org/context", SourceBlog, 5},
		{"https://medium.com/@someone/post", SourceBlog, 5},
		{"https://example.com/blog/2024/hello", SourceBlog, 5},
		{"https://www.geeksforgeeks.org/go-tutorial/", SourceTutorial, 4},
		{"https://example.com/tutorials/go", SourceTutorial, 4},
		{"https://www.reddit.com/r/golang/comments/x", SourceForum, 3},
		{"https://forum.example.org/t/1", SourceForum, 3},
		{"https://example.com/about", SourceOther, 3},
		{"::not a url", SourceOther, 1},
		{"", SourceOther, 1},
	}
	for _, tt := range tests {
		kind, rel := ClassifySource(tt.url)
		if kind != tt.kind || rel != tt.reliability {
			t.Errorf("ClassifySource(%q) = %s %d, want %s %d", tt.url, kind, rel, tt.kind, tt.reliability)
		}
	}
}

func TestResearchTTL(t *testing.T) {
	custom := config.ResearchTTL{General: 2 * time.Hour, Docs: 3 * time.Hour, Security: 4 * time.Minute}
	tests := []struct {
		kind string
		cfg  config.ResearchTTL
		want time.Duration
	}{
		{SourceOfficialDocs, config.ResearchTTL{}, 7 * 24 * time.Hour},
		{"documentation", config.ResearchTTL{}, 7 * 24 * time.Hour},
		{SourceSecurity, config.ResearchTTL{}, time.Hour},
		{SourceGitHub, config.ResearchTTL{}, 24 * time.Hour},
		{"general", config.ResearchTTL{}, 24 * time.Hour},
		{"", config.ResearchTTL{}, 24 * time.Hour},
		{SourceOfficialDocs, custom, 3 * time.Hour},
		{SourceSecurity, custom, 4 * time.Minute},
		{SourceBlog, custom, 2 * time.Hour},
	}
	for _, tt := range tests {
		if got := ResearchTTL(tt.kind, tt.cfg); got != tt.want {
			t.Errorf("ResearchTTL(%q, %+v) = %v, want %v", tt.kind, tt.cfg, got, tt.want)
		}
	}
}
