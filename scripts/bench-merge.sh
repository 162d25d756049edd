#!/usr/bin/env bash
# Merging many recordings: `hwprof report -i R1 -i R2 ... --format pprof`
# (all recordings loaded in parallel and merged into one profile) against
# reading them one by one (one `hwprof report -i Ri --format pprof` per
# recording, as a script feeding a profiling server file by file would).
# The recordings are N timer recordings (hwprof record -g) of a C program
# (testdata/c/merge_tree.c) that runs for 0.2 s of CPU, calling a small
# tree of functions. Prints the wall and CPU time of both ways (median of
# the rounds) and the merged profile's sample count against the sum over
# the recordings.
# Needs gcc.
#
# usage: scripts/bench-merge.sh [N] [ROUNDS]
#   N       recordings (default 100)
#   ROUNDS  timing rounds, alternating the two ways (default 3)
set -euo pipefail
n=${1:-100}
rounds=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof
gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/prog" "$root/testdata/c/merge_tree.c"
args=()
for i in $(seq 1 "$n"); do
	"$tmp/hwprof" record -q -g -o "$tmp/r$i.data" -- "$tmp/prog" 0.2 >/dev/null 2>&1
	args+=(-i "$tmp/r$i.data")
done
samples=0
for i in $(seq 1 "$n"); do
	s=$("$tmp/hwprof" dump --stats -i "$tmp/r$i.data" | sed -n 's/^samples //p')
	samples=$((samples + s))
done

# clock runs a command and prints "wall cpu" in seconds.
clock() {
	local t0 t1
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	t1=$(date +%s.%N)
	read -r u s <"$tmp/time"
	echo "$(echo "$t1 - $t0" | bc) $(echo "$u + $s" | bc)"
}
one_by_one() {
	for i in $(seq 1 "$n"); do
		"$tmp/hwprof" report -i "$tmp/r$i.data" --format pprof -o "$tmp/r$i.pb.gz" || return 1
	done
}
export -f one_by_one
export tmp n
: >"$tmp/merged.times"
: >"$tmp/single.times"
for r in $(seq 1 "$rounds"); do
	clock "$tmp/hwprof" report "${args[@]}" --format pprof -o "$tmp/merged.pb.gz" >>"$tmp/merged.times"
	clock bash -c one_by_one >>"$tmp/single.times"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mw=$(cut -d' ' -f1 "$tmp/merged.times" | median)
mc=$(cut -d' ' -f2 "$tmp/merged.times" | median)
sw=$(cut -d' ' -f1 "$tmp/single.times" | median)
sc=$(cut -d' ' -f2 "$tmp/single.times" | median)
merged=$("$tmp/hwprof" report "${args[@]}" --format json | sed -n 's/^    "samples": \([0-9]*\),/\1/p' | head -1)
echo "$n recordings, $samples samples in all; merged profile: $merged samples"
printf '%-36s %10s %10s\n' "" "wall s" "CPU s"
printf '%-36s %10s %10s\n' "merged (report -i ... x$n, pprof)" "$mw" "$mc"
printf '%-36s %10s %10s\n' "one by one ($n reports, pprof)" "$sw" "$sc"
echo "one by one / merged: wall $(echo "scale=2; $sw / $mw" | bc), CPU $(echo "scale=2; $sc / $mc" | bc)"
