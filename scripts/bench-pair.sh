#!/usr/bin/env bash
# Paired overhead comparison of two ways of running one of
# scripts/bench-adaptive.sh's programs: each round runs the program alone,
# then A and B (their order alternating round by round), and takes each
# run's work per CPU-second from the program's "work N cpu S" line. Prints
# every round and the median over the rounds of lost(A) - lost(B), the work
# lost against the same round's program alone, in points, with the number
# of rounds in which A lost more.
#
# usage: scripts/bench-pair.sh ROUNDS "CMD A" "CMD B" [ALONE]
#   In the commands {hwprof} is a build of this tree and {phased},
#   {recurse}, {threads} the programs (testdata/c/adaptive_*.c, built as
#   bench-adaptive.sh builds them), {out} a scratch output file; ALONE
#   defaults to the program of A's command as A runs it after its "--".
# example: hwprof's default against perf's, 30 rounds of 1 s of CPU:
#   scripts/bench-pair.sh 30 "{hwprof} record -q -g -o /tmp/a.data -- {recurse} 1" \
#       "perf record -q -g -o /tmp/b.data -- {recurse} 1"
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
rounds=$1
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$root/scripts/bench-programs.sh"
A=$(fill "$2")
B=$(fill "$3")
alone=$(fill "${4:-${2##*-- }}")
printf '%5s %12s %12s %12s %14s\n' round alone A B "lost A-B pts"
for r in $(seq "$rounds"); do
	a=$(run "$alone")
	if [ $((r % 2)) = 1 ]; then x=$(run "$A"); y=$(run "$B"); else y=$(run "$B"); x=$(run "$A"); fi
	printf '%5d %12.3f %12.3f %12.3f %+14.2f\n' "$r" "$a" "$x" "$y" "$(echo "100 * ($y - $x) / $a" | bc -l)"
done | tee "$tmp/rounds"
awk '{print $5}' "$tmp/rounds" | sort -g | awk -v n="$rounds" '{d[NR] = $1; if ($1 > 0) k++}
	END{printf "median lost(A) - lost(B): %+.2f pts; A lost more in %d of %d rounds\n", d[int((NR + 1) / 2)], k, n}'
