// Package acp puts Odin sessions behind the Agent Client Protocol
// (https://agentclientprotocol.com), so that editors (Zed, JetBrains IDEs,
// Neovim, Emacs) drive Odin over stdio. The JSON-RPC framing and the
// protocol's types come from github.com/coder/acp-go-sdk, the Go SDK the
// protocol's site lists; this package only maps ACP requests onto a
// Session and Odin's events onto session/update notifications.
package acp
