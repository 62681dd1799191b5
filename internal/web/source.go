package web

import (
	"net/url"
	"strings"
	"time"

	"github.com/odin-code/odin/config"
)

// Source kinds, in the order of the Research agent's source priority
// (seed 004), plus security advisories, which are official sources whose
// cache lifetime is short.
const (
	SourceOfficialDocs  = "official_docs"
	SourceSecurity      = "security"
	SourceGitHub        = "github"
	SourceStackOverflow = "stackoverflow"
	SourceBlog          = "blog"
	SourceTutorial      = "tutorial"
	SourceForum         = "forum"
	SourceOther         = "other"
)

// Default Research cache lifetimes (seed 004).
const (
	DefaultResearchGeneral  = 24 * time.Hour
	DefaultResearchDocs     = 7 * 24 * time.Hour
	DefaultResearchSecurity = time.Hour
)

// ResearchTTL is the Research agent's cache lifetime for a kind of source
// or of research: documentation ("official_docs", "documentation",
// "docs") 7 days, security advisories ("security") 1 hour, anything else
// 24 hours; cfg overrides each default.
func ResearchTTL(kind string, cfg config.ResearchTTL) time.Duration {
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case SourceOfficialDocs, "documentation", "docs":
		return cmpOr(cfg.Docs, DefaultResearchDocs)
	case SourceSecurity, "advisory", "cve":
		return cmpOr(cfg.Security, DefaultResearchSecurity)
	}
	return cmpOr(cfg.General, DefaultResearchGeneral)
}

// Reliability scores (1-10) by source kind, following the priority table:
// official docs and GitHub high, StackOverflow medium-high, blogs medium,
// tutorials medium-low, forums low.
const (
	reliabilityOfficial      = 9
	reliabilitySecurity      = 9
	reliabilityGitHub        = 8
	reliabilityStackOverflow = 7
	reliabilityBlog          = 5
	reliabilityTutorial      = 4
	reliabilityForum         = 3
	reliabilityOther         = 3
	reliabilityInvalid       = 1
)

// ClassifySource says what kind of source rawURL is and how far the
// Research agent should trust it (1-10). It looks at the host and path
// only; an unparseable URL is "other" with reliability 1.
func ClassifySource(rawURL string) (kind string, reliability int) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Hostname() == "" {
		return SourceOther, reliabilityInvalid
	}
	host := strings.TrimPrefix(canonicalHost(u.Hostname()), "www.")
	path := strings.ToLower(u.EscapedPath())
	switch {
	case isSecurity(host, path):
		return SourceSecurity, reliabilitySecurity
	case isStackOverflow(host):
		return SourceStackOverflow, reliabilityStackOverflow
	case isCodeHost(host):
		return SourceGitHub, reliabilityGitHub
	case isForum(host):
		return SourceForum, reliabilityForum
	case isTutorial(host, path):
		return SourceTutorial, reliabilityTutorial
	case isBlog(host, path):
		return SourceBlog, reliabilityBlog
	case isOfficialDocs(host, path):
		return SourceOfficialDocs, reliabilityOfficial
	}
	return SourceOther, reliabilityOther
}

// hostIs reports whether host is one of domains or a subdomain of one.
func hostIs(host string, domains ...string) bool {
	for _, d := range domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

func isSecurity(host, path string) bool {
	switch {
	case hostIs(host, "nvd.nist.gov", "cve.mitre.org", "cve.org", "osv.dev", "cisa.gov",
		"rustsec.org", "security-tracker.debian.org", "security.snyk.io", "vuldb.com", "exploit-db.com"):
		return true
	case host == "github.com" && (strings.HasPrefix(path, "/advisories") || strings.Contains(path, "/security/advisories")):
		return true
	case host == "pkg.go.dev" && strings.HasPrefix(path, "/vuln"):
		return true
	case host == "snyk.io" && strings.HasPrefix(path, "/vuln"):
		return true
	case strings.HasPrefix(path, "/security/advisories") || strings.HasPrefix(path, "/advisories/"):
		return true
	}
	return false
}

func isStackOverflow(host string) bool {
	return hostIs(host, "stackoverflow.com", "stackexchange.com", "serverfault.com", "superuser.com",
		"askubuntu.com", "mathoverflow.net")
}

func isCodeHost(host string) bool {
	return hostIs(host, "github.com", "gist.github.com", "raw.githubusercontent.com", "gitlab.com",
		"codeberg.org", "sr.ht", "bitbucket.org")
}

func isForum(host string) bool {
	if hostIs(host, "reddit.com", "news.ycombinator.com", "lobste.rs", "groups.google.com",
		"discord.com", "quora.com", "slashdot.org") {
		return true
	}
	for _, p := range []string{"forum.", "forums.", "discuss.", "discourse.", "community."} {
		if strings.HasPrefix(host, p) {
			return true
		}
	}
	return false
}

func isTutorial(host, path string) bool {
	if hostIs(host, "w3schools.com", "geeksforgeeks.org", "tutorialspoint.com", "freecodecamp.org",
		"baeldung.com", "realpython.com", "programiz.com", "javatpoint.com", "educative.io", "gobyexample.com") {
		return true
	}
	return strings.Contains(path, "/tutorial") || (host == "digitalocean.com" && strings.HasPrefix(path, "/community"))
}

func isBlog(host, path string) bool {
	if hostIs(host, "medium.com", "dev.to", "hashnode.dev", "substack.com", "hackernoon.com",
		"martinfowler.com", "dzone.com", "infoq.com", "blogspot.com", "wordpress.com") {
		return true
	}
	return strings.HasPrefix(host, "blog.") || strings.HasPrefix(host, "engineering.") ||
		strings.HasPrefix(path, "/blog") || strings.HasPrefix(path, "/posts/")
}

func isOfficialDocs(host, path string) bool {
	if hostIs(host, "go.dev", "golang.org", "pkg.go.dev", "docs.python.org", "developer.mozilla.org",
		"docs.rs", "doc.rust-lang.org", "readthedocs.io", "readthedocs.org", "learn.microsoft.com",
		"docs.oracle.com", "nodejs.org", "docs.npmjs.com", "kubernetes.io", "docs.docker.com",
		"postgresql.org", "sqlite.org", "typescriptlang.org", "react.dev", "vuejs.org", "angular.dev",
		"developer.apple.com", "developer.android.com", "cppreference.com", "man7.org", "rfc-editor.org",
		"w3.org", "whatwg.org", "hexdocs.pm", "ruby-doc.org", "php.net", "cloud.google.com", "docs.aws.amazon.com") {
		return true
	}
	for _, p := range []string{"docs.", "doc.", "developer.", "developers.", "devdocs.", "api.", "reference."} {
		if strings.HasPrefix(host, p) {
			return true
		}
	}
	for _, p := range []string{"/docs", "/doc/", "/documentation", "/reference", "/manual", "/api/", "/guide"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
