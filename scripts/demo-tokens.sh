#!/usr/bin/env bash
# The gated demo's prompt tokens: runs `make demo`'s task (demo/script.yaml
# on a copy of demo/sample) with the odin in ODIN_DIR (default $BIN or
# bin/) against the scripted model server in $BIN (its prefix cache counts
# cached tokens from the requests' bytes, the same for every build), and
# prints "PROMPT CACHED" for the run: its prompt tokens and how many of them
# a provider's prefix cache serves. Needs Go (the demo's QA checks).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${BIN:-$repo/bin}" && pwd)
odin_dir=$(cd "${ODIN_DIR:-$bin}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/odin-demo-tokens.XXXXXX")
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT INT TERM
cp -R "$repo/demo/sample" "$work/project"
project=$(cd "$work/project" && pwd -P)
export XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config"
unset OPENAI_API_KEY
"$bin/scripted-model" --script "$repo/demo/script.yaml" --var "root=$project" >"$work/url" 2>"$work/model.log" &
server=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url=$(head -n1 "$work/url")
OPENAI_BASE_URL="$url" "$odin_dir/odin" -C "$project" --model scripted-main --small-model scripted-small -o json run "add rate limiting to the API" >"$work/out.json" 2>"$work/err" || true
python3 - "$work/out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
u = r.get("usage", {})
cached = u.get("cache_read_input_tokens", 0)
print(u.get("input_tokens", 0) + cached + u.get("cache_creation_input_tokens", 0), cached)
PY
