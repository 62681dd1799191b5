#!/usr/bin/env bash
# Where a two-turn `odin run`'s peak RSS comes from (issue 37): runs the
# benchmark's task (ReadFile, then an answer) against the scripted model
# under gdb, stops the process three times — at the first package
# initialiser (Go's runtime started), at main.main (every package
# initialised) and at exit_group (the peak: nothing is unmapped before) —
# and reads which pages of the binary are resident (/proc/PID/pagemap) and
# the anonymous and file-backed RSS (/proc/PID/status). The pages are then
# attributed to the binary's regions (code, type descriptors, the pcln
# tables) and to packages through the symbol table.
#
# The release binary is stripped, so the attribution uses a copy linked
# with the symbol table (the same layout: -s -w only drop sections that
# are not loaded; the script checks the section addresses). The binary's
# page cache is dropped first and warmed by one run, as scripts/bench.sh
# does, so that the kernel's page-cache folios are those of a binary read
# from disk, not the large ones the linker's writes leave.
#
# Usage: scripts/rss-breakdown.sh [BIN_DIR] (default bin; needs its odin
# and scripted-model, gdb, python3 and go).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:-$repo/bin}" && pwd -P)
for tool in gdb python3 go; do
	command -v "$tool" >/dev/null || { echo "rss-breakdown: $tool is needed" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/odin-rss.XXXXXX")
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT INT TERM

# The symbol table comes from a copy built from this tree with the
# release's flags but -s -w; a tree that is not the binary's is refused.
version=$("$bin/odin" --version | awk '{print $NF}')
(cd "$repo" && CGO_ENABLED=0 go build -ldflags="-X github.com/odin-code/odin/internal/versionflag.Version=$version" -o "$work/odin-sym" ./cmd/odin)
sections() { readelf -SW "$1" | awk '$2 ~ /^\.(text|rodata|gopclntab|noptrdata|data)$/ {print $2, $4, $6}'; }
if [ "$(sections "$bin/odin")" != "$(sections "$work/odin-sym")" ]; then
	echo "rss-breakdown: $bin/odin was not built from this tree (section layout differs); run make build" >&2
	exit 2
fi
go tool nm -size -sort address "$work/odin-sym" >"$work/nm"

mkdir -p "$work/project"
printf 'package main\n\nfunc main() {}\n' >"$work/project/main.go"
project=$(cd "$work/project" && pwd -P)
python3 - "$project" >"$work/script.yaml" <<'PY'
import sys
print("model: m\nagents:\n  orchestrator:")
for _ in range(8):
    print('    - tool_calls:\n        - name: ReadFile\n          arguments: {file_path: "%s/main.go"}' % sys.argv[1])
    print('    - text: "main.go has an empty main."')
PY
"$bin/scripted-model" --script "$work/script.yaml" >"$work/url" 2>"$work/model.log" &
server=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
export OPENAI_BASE_URL=$(head -n1 "$work/url") OPENAI_API_KEY= NO_COLOR=1 \
	XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config"
cd "$project"
sync "$bin/odin" 2>/dev/null || true
dd if="$bin/odin" iflag=nocache count=0 status=none 2>/dev/null || true
"$bin/odin" run -q "what is in main.go?" >/dev/null # warm the cache, create the store

cat >"$work/dump.py" <<PY
import gdb, shutil, struct
def dump(phase):
    pid = gdb.selected_inferior().pid
    shutil.copy('/proc/%d/status' % pid, '$work/%s.status' % phase)
    lo = hi = None
    for line in open('/proc/%d/maps' % pid):
        if line.rstrip().endswith('$bin/odin'):
            a, b = (int(x, 16) for x in line.split()[0].split('-'))
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
    with open('/proc/%d/pagemap' % pid, 'rb') as f, open('$work/%s.pages' % phase, 'w') as out:
        f.seek(lo // 4096 * 8)
        data = f.read((hi - lo) // 4096 * 8)
        for i in range(len(data) // 8):
            if struct.unpack_from('<Q', data, i * 8)[0] >> 63:
                out.write('%x\n' % (lo + i * 4096))
PY
# The stripped binary runs; its breakpoints come from the copy's symbols.
gdb -q -batch -ex 'set pagination off' -ex 'handle all nostop noprint pass' \
	-ex "source $work/dump.py" -ex "file $work/odin-sym" -ex "exec-file $bin/odin" \
	-ex 'break runtime.doInit' -ex 'run' -ex "python dump('1-runtime')" -ex 'delete' \
	-ex 'break main.main' -ex 'continue' -ex "python dump('2-init')" -ex 'delete' \
	-ex 'catch syscall exit_group' -ex 'continue' -ex "python dump('3-exit')" -ex 'kill' \
	--args "$bin/odin" run -q "what is in main.go?" >"$work/gdb.log" 2>&1 || true
[ -s "$work/3-exit.pages" ] || { echo "rss-breakdown: gdb did not stop the run; see its log:" >&2; cat "$work/gdb.log" >&2; exit 1; }

python3 - "$work" "$work/odin-sym" <<'PY'
import bisect, re, struct, subprocess, sys
from collections import defaultdict
work, symbin = sys.argv[1], sys.argv[2]
syms, marks = [], {}
for line in open(work + '/nm'):
    p = line.split(None, 3)
    if len(p) < 4:
        continue
    addr, size, name = int(p[0], 16), int(p[1]), p[3].strip()
    marks.setdefault(name, addr)
    if size > 0:
        syms.append((addr, size, name))
syms.sort()
starts = [s[0] for s in syms]
# The pcln table's header gives its sub-tables' offsets (runtime/symtab.go's pcHeader).
ro = subprocess.run(['readelf', '-SW', symbin], capture_output=True, text=True).stdout
pcln_off = next(int(l.split()[-7], 16) for l in ro.splitlines() if '.gopclntab' in l)
with open(symbin, 'rb') as f:
    f.seek(pcln_off + 8)
    hdr = struct.unpack('<8Q', f.read(64))
pcln = marks['runtime.pclntab']
bounds = [('code', marks['runtime.text']), ('type descriptors', marks['runtime.types']),
          ('strings, itabs, other read-only data', marks['go:string.*']), ('pcln: function names', pcln + hdr[3]),
          ('pcln: files', pcln + hdr[4]), ('pcln: pc-value tables', pcln + hdr[6]),
          ('pcln: function table', pcln + hdr[7]), ('pcln: funcdata (stack maps)', marks['go:func.*']),
          ('pcln: findfunctab, typelinks, itablinks', marks['runtime.findfunctab']),
          ('data, bss (private copies)', marks['runtime.noptrdata']), ('end', 1 << 62)]
def region(a):
    for (name, lo), (_, hi) in zip(bounds, bounds[1:]):
        if lo <= a < hi:
            return name
    return 'other'
def pkg(n):
    n = re.sub(r'^(type:\.eq\.|go:itab\.\*?|type:\*?)', '', n)
    m = re.match(r'^((?:[\w.\-~]+/)*[\w\-~]+)', n)
    parts = (m.group(1) if m else n).split('/')
    if parts[0] == 'github.com' and parts[1:3] == ['odin-code', 'odin']:
        return 'odin (own code)'
    return '/'.join(parts[:3]) if '.' in parts[0] else 'std: ' + parts[0]
def status(phase):
    kv = dict(l.split(':', 1) for l in open('%s/%s.status' % (work, phase)))
    return {k: int(kv[k].split()[0]) / 1024 for k in ('VmHWM', 'RssAnon', 'RssFile')}
phases = ['1-runtime', '2-init', '3-exit']
pages = {p: set(int(l, 16) for l in open('%s/%s.pages' % (work, p))) for p in phases}
print('phase                       RSS MB  anon MB  file MB   new binary pages MB')
prev = set()
for p in phases:
    s = status(p)
    print('%-26s %7.1f %8.1f %8.1f   %6.1f' % (p, s['VmHWM'], s['RssAnon'], s['RssFile'], len(pages[p] - prev) / 256))
    prev = pages[p]
prev = set()
for p in phases:
    new = pages[p] - prev
    prev = pages[p]
    per_region, per_pkg = defaultdict(int), defaultdict(float)
    for pg in new:
        per_region[region(pg)] += 1
        if region(pg) == 'code':
            i = bisect.bisect_right(starts, pg) - 1
            while 0 <= i < len(syms) and syms[i][0] < pg + 4096:
                a, size, name = syms[i]
                overlap = min(a + size, pg + 4096) - max(a, pg)
                if overlap > 0:
                    per_pkg[pkg(name)] += overlap
                i += 1
    print('\n%s: %.1f MB of the binary newly resident' % (p, len(new) / 256))
    for name, _ in bounds[:-1]:
        if per_region[name]:
            print('  %-42s %5.1f MB' % (name, per_region[name] / 256))
    print('  code by package (top 12):')
    for k, v in sorted(per_pkg.items(), key=lambda kv: -kv[1])[:12]:
        print('    %-40s %5.2f MB' % (k, v / 2**20))
PY
