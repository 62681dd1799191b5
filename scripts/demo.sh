#!/usr/bin/env bash
# The offline demo: Odin makes a real multi-agent, quality-gated change to a
# copy of demo/sample, with a SCRIPTED model (demo/script.yaml) served on a
# loopback port instead of a real LLM. Needs only Go (for the QA checks).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN:-$repo/bin}
[ -x "$bin/odin" ] && [ -x "$bin/scripted-model" ] || { echo "Building odin first (a few minutes on a fresh machine: it compiles SQLite and the other dependencies)..."; make -C "$repo" build BIN="$bin" >/dev/null; }
work=$(mktemp -d "${TMPDIR:-/tmp}/odin-demo.XXXXXX")
server=""
keep=""
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null || true
	[ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT INT TERM

bold=$'\e[1m'; dim=$'\e[2m'; yellow=$'\e[33m'; reset=$'\e[0m'
if [ -n "${NO_COLOR:-}" ] || [ ! -t 1 ]; then bold=""; dim=""; yellow=""; reset=""; fi

cp -R "$repo/demo/sample" "$work/project"
project=$(cd "$work/project" && pwd -P)
# Isolated state and config, so the demo never touches your own sessions.
export XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config"
unset OPENAI_API_KEY

"$bin/scripted-model" --script "$repo/demo/script.yaml" --var "root=$project" >"$work/url" 2>"$work/model.log" &
server=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(head -n1 "$work/url")
[ -n "$url" ] || { echo "the scripted model server did not start:"; cat "$work/model.log"; exit 1; }

cat <<BANNER
${yellow}${bold}╭────────────────────────────────────────────────────────────────────╮
│  Odin offline demo — SCRIPTED MODEL                                 │
│  The model's answers come from demo/script.yaml, served at          │
│  $(printf '%-66s' "$url")│
│  Everything else is real: actors, tools, file edits, go build/vet/  │
│  test, quality gates, checkpoints.                                   │
╰────────────────────────────────────────────────────────────────────╯${reset}
Project: a copy of demo/sample at $project

${bold}\$ odin run "add rate limiting to the API"${reset}
BANNER

status=0
OPENAI_BASE_URL="$url" "$bin/odin" -C "$project" --model scripted-main --small-model scripted-small run "add rate limiting to the API" || status=$?

echo
echo "${bold}\$ odin checkpoints${reset}   ${dim}# every change set can be undone with odin undo${reset}"
OPENAI_BASE_URL="$url" "$bin/odin" -C "$project" checkpoints
echo
echo "${bold}\$ odin stats --by agent${reset}   ${dim}# the demo's prompt tokens; cached: what a provider's prefix cache serves at its cached rate${reset}"
OPENAI_BASE_URL="$url" "$bin/odin" -C "$project" stats --by agent --days 0
echo
echo "${bold}\$ odin stats --by part${reset}   ${dim}# where the prompt tokens go: system prompt, tool definitions, history, injected context, new input${reset}"
OPENAI_BASE_URL="$url" "$bin/odin" -C "$project" stats --by part --days 0
echo
echo "${bold}\$ go test ./...${reset}   ${dim}# in the changed project${reset}"
(cd "$project" && go test ./...)
echo
echo "${dim}odin run exited with $status (0: done and the quality gates passed). This was a scripted model;"
echo "for real use: OPENAI_API_KEY=... odin run \"...\"  or  OPENAI_BASE_URL=http://localhost:11434/v1 odin${reset}"
# The run's session stays in the demo's own state dir, for the web viewer.
session=$("$bin/odin" -C "$project" sessions 2>/dev/null | awk 'NR==2 {print $1}')
if [ -n "$session" ]; then
	keep=1
	echo
	echo "${bold}See this run in the web viewer${reset} ${dim}(lanes per agent, gates and fix rounds, transcripts, diffs, cost):${reset}"
	echo "  XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config $bin/odin -C $project view $session"
	echo "${dim}(the demo's files stay in $work; rm -rf it when done)${reset}"
fi
exit "$status"
