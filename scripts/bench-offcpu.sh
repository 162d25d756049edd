#!/usr/bin/env bash
# The cost of off-CPU recording on a program that switches all the time:
# testdata/c/pingpong.c, two threads passing a byte over pipes, both pinned
# to one CPU (taskset -c 0) and given work between passes so that, alone,
# they switch RATE times a second (default 100,000). Pinned, every pass is
# a switch on one CPU and a round's throughput is steady to a few percent;
# unpinned on a virtual machine it depends on where the threads land and
# on how long an idle virtual CPU takes to wake (up to 2x round to round),
# and a tool that merely keeps a CPU awake makes it faster than alone.
#
# Each round runs the program alone, then, in an order that rotates round
# by round:
#   perf-sw    perf record -e sched:sched_switch -g: perf's sched_switch
#              method, the stack of every switch out, and no interval (a
#              task's event sees its switches out, not when it ran again)
#   perf-sw+i  the same with --switch-events: the stacks and the
#              PERF_RECORD_SWITCH records that say when each thread ran
#              again, the information hwprof --off-cpu records
#   perf-on+sw perf's method with an on-CPU profile beside it (-e
#              cpu-clock/freq=4000/ -e sched:sched_switch -g: a global -F
#              would sample the tracepoint at 4000 Hz too, not every
#              switch), as hwprof --off-cpu gives
#   hwprof-off hwprof record --off-cpu -F 100: off-CPU stacks and intervals
#              with the on-CPU profile at 100 Hz (next to nothing)
#   hwprof     hwprof record --off-cpu: off-CPU and on-CPU at the default
#              rate
# and prints each one's slowdown against the same round's run alone (its
# round trips per second of wall time), the medians, and what each adds per
# switch in microseconds (from the medians: 1/rate - 1/alone, over the two
# switches of a round trip). perf's tracepoint needs tracefs: root here.
#
# usage: scripts/bench-offcpu.sh [ROUNDS [SECONDS [RATE]]]
#   (default 10 rounds of 1 s at 100000 switches/s; RATE 0: no work
#   between passes, as fast as the machine switches)
set -euo pipefail
rounds=${1:-10}
secs=${2:-1}
target=${3:-100000}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/hwprof" ./cmd/hwprof)
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$tmp/pingpong" "$root/testdata/c/pingpong.c"
rate() { awk '/^work/{printf "%.0f", $2 / $4}'; }
pp() { taskset -c 0 "$tmp/pingpong" "$@"; }

# The work between passes that makes RATE switches a second alone: the
# time of a round trip grows linearly with it.
spins=0
if [ "$target" != 0 ]; then
	r0=$(pp 1 0 | rate)
	r1=$(pp 1 20000 | rate)
	spins=$(python3 -c "
r0, r1, want = $r0, $r1, $target / 2
per = (1 / r1 - 1 / r0) / 20000
print(max(0, round((1 / want - 1 / r0) / per)) if per > 0 and r0 > want else 0)")
fi

names=(perf-sw perf-sw+i perf-on+sw hwprof-off hwprof)
cmds=(
	"perf record -q -e sched:sched_switch -g -o $tmp/p.data --"
	"perf record -q -e sched:sched_switch -g --switch-events -o $tmp/p.data --"
	"perf record -q -e cpu-clock/freq=4000/ -e sched:sched_switch -g -o $tmp/p.data --"
	"$tmp/hwprof record -q --off-cpu -F 100 -o $tmp/h.data --"
	"$tmp/hwprof record -q --off-cpu -o $tmp/h.data --"
)
n=${#names[@]}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); work between passes: $spins iterations"
for r in $(seq "$rounds"); do
	line="$r $(pp "$secs" "$spins" | rate)"
	for k in $(seq 0 $((n - 1))); do
		i=$(((k + r) % n))
		v[i]=$(${cmds[i]} taskset -c 0 "$tmp/pingpong" "$secs" "$spins" 2>/dev/null | rate)
	done
	echo "$line ${v[*]}"
done >"$tmp/rounds"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/rounds" "${names[@]}" <<'PY'
import statistics as st, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
names = sys.argv[2:]
print(f"{'round':>5} {'alone/s':>9} " + " ".join(f"{n:>11}" for n in names) + "   (slowdown against alone)")
slow = [[] for _ in names]
for row in rows:
    a = row[1]
    for i, v in enumerate(row[2:]):
        slow[i].append(100 * (a - v) / a)
    print(f"{int(row[0]):>5} {2 * a:>9.0f} " + " ".join(f"{100 * (a - v) / a:>10.1f}%" for v in row[2:]))
alone = st.median(r[1] for r in rows)
print(f"{'median':>5} {2 * alone:>9.0f} " + " ".join(f"{st.median(s):>10.1f}%" for s in slow))
per = [(1 / st.median(r[2 + i] for r in rows) - 1 / alone) / 2 * 1e6 for i in range(len(names))]
print(f"{'µs/sw':>5} {'':>9} " + " ".join(f"{p:>11.2f}" for p in per) + "   (added per switch)")
PY
"$tmp/hwprof" report -i "$tmp/h.data" --format json 2>/dev/null | grep -o '"\(switches_lost\|stack_lost\)": *[0-9]*' | head -4 || true
