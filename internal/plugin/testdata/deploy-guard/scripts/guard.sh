#!/bin/sh
# PreToolUse guard: the event arrives as JSON on stdin; exit 2 blocks the
# call and stderr tells the model why. Written for Claude Code: the tool
# is "Bash", and the refusal text lives beside the script, found through
# $CLAUDE_PLUGIN_ROOT.
event=$(cat)
case "$event" in
*'"tool_name":"Bash"'*deploy*)
	cat "$CLAUDE_PLUGIN_ROOT/scripts/refusal.txt" >&2
	exit 2
	;;
esac
exit 0
