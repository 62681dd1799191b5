// Command scripted-model serves an llmtest script as an OpenAI-compatible
// model on a loopback port, for `make demo` and manual runs of Odin without
// a real provider.
//
//	scripted-model --script demo.yaml [--addr 127.0.0.1:0] [--var root=/tmp/x ...] [--prompt-cache=false] [--context-window N] [-v]
//
// The first line on stdout is the base URL (http://127.0.0.1:PORT/v1), so a
// shell script can capture it; -v logs each request to stderr. It runs
// until SIGINT or SIGTERM and then exits 0.
package main
