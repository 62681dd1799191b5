// Package driver is odin-browser's side of WebBrowser: it starts Chromium
// headless with a fresh profile, drives it over the DevTools protocol with
// chromedp, and hands every HTTP request the page makes to Odin over the
// pipe (the Fetch domain intercepts them before Chromium would open a
// connection). It is linked only into odin-browser, never into odin.
package driver
