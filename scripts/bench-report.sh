#!/usr/bin/env bash
# Report speed and memory: `hwprof report` against `perf report --stdio
# --no-children` on one recording of about a million samples with
# frame-pointer callchains (perf record -e cpu-clock -c 10000 -g: every
# 10 us of CPU) of a C program, built here, that calls into shared
# libraries (libc's qsort, strlen, memcpy and libm's sin through a call
# tree of its own). Rounds alternate the two commands (output to
# /dev/null); medians of wall time, CPU time (user+sys) and peak memory
# (GNU time's "Maximum resident set size") are compared; a ratio is perf's
# over hwprof's (above 1: hwprof faster or smaller). Then the
# --dedup-ratio path is run once end to end and its top functions are
# compared with the full report's.
# Needs perf, gcc and GNU time (/usr/bin/time).
#
# usage: scripts/bench-report.sh [ROUNDS] [SECONDS] [FILE]
#   ROUNDS   timing rounds (default 3)
#   SECONDS  CPU seconds of the program when recording (default 10: ~1M samples)
#   FILE     measure this recording instead of making one
set -euo pipefail
rounds=${1:-3}
secs_cpu=${2:-10}
file=${3:-}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof

if [ -z "$file" ]; then
	cat >"$tmp/prog.c" <<'C'
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
volatile double dsink;
volatile size_t sink;
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
__attribute__((noinline)) void sortit(int *v, int n) { qsort(v, n, sizeof *v, cmp); }
__attribute__((noinline)) void strs(char *s, int n) { for (int i = 0; i < n; i++) sink += strlen(s + (i & 7)); }
__attribute__((noinline)) void copy(char *d, char *s, int n) { for (int i = 0; i < n; i++) memcpy(d, s, 200 + (i & 63)); }
__attribute__((noinline)) void maths(int n) { for (int i = 0; i < n; i++) dsink += sin(i * 0.001); }
__attribute__((noinline)) void leaf(int n) { for (int i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void mid(int d, int n) { if (d == 0) { leaf(n); maths(n / 8); } else { mid(d - 1, n); leaf(n / 4); } }
__attribute__((noinline)) void tree(int *v, char *s, char *d) {
	for (int i = 0; i < 256; i++) v[i] = rand();
	sortit(v, 256); strs(s, 2000); copy(d, s, 500); mid(3, 3000); mid(6, 1000);
}
int main(int argc, char **argv) {
	double limit = argc > 1 ? atof(argv[1]) : 10;
	int v[256]; char s[512], d[512];
	memset(s, 'x', sizeof s - 1); s[sizeof s - 1] = 0;
	while ((double)clock() / CLOCKS_PER_SEC < limit) tree(v, s, d);
	return 0;
}
C
	gcc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$tmp/prog" "$tmp/prog.c" -lm
	file=$tmp/bench.data
	perf record -q -e cpu-clock -c 10000 -g -o "$file" -- "$tmp/prog" "$secs_cpu" 2>"$tmp/record.err" ||
		{ cat "$tmp/record.err"; exit 1; }
fi
samples=$("$tmp/hwprof" dump --stats -i "$file" | sed -n 's/^samples //p')
echo "recording: $file, $(du -h "$file" | cut -f1), $samples samples"

# run a command, output discarded; print wall s, CPU s (user+sys), peak RSS kB
measure() {
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	awk '{printf "%s %.3f %s\n", $1, $2 + $3, $4}' "$tmp/t"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for r in $(seq "$rounds"); do
	measure "$tmp/hwprof" report -i "$file" >>"$tmp/hw"
	measure perf report --stdio --no-children -i "$file" >>"$tmp/perf"
	printf 'round %d (wall s/cpu s/peak kB): hwprof report %s  perf report %s\n' "$r" \
		"$(tail -1 "$tmp/hw" | tr ' ' /)" "$(tail -1 "$tmp/perf" | tr ' ' /)"
done
col() { cut -d' ' -f"$1" "$2" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
hw_w=$(col 1 "$tmp/hw") hw_c=$(col 2 "$tmp/hw") hw_m=$(col 3 "$tmp/hw")
pf_w=$(col 1 "$tmp/perf") pf_c=$(col 2 "$tmp/perf") pf_m=$(col 3 "$tmp/perf")
echo "median hwprof report: wall ${hw_w}s, cpu ${hw_c}s, peak ${hw_m} kB"
echo "median perf report:   wall ${pf_w}s, cpu ${pf_c}s, peak ${pf_m} kB"
echo "perf/hwprof: wall $(ratio "$pf_w" "$hw_w")x, cpu $(ratio "$pf_c" "$hw_c")x, peak memory $(ratio "$pf_m" "$hw_m")x"

# --dedup-ratio end to end: the same functions on top, and how long it took
"$tmp/hwprof" report -i "$file" --format json --top 5 --contexts 1 >"$tmp/full.json"
measure "$tmp/hwprof" report -i "$file" --format json --top 5 --contexts 1 --dedup-ratio 0.1 >"$tmp/dd"
"$tmp/hwprof" report -i "$file" --format json --top 5 --contexts 1 --dedup-ratio 0.1 >"$tmp/dedup.json"
echo "--dedup-ratio 0.1 (wall s/cpu s/peak kB): $(tr ' ' / <"$tmp/dd")"
top() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s=%.3f" % (f["name"], f["self"]) for f in d["functions"]))' "$1"; }
echo "top self, all stacks:        $(top "$tmp/full.json")"
echo "top self, --dedup-ratio 0.1: $(top "$tmp/dedup.json")"
