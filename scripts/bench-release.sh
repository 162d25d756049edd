#!/bin/sh
# bench-release.sh [PROBES...]: how long the machine takes to be as before
# after an exact recording (uprobes on every function entry), as root.
#
# For each size (default 1000 5000) a generated C program with that many
# functions is recorded with `hwprof record --source exact`. From the moment
# hwprof returns, the script measures:
#   returned     hwprof's wall time (attach, run, detach);
#   released     the time until nothing of the recording is left (0: when
#                hwprof returned already): no
#                background releaser of it runs and its probe group
#                (hwprof_PID_N) is gone from tracefs's uprobe_events;
#   next exact   the wall time of another, one-probe exact recording started
#                at once (of testdata/c/release_leaf.c: 1000 calls of one
#                function; quiet: the same on an idle machine);
#   starts       the time of 200 process starts (/bin/true) right after, and
#                quiet.
# Quiet figures are taken before the first size and are medians of 3, once
# no releaser or probe of any hwprof is left (waiting at most 2 minutes: on
# a shared machine others may be recording; the script says so).
set -eu
SIZES=${*:-1000 5000}
[ "$(id -u)" = 0 ] || { echo "run as root (uprobes)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
(cd "$root" && go build -o "$dir/hwprof" ./cmd/hwprof)
tracefs=/sys/kernel/tracing
[ -e $tracefs/uprobe_events ] || tracefs=/sys/kernel/debug/tracing

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f\n", b - a }'; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
leftover() { # background releasers or probe groups of hwprof ($1: of pid $1 only) still there
	pgrep -f "__hwprof_release_perf_events__.* hwprof_${1:-}" >/dev/null && return 0
	grep -q "^p:hwprof_${1:-}" $tracefs/uprobe_events 2>/dev/null
}
wait_clean() { # SECONDS [PID_]: until nothing is left, at most SECONDS
	t0=$(now)
	while leftover "${2:-}" && [ "$(since "$t0" | cut -d. -f1)" -lt "$1" ]; do sleep 0.05; done
}
starts() { # seconds for 200 process starts
	t=$(now)
	i=0
	while [ $i -lt 200 ]; do /bin/true; i=$((i + 1)); done
	since "$t"
}
exact1() { # seconds for a one-probe exact recording
	t=$(now)
	"$dir/hwprof" record -q --source exact --max-slowdown 0 --probe-filter '^leaf$' -o "$dir/l.data" -- "$dir/leaf" >/dev/null 2>&1
	since "$t"
}

gcc -O2 -o "$dir/leaf" "$root/testdata/c/release_leaf.c"

wait_clean 120
leftover && echo "(other hwprof releasers or probes are on this machine: the quiet figures include them)"
for r in 1 2 3; do starts; done | median > "$dir/q.starts"
for r in 1 2 3; do exact1; done | median > "$dir/q.exact"
echo "quiet: 200 process starts $(cat "$dir/q.starts")s; one-probe exact recording $(cat "$dir/q.exact")s"

for n in $SIZES; do
	awk -v n="$n" 'BEGIN {
		print "volatile int sink;";
		for (i = 0; i < n; i++) printf "__attribute__((noipa)) void f%d(void) { sink += %d; }\n", i, i;
		print "int main(void) {"; for (i = 0; i < n; i++) printf "\tf%d();\n", i; print "\treturn 0;\n}" }' > "$dir/many.c"
	gcc -O1 -o "$dir/many" "$dir/many.c"
	t=$(now)
	"$dir/hwprof" record -q --source exact --max-slowdown 0 --probe-filter '^f[0-9]+$' -o "$dir/m.data" -- "$dir/many" >/dev/null 2>&1 &
	pid=$!
	wait $pid || true
	ret=$(since "$t")
	t=$(now)
	left=yes
	leftover "${pid}_" || left=no
	s=$(starts)
	e=$(exact1)
	wait_clean 1800 "${pid}_"
	rel=$(since "$t")
	leftover "${pid}_" && rel="over 1800"
	[ $left = no ] && rel=0
	echo "$n probes: hwprof returned after ${ret}s; released ${rel}s later;" \
		"right after: 200 starts ${s}s, one-probe exact recording ${e}s"
done
