#!/usr/bin/env bash
# Issue #18's targets, measured on the release build in $BIN (make bench
# builds it) against the scripted model server, each printed beside today's
# baseline (main before the issue's changes, measured on the same machine)
# and Codex's figures from the issue. Wall times are medians of RUNS runs
# of the whole process, over ROUNDS rounds; on a shared machine compare
# them within one run of this script, never across machines.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${BIN:-$repo/bin}" && pwd)
runs=${RUNS:-15}
cd "$repo"

# Today's main (a2c51f1, before issue #18) as the issue measured it, and
# Codex (native) from the issue. With BASE_BIN set to a directory holding
# main's odin, main is measured here instead, in the same run.
base_run_ms=40 base_run_cpu=50.3 base_run_mb=50.3 base_version_ms=13.6 base_req_kb=36.1 base_fanout_x=1.15
codex_run_ms=353 codex_run_mb=154 codex_req_kb=38.8

# A binary fresh from the linker sits in the page cache in the large folios
# its writes made, and the kernel maps whole folios on a fault: the same
# binary then shows ~7 MB more RSS than once read back from disk. Each
# binary's cached pages are dropped first so that builds compare alike.
bench() { dd if="$1/odin" iflag=nocache count=0 status=none 2>/dev/null || true; ODIN_TEST_BIN_DIR="$1" go test ./test/e2e -run '^$' -bench 'RunOverhead|Version' -benchtime "${runs}x" -count 1; }
# metric OUTPUT BENCH UNIT: the value reported before UNIT on BENCH's line.
metric() { awk -v b="$2" -v u="$3" '$1 ~ "^"b"(-[0-9]+)?$" { for (i = 2; i <= NF; i++) if ($i == u) print $(i-1) }' <<<"$1"; }
# The machine's speed drifts (a shared VM): with BASE_BIN, the two builds
# are measured in alternating rounds and each figure is the median of the
# rounds' medians, so a slow minute hits both alike.
rounds=${ROUNDS:-3}
med() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
base_outs=() outs=()
for ((r = 0; r < rounds; r++)); do
	if [ -n "${BASE_BIN:-}" ]; then base_outs+=("$(bench "$(cd "$BASE_BIN" && pwd)")"); fi
	outs+=("$(bench "$bin")")
done
# over ARRAY BENCH UNIT: the median over the rounds of BENCH's UNIT.
over() { local -n arr=$1; for o in "${arr[@]}"; do metric "$o" "$2" "$3"; done | med; }
if [ -n "${BASE_BIN:-}" ]; then
	base_run_ms=$(over base_outs BenchmarkRunOverhead ms/run)
	base_run_cpu=$(over base_outs BenchmarkRunOverhead ms-cpu)
	base_run_mb=$(over base_outs BenchmarkRunOverhead MB-rss)
	base_version_ms=$(over base_outs BenchmarkVersion ms/run)
	base_req_kb=$(over base_outs BenchmarkRunOverhead KB-1st-request)
fi
fan=$(go test ./actors -run '^$' -bench '^BenchmarkFanOut$' -benchtime 3x -count 1)

run_ms=$(over outs BenchmarkRunOverhead ms/run)
run_cpu=$(over outs BenchmarkRunOverhead ms-cpu)
run_mb=$(over outs BenchmarkRunOverhead MB-rss)
first_ms=$(over outs BenchmarkRunOverhead ms-to-1st-request)
req_kb=$(over outs BenchmarkRunOverhead KB-1st-request)
version_ms=$(over outs BenchmarkVersion ms/run)
fan_x=$(metric "$fan" 'BenchmarkFanOut/specialists=256' x-single)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
row() { printf '%-34s %9s %9s %9s %9s %11s %11s\n' "$@"; }
row "target" "goal" "main" "codex" "now" "now/main" "now/codex"
row "odin run, two turns: wall ms" "<= 25" "$base_run_ms" "$codex_run_ms" "$run_ms" "$(ratio "$run_ms" "$base_run_ms")" "$(ratio "$run_ms" "$codex_run_ms")"
row "odin run: CPU ms (user+sys)" "-" "$base_run_cpu" "-" "$run_cpu" "$(ratio "$run_cpu" "$base_run_cpu")" "-"
row "odin run: peak RSS MB" "<= 32" "$base_run_mb" "$codex_run_mb" "$run_mb" "$(ratio "$run_mb" "$base_run_mb")" "$(ratio "$run_mb" "$codex_run_mb")"
row "odin --version: wall ms" "<= 8" "$base_version_ms" "-" "$version_ms" "$(ratio "$version_ms" "$base_version_ms")" "-"
row "first request KB" "<= 22" "$base_req_kb" "$codex_req_kb" "$req_kb" "$(ratio "$req_kb" "$base_req_kb")" "$(ratio "$req_kb" "$codex_req_kb")"
row "256 specialists vs one" "<= 1.2x" "${base_fanout_x}x(64)" "-" "${fan_x}x" "-" "-"
# The gated demo's prompt tokens and cached share (issue 37), one run per
# build: the scripted model answers alike, so the figures do not drift.
share() { awk -v p="$1" -v c="$2" 'BEGIN { if (p > 0) printf "%.1f%%", 100 * c / p; else print "-" }'; }
read -r demo_p demo_c < <(BIN="$bin" ./scripts/demo-tokens.sh)
base_demo="-" base_share="-"
if [ -n "${BASE_BIN:-}" ]; then
	read -r bp bc < <(BIN="$bin" ODIN_DIR="$BASE_BIN" ./scripts/demo-tokens.sh)
	base_demo=$bp base_share=$(share "$bp" "$bc")
fi
row "demo: prompt tokens" "<= 55000" "$base_demo" "-" "$demo_p" "$( [ "$base_demo" != - ] && ratio "$demo_p" "$base_demo" || echo -)" "-"
row "demo: cached share" ">= 75%" "$base_share" "-" "$(share "$demo_p" "$demo_c")" "-" "-"
echo
echo "to the first request: ${first_ms} ms. Prompt-cache prefix (>= 95%): go test ./test/e2e -run TestDemoAnswer -v;"
echo "where the demo's prompt tokens go: make demo (odin stats --by part)."
