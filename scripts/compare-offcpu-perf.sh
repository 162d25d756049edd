#!/usr/bin/env bash
# hwprof's off-CPU time against perf's sched_switch method, each against
# the truth: testdata/c/waits.c measures its own waits (a thread that
# sleeps, one that reads a pipe fed on a schedule, the main thread waiting
# for children) and prints them. One run under `hwprof record --off-cpu`
# (each waiting function's time off the CPU), one under `perf sched
# record` (perf's tracepoint method, root only; `perf sched timehist`:
# each thread's wait time + scheduling delay, the thread that does only
# that wait), each compared with the truth its own run printed.
#
# usage: scripts/compare-offcpu-perf.sh [SECONDS]   (default 1)
set -euo pipefail
secs=${1:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/hwprof" ./cmd/hwprof)
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$tmp/waits" "$root/testdata/c/waits.c"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/hwprof" record -q --off-cpu -o "$tmp/h.data" -- "$tmp/waits" "$secs" > "$tmp/h.truth"
"$tmp/hwprof" report -i "$tmp/h.data" --format json > "$tmp/h.json" 2>/dev/null
perf sched record -q -o "$tmp/p.data" -- "$tmp/waits" "$secs" > "$tmp/p.truth" 2>/dev/null
# perf: per thread of the program, wait time + sch delay (ms), in thread
# creation order: main, sleeper, feeder, reader, holder, locker, spinner
perf sched timehist -i "$tmp/p.data" 2>/dev/null | awk -v pid="$(head -c0 /dev/null)" '
	$3 ~ /^waits\[/ { t = $3; sub(/^waits\[/, "", t); sub(/[\/\]].*/, "", t); w[t] += $4 + $5; if (!(t in seen)) { seen[t] = 1; order[n++] = t } }
	END { for (i = 0; i < n; i++) print order[i], w[order[i]] }' | sort -n > "$tmp/p.threads"
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
def truth(f):
    return {l.split()[0]: int(l.split()[1]) for l in open(f) if l.startswith("wait_")}
ht, pt = truth(tmp + "/h.truth"), truth(tmp + "/p.truth")
rep = json.load(open(tmp + "/h.json"))
hw = {f["name"]: f["offcpu_total_ns"] for f in rep["functions"] if f.get("offcpu_total_ns")}
threads = [l.split() for l in open(tmp + "/p.threads")]
# the main thread (lowest tid, the process) waits for children; tids of the
# others in creation order: sleeper 1st, reader 3rd
tids = [int(t) for t, _ in threads]
ms = {int(t): float(v) for t, v in threads}
main = min(tids)
others = sorted(t for t in tids if t != main)
# forked children are processes with their own pid: keep the threads the
# main thread created first (six), the children come later
perfns = {"wait_child": ms[main] * 1e6}
if len(others) >= 3:
    perfns["wait_sleep"] = ms[others[0]] * 1e6
    perfns["wait_pipe"] = ms[others[2]] * 1e6
print(f"{'wait':<11} {'truth (hwprof run)':>19} {'hwprof':>14} {'error':>8}   {'truth (perf run)':>17} {'perf sched':>14} {'error':>8}")
for w in ("wait_sleep", "wait_pipe", "wait_child", "wait_mutex"):
    h, p = hw.get(w), perfns.get(w)
    he = f"{100*(h-ht[w])/ht[w]:+.2f}%" if h else "-"
    pe = f"{100*(p-pt[w])/pt[w]:+.2f}%" if p else "-"
    print(f"{w:<11} {ht[w]:>19} {h or 0:>14} {he:>8}   {pt[w]:>17} {int(p or 0):>14} {pe:>8}")
print("perf sched: per thread (wait time + sch delay), the thread that does only that wait; wait_mutex's thread also sleeps")
print("hwprof: each waiting function's time off the CPU (record --off-cpu, frame pointers)")
PY
