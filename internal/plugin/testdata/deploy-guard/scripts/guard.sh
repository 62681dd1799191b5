#!/bin/sh
# PreToolUse guard: the event arrives as JSON on stdin; exit 2 blocks the
# call and stderr tells the model why. The refusal text lives beside the
# script, found through $CLAUDE_PLUGIN_ROOT as Claude Code sets it.
event=$(cat)
case "$event" in
*deploy*)
	cat "$CLAUDE_PLUGIN_ROOT/scripts/refusal.txt" >&2
	exit 2
	;;
esac
exit 0
