#!/usr/bin/env bash
# The adaptive sampling period (issue 7's figures) on three programs of
# different shapes:
#   phased   a call-heavy phase (short calls), then a loop-heavy one
#   workload hwprof's built-in demo workload (hot short calls, an interface
#            site with two targets, a recursion, a long non-call phase)
#   recurse  a deep recursion (fib) with a qsort over a comparison function
# Each is run alone, then recorded with the timer source (cpu-clock, FP
# callchains) three ways: fixed at perf's default 4000 Hz (--no-adaptive),
# adaptive (--adaptive, the policy's defaults), and fixed at a fine period
# (-c 100000: 10 kHz) as the reference.
#
# usage: scripts/bench-adaptive.sh [ROUNDS]
#   per program: median wall time alone and under each recording (the
#   overhead), samples taken, period changes (and when the last came), and
#   the overlap of the function weights (self) with the fine profile.
set -euo pipefail
rounds=${1:-3}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof
hw=$tmp/hwprof

cat > "$tmp/phased.c" <<'C'
#include <stdlib.h>
__attribute__((noinline)) long fa(long x) { return x * 3 + 1; }
__attribute__((noinline)) long fb(long x) { return x ^ (x >> 3); }
__attribute__((noinline)) long fc(long x) { return fa(x) + fb(x); }
__attribute__((noinline)) long calls(long n) {
	long s = 0;
	for (long i = 0; i < n; i++) s += fc(i) + fa(s);
	return s;
}
__attribute__((noinline)) long spin(long n) {
	volatile long s = 0;
	for (long i = 0; i < n; i++) s += i;
	return s;
}
int main(void) { return (calls(300000000L) + spin(2000000000L)) == 42; }
C
cat > "$tmp/recurse.c" <<'C'
#include <stdlib.h>
__attribute__((noinline)) long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) int cmp(const void *a, const void *b) {
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}
int main(void) {
	enum { N = 4000000 };
	long *v = malloc(N * sizeof *v), s = fib(38);
	for (int r = 0; r < 3; r++) {
		for (long i = 0; i < N; i++) v[i] = (i * 2654435761L) % 1000003;
		qsort(v, N, sizeof *v, cmp);
	}
	return (s + v[7]) == 42;
}
C
gcc -O1 -fno-omit-frame-pointer -o "$tmp/phased" "$tmp/phased.c"
gcc -O1 -fno-omit-frame-pointer -o "$tmp/recurse" "$tmp/recurse.c"

secs() { # run a command quietly, print its wall time in seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>>"$tmp/stderr"
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

# shares FILE: "function self" lines of a recording's profile.
shares() {
	"$hw" report -i "$1" --format json --top 100000 |
		jq -r '.functions[] | "\(.name)\t\(.self)"'
}
# overlap A B: the sum over functions of the smaller self share.
overlap() {
	join -t $'\t' <(shares "$1" | sort) <(shares "$2" | sort) |
		awk -F'\t' '{s += ($2 < $3 ? $2 : $3)} END{printf "%.1f%%", 100*s}'
}
samples() { "$hw" report -i "$1" --format json --top 1 | jq '.recording.samples'; }
changes() { # period changes after each event's first period, and the time of the last
	"$hw" report -i "$1" --format json --top 1 |
		jq -r '.recording.periods | group_by(.event) | map(length - 1) | add // 0' | tr '\n' ' '
	"$hw" report -i "$1" --format json --top 1 |
		jq -r '(.recording.periods | map(.time_ns) | max // 0) / 1e9 | "(last at \(.*1000|round/1000)s)"'
}

printf '%-9s %8s %9s %9s %9s  %8s %8s  %-22s %s\n' program alone fixed4k adaptive fine10k \
	"samp4k" "sampAd" "changes" "overlap(fixed4k, adaptive) vs fine"
for prog in phased workload recurse; do
	case $prog in
	workload) cmd=("$hw" --hwprof-internal-workload 3) ;;
	*) cmd=("$tmp/$prog") ;;
	esac
	: > "$tmp/alone" ; : > "$tmp/fixed" ; : > "$tmp/adaptive" ; : > "$tmp/fine"
	for r in $(seq "$rounds"); do
		secs "${cmd[@]}" >> "$tmp/alone"
		secs "$hw" record -q --no-adaptive -g -o "$tmp/$prog.fixed.data" -- "${cmd[@]}" >> "$tmp/fixed"
		secs "$hw" record -q --adaptive -g -o "$tmp/$prog.adaptive.data" -- "${cmd[@]}" >> "$tmp/adaptive"
		secs "$hw" record -q -c 100000 -g -o "$tmp/$prog.fine.data" -- "${cmd[@]}" >> "$tmp/fine"
	done
	a=$(median < "$tmp/alone") f=$(median < "$tmp/fixed") d=$(median < "$tmp/adaptive") n=$(median < "$tmp/fine")
	pct() { echo "scale=1; 100 * ($1 - $a) / $a" | bc -l; }
	printf '%-9s %7.2fs %8s%% %8s%% %8s%%  %8s %8s  %-22s %s, %s\n' "$prog" "$a" "$(pct "$f")" "$(pct "$d")" "$(pct "$n")" \
		"$(samples "$tmp/$prog.fixed.data")" "$(samples "$tmp/$prog.adaptive.data")" \
		"$(changes "$tmp/$prog.adaptive.data")" \
		"$(overlap "$tmp/$prog.fixed.data" "$tmp/$prog.fine.data")" \
		"$(overlap "$tmp/$prog.adaptive.data" "$tmp/$prog.fine.data")"
done
echo "(overheads: median wall time over $rounds rounds relative to the program alone; samples, changes and overlaps of the last round)"
