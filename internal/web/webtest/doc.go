// Package webtest serves local web sites for tests of the web layer: pages
// from txtar archives with headers, redirects and charsets given as
// directives, extra handlers for slow or huge responses, request counts,
// and a DNS resolver answering from a table so a name can point at an
// internal address. Nothing here touches the network beyond loopback.
package webtest
