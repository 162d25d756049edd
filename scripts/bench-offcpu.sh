#!/usr/bin/env bash
# The cost of off-CPU recording on a program that switches all the time:
# testdata/c/pingpong.c (two threads passing a byte over pipes, ~100,000
# switches a second) runs alone, under `hwprof record --off-cpu`, and under
# perf's own method (`perf record -e sched:sched_switch -g`, which needs
# tracepoint access: root here), the two tools' order alternating round by
# round. Each run's throughput is its round trips per second of wall time;
# the table gives each tool's slowdown against the same round's run alone,
# and the medians over the rounds.
#
# usage: scripts/bench-offcpu.sh [ROUNDS [SECONDS]]   (default 10 rounds of 2 s)
set -euo pipefail
rounds=${1:-10}
secs=${2:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/hwprof" ./cmd/hwprof)
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$tmp/pingpong" "$root/testdata/c/pingpong.c"
rate() { awk '/^work/{printf "%.0f", $2 / $4}'; }
alone() { "$tmp/pingpong" "$secs" | rate; }
hw() { "$tmp/hwprof" record -q --off-cpu -o "$tmp/h.data" -- "$tmp/pingpong" "$secs" | rate; }
pf() { perf record -q -e sched:sched_switch -g -o "$tmp/p.data" -- "$tmp/pingpong" "$secs" 2>/dev/null | rate; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%5s %10s %10s %10s %12s %12s\n' round alone hwprof perf "hwprof slow" "perf slow"
for r in $(seq "$rounds"); do
	a=$(alone)
	if [ $((r % 2)) = 1 ]; then h=$(hw); p=$(pf); else p=$(pf); h=$(hw); fi
	printf '%5d %10d %10d %10d %11.1f%% %11.1f%%\n' "$r" "$a" "$h" "$p" \
		"$(echo "100 * ($a - $h) / $a" | bc -l)" "$(echo "100 * ($a - $p) / $a" | bc -l)"
done | tee "$tmp/rounds"
med() { sort -g | awk '{d[NR] = $1} END{print d[int((NR + 1) / 2)]}'; }
echo "median slowdown: hwprof --off-cpu $(awk '{print $5}' "$tmp/rounds" | tr -d % | med)%," \
	"perf sched_switch -g $(awk '{print $6}' "$tmp/rounds" | tr -d % | med)%"
"$tmp/hwprof" report -i "$tmp/h.data" --format json 2>/dev/null | grep -o '"offcpu_[a-z_]*": *[0-9]*' | head -5 || true
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
