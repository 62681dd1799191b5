#!/usr/bin/env bash
# build-progress.sh runs a build whose go commands were given -v and turns
# the package names they print as they compile into a progress line every
# few packages, so a cold first build (SQLite and the other dependencies:
# minutes on a fresh machine) is never minutes of silence. Anything else
# the build prints (downloads, errors) passes through as it is; the exit
# status is the build's.
set -o pipefail
start=$SECONDS
"$@" 2>&1 | awk -v start="$start" '
	/^[A-Za-z0-9._~\/-]+$/ {
		n++
		if (n == 1 || n % 25 == 0) {
			printf "  compiled %d package%s (%s)\n", n, (n == 1 ? "" : "s"), $0
			fflush()
		}
		next
	}
	{ print; fflush() }
	END { if (n > 0) printf "  compiled %d packages\n", n }
'
