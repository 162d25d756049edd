#!/bin/sh
# bench-exact.sh [CALLS] [PROBES...]: figures of the exact source (uprobes on
# every function entry), as root.
#
#  1. Cost per probe hit: a C program (testdata/c/exact_hitcost.c) calls a
#     tiny function CALLS times (default 200000) and prints the loop's own
#     run time; it runs alone,
#     under `hwprof record --source exact --probe-filter '^leaf$'` and under
#     `perf record` on the same uprobe (perf probe -x BIN leaf; -c 1 with a
#     frame-pointer callchain and an 8-byte user stack copy, what hwprof
#     samples: --call-graph dwarf,8 adds the user registers and the stack).
#     (recorded − alone) / CALLS is the cost per hit, medians of 5 rounds.
#  2. Attach time: programs with PROBES small functions (default 1000 5000)
#     recorded with the exact source; hwprof prints the time to open every
#     probe event on every CPU. Between runs the script waits until no
#     background releaser of hwprof runs (see internal/record/release.go),
#     since releasing holds the kernel mutex that opening needs.
set -eu
CALLS=${1:-200000}
shift 2>/dev/null || true
SIZES=${*:-1000 5000}
ROUNDS=5
[ "$(id -u)" = 0 ] || { echo "run as root (uprobes)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'perf probe -q -d "probe_leaf:*" 2>/dev/null || true; rm -rf "$dir"' EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
(cd "$root" && go build -o "$dir/hwprof" ./cmd/hwprof)

wait_released() { # until no background releaser of hwprof runs
	i=0
	while pgrep -f __hwprof_release_perf_events__ >/dev/null && [ $i -lt 1200 ]; do
		sleep 1
		i=$((i + 1))
	done
}

gcc -O2 -fno-omit-frame-pointer -o "$dir/leaf" "$root/testdata/c/exact_hitcost.c"
perf probe -q -d "probe_leaf:*" 2>/dev/null || true
perf probe -q -x "$dir/leaf" leaf >/dev/null
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "== cost per probe hit: $CALLS calls of leaf(), $ROUNDS rounds, median loop time"
wait_released
: > "$dir/t.alone"; : > "$dir/t.hwprof"; : > "$dir/t.perf"; : > "$dir/t.perfdw"
for r in $(seq $ROUNDS); do
	"$dir/leaf" "$CALLS" >> "$dir/t.alone"
	"$dir/hwprof" record -q --source exact --max-slowdown 0 --probe-filter '^leaf$' -o "$dir/h.data" -- "$dir/leaf" "$CALLS" >> "$dir/t.hwprof"
	perf record -q -e probe_leaf:leaf -c 1 -g -o "$dir/p.data" -- "$dir/leaf" "$CALLS" 2>/dev/null >> "$dir/t.perf"
	perf record -q -e probe_leaf:leaf -c 1 --call-graph dwarf,8 -o "$dir/p2.data" -- "$dir/leaf" "$CALLS" 2>/dev/null >> "$dir/t.perfdw"
done
alone=$(median < "$dir/t.alone")
for k in hwprof perf perfdw; do
	t=$(median < "$dir/t.$k")
	case $k in
	hwprof) what="hwprof record --source exact";;
	perf) what="perf record -e probe_leaf:leaf -c 1 -g";;
	perfdw) what="perf record -e probe_leaf:leaf -c 1 --call-graph dwarf,8";;
	esac
	awk -v t="$t" -v a="$alone" -v n="$CALLS" -v w="$what" \
		'BEGIN { printf "%-58s %8.1f ms  %6.0f ns per hit (alone %.1f ms)\n", w, t/1e6, (t-a)/n, a/1e6 }'
done
samples=$(perf script -G -i "$dir/h.data" -F ip 2>/dev/null | wc -l)
echo "hwprof's file: $samples samples for $CALLS calls"

echo "== attach time"
for n in $SIZES; do
	awk -v n="$n" 'BEGIN {
		print "volatile int sink;";
		for (i = 0; i < n; i++) printf "__attribute__((noipa)) void f%d(void) { sink += %d; }\n", i, i;
		print "int main(void) {"; for (i = 0; i < n; i++) printf "\tf%d();\n", i; print "\treturn 0;\n}" }' > "$dir/many.c"
	gcc -O1 -o "$dir/many" "$dir/many.c"
	wait_released
	"$dir/hwprof" record --source exact --max-slowdown 0 --probe-filter '^f[0-9]+$' -o "$dir/m.data" -- "$dir/many" 2>&1 |
		grep -E 'exact: probing|attach:|recorded' | sed "s|$dir/||g"
done
wait_released
