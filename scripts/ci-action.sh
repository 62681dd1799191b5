#!/usr/bin/env bash
# The GitHub Action's run step (action.yml), also usable from any CI: runs
# one Odin task headless and writes the answer and the quality-gate report
# as Markdown, for a pull-request comment. Inputs come from the
# environment (the Action sets them from its inputs):
#   ODIN            the odin binary (default: odin on PATH)
#   ODIN_TASK       the task, or
#   ODIN_TASK_FILE  a file holding it
#   ODIN_ARGS       further flags for odin run (word-split)
#   ODIN_REPORT     where to write the Markdown report (default: odin-report.md)
# Exit code: odin run's (0 done, 1 failed, 3 a mandatory quality gate
# failed after the fix rounds, ...), so the job fails on it.
set -uo pipefail
odin=${ODIN:-odin}
report=${ODIN_REPORT:-odin-report.md}
task=${ODIN_TASK:-}
if [ -z "$task" ] && [ -n "${ODIN_TASK_FILE:-}" ]; then
	task=$(cat "$ODIN_TASK_FILE") || { echo "odin action: cannot read $ODIN_TASK_FILE" >&2; exit 2; }
fi
if [ -z "$task" ]; then
	echo "odin action: give a task (input task) or a prompt file (input prompt-file)" >&2
	exit 2
fi
json=$(mktemp)
trap 'rm -f "$json"' EXIT
# shellcheck disable=SC2086 # ODIN_ARGS is a list of flags on purpose
"$odin" run -o json ${ODIN_ARGS:-} "$task" >"$json"
status=$?
command -v jq >/dev/null 2>&1 || { echo "odin action: jq is needed to write the report" >&2; exit "$status"; }
{
	echo "### Odin: $(jq -r '.status // "no result"' "$json")"
	echo
	jq -r '.result // .error // "Odin gave no answer."' "$json"
	if jq -e '.gates' "$json" >/dev/null 2>&1; then
		echo
		echo "**Quality gates: $(jq -r 'if .gates.passed then "passed" else "FAILED" end' "$json")** after $(jq -r '.gates.fix_rounds' "$json") fix round(s)"
		echo
		echo "| stage | round | verdict | summary |"
		echo "|---|---|---|---|"
		jq -r '.gates.stages[] | "| \(.stage) | \(.round) | \(if .stage == "fix" then "done" elif .passed then "passed" else "failed" end) | \(.summary | gsub("\\|"; "\\\\|") | gsub("\n"; " ")) |"' "$json"
	fi
	files=$(jq -r '(.files // [])[]' "$json")
	if [ -n "$files" ]; then
		echo
		echo "<details><summary>Files changed</summary>"
		echo
		echo '```diff'
		jq -r '.diff // ""' "$json"
		echo '```'
		echo "</details>"
	fi
	echo
	echo "<sub>$(jq -r '"\(.num_turns) model calls, \(.usage.total_tokens // 0) tokens, " + (if .total_cost_usd == null then "cost unknown" else "$\(.total_cost_usd)" end)' "$json")</sub>"
} >"$report"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	{
		echo "exit-code=$status"
		echo "status=$(jq -r '.status // ""' "$json")"
		echo "session-id=$(jq -r '.session_id // ""' "$json")"
		echo "report=$report"
	} >>"$GITHUB_OUTPUT"
fi
exit "$status"
