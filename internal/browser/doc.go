// Package browser is Odin's side of WebBrowser: it starts odin-browser, the
// helper process that drives a headless Chromium over the DevTools
// protocol (package browser/driver, linked only into odin-browser), one per
// agent run, inside the session's sandbox, and makes every HTTP request
// the page issues through Odin's address policy. odin-browser and the
// Chromium it starts have no network of their own: the sandbox gives them
// a private loopback only, and the driver intercepts each request of the
// page (the DevTools Fetch domain) and sends it here over the pipe.
//
// A Pool is safe for concurrent use; each Browser runs one command at a
// time.
package browser
