// Package mcp connects a session to Model Context Protocol servers through
// the official Go SDK and presents their tools as Odin tools named
// mcp__SERVER__TOOL, their resources and their prompts.
//
// A Manager owns one supervisor goroutine per server: it connects (stdio
// through an injectable launcher, Streamable HTTP or legacy SSE), lists the
// tools, follows tools/list_changed, restarts a server that dies with
// exponential backoff, and stops every server when the Manager is closed.
// A server that cannot start is reported once and contributes no tools.
// Tools returns a snapshot without waiting, so no model request waits on a
// server; lazy servers advertise the tool list remembered from an earlier
// session and start on their first call.
//
// Tool results become text plus images (image content and image resource
// blobs, checked by llm.NewImage). Resources and Prompts list what ready
// servers offer, for the REPL's @server:uri and /mcp__server__prompt;
// ReadResource and GetPrompt fetch them. A stdio server's stderr is kept
// in a bounded tail (Status) and a rotated log file under Options.LogDir.
//
// The client offers Options.Roots as roots (SetRoots notifies
// roots/list_changed), shows a call's progress notifications through the
// call's tool.Env.Publish, asks servers for Odin's log level and logs what
// they send, and hands input requests (elicitation) to Options.Elicit. A
// failure's stderr or error text is searched for the paths it names
// (PathProblems), which Options.Explain turns into the sandbox's reason.
//
// An http server that answers 401 is authorized with OAuth 2.1 through the
// SDK's auth package (oauth.go): the token comes from Options.Auth, a
// TokenStore of 0600 files, and is refreshed there; with Options.Login set
// (`odin mcp login`) the browser flow runs, else the server is in
// StateNeedsLogin and contributes no tools.
package mcp
