#!/bin/sh
# PreToolUse guard: the event arrives as JSON on stdin; exit 2 blocks the
# call and stderr tells the model why.
event=$(cat)
if [ -n "$GUARD_LOG" ]; then printf '%s\n' "$event" >> "$GUARD_LOG"; fi
case "$event" in
*deploy*)
	echo "deploy-guard: deploys go through the release pipeline, not an agent" >&2
	exit 2
	;;
esac
exit 0
