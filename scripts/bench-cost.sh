#!/usr/bin/env bash
# What each of several ways of recording costs one of
# scripts/bench-adaptive.sh's programs, measured together: each round runs
# the program alone and then every command once, in an order that rotates
# round by round, and takes each run's work per CPU-second from the
# program's "work N cpu S" line. Prints per command the median over the
# rounds of the work it lost against the same round's program alone, in
# points, with the quartiles, and the median of the difference, round by
# round, from the first command's loss (paired, so the machine's drift
# between rounds cancels). At a high sampling rate (-c 100000: 10 kHz) a
# difference divided by the rate is what one sample costs more than one of
# the first command.
#
# usage: scripts/bench-cost.sh ROUNDS "ALONE" "CMD" ["CMD"...]
#   In the commands {hwprof} is a build of this tree and {phased},
#   {recurse}, {threads}, {sqlite}, {xz} the programs of bench-adaptive.sh
#   (scripts/bench-programs.sh builds them); {out} is a scratch file for
#   the output.
# example: perf -g, hwprof without and with the leaf copy, at 10 kHz:
#   scripts/bench-cost.sh 20 "{recurse} 0.5" \
#       "perf record -q -g -c 100000 -o {out} -- {recurse} 0.5" \
#       "{hwprof} record -q -g --leaf-copy 0 -c 100000 -o {out} -- {recurse} 0.5" \
#       "{hwprof} record -q -g -c 100000 -o {out} -- {recurse} 0.5"
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
rounds=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_progs="phased recurse threads $(grep -o '{sqlite}\|{xz}' <<< "$*" | sort -u | tr -d '{}' | tr '\n' ' ')"
. "$root/scripts/bench-programs.sh"
cmds=()
for c in "$@"; do
	cmds+=("$(fill "$c")")
done
n=${#cmds[@]}
for r in $(seq "$rounds"); do
	for k in $(seq 0 $((n - 1))); do
		i=$(((k + r) % n))
		v[i]=$(run "${cmds[i]}")
	done
	echo "${v[*]}"
done > "$tmp/rounds"
# quartiles: the median and quartiles of the numbers on stdin
quartiles() { sort -g | awk '{d[NR] = $1} END{printf "%+8.2f %+8.2f %+8.2f", d[int((NR + 1) / 2)], d[int((NR + 3) / 4)], d[int((3 * NR + 3) / 4)]}'; }
printf '%8s %8s %8s %8s  %s\n' median q1 q3 "-first" "command (work lost against the program alone, points)"
for i in $(seq 1 $((n - 1))); do
	lost=$(awk -v i=$((i + 1)) '{print 100 * ($1 - $i) / $1}' "$tmp/rounds" | quartiles)
	diff=$(awk -v i=$((i + 1)) '{print 100 * ($2 - $i) / $1}' "$tmp/rounds" | quartiles | awk '{print $1}')
	printf '%s %8s  %s\n' "$lost" "$diff" "$(sed "s|$tmp/||g" <<< "${cmds[i]}")"
done
