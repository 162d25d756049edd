#!/usr/bin/env bash
# Reading speed: `hwprof dump` against `perf script`, and `hwprof dump
# --stats` against `perf report --stats`, on one recording of about a
# million samples with frame-pointer callchains (perf record, cpu-clock
# every 20 us on each CPU while every CPU runs hwprof's built-in workload).
# Output goes to /dev/null; rounds alternate the four commands so machine
# noise falls on all of them alike. Wall and CPU (user+sys) times are both
# reported; the ratio is perf's time over hwprof's (above 1: hwprof faster).
# Needs perf, bc and GNU time (/usr/bin/time).
#
# usage: scripts/bench-dump.sh [ROUNDS] [SCALE] [FILE]
#   ROUNDS  timing rounds (default 5); the medians are compared
#   SCALE   seconds of workload per CPU when recording (default 12)
#   FILE    measure this recording instead of making one
set -euo pipefail
rounds=${1:-5}
scale=${2:-12}
file=${3:-}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof

if [ -z "$file" ]; then
	file=$tmp/bench.data
	ncpu=$(nproc)
	cat > "$tmp/work.sh" <<SH
#!/bin/sh
for i in \$(seq $ncpu); do "$tmp/hwprof" --hwprof-internal-workload $scale >/dev/null & done
wait
SH
	chmod +x "$tmp/work.sh"
	perf record -q -e cpu-clock -c 20000 -g -o "$file" -- "$tmp/work.sh" 2>"$tmp/record.err" ||
		{ cat "$tmp/record.err"; exit 1; }
fi
samples=$("$tmp/hwprof" dump --stats -i "$file" | sed -n 's/^samples //p')
echo "recording: $file, $(du -h "$file" | cut -f1), $samples samples"

# run a command, output discarded; print its wall and CPU (user+sys) seconds
secs() {
	/usr/bin/time -f '%e %U %S' -o "$tmp/t" "$@" >/dev/null 2>&1
	awk '{printf "%s %.3f\n", $1, $2 + $3}' "$tmp/t"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for r in $(seq "$rounds"); do
	secs "$tmp/hwprof" dump -i "$file" >>"$tmp/dump"
	secs perf script -i "$file" >>"$tmp/script"
	secs "$tmp/hwprof" dump --stats -i "$file" >>"$tmp/dumpstats"
	secs perf report --stats -i "$file" >>"$tmp/stats"
	printf 'round %d (wall/cpu s): dump %s  perf script %s  dump --stats %s  perf report --stats %s\n' "$r" \
		"$(tail -1 "$tmp/dump" | tr ' ' /)" "$(tail -1 "$tmp/script" | tr ' ' /)" \
		"$(tail -1 "$tmp/dumpstats" | tr ' ' /)" "$(tail -1 "$tmp/stats" | tr ' ' /)"
done
compare() { # name-ours file-ours name-theirs file-theirs
	local ow oc tw tc
	ow=$(cut -d' ' -f1 "$2" | median)
	oc=$(cut -d' ' -f2 "$2" | median)
	tw=$(cut -d' ' -f1 "$4" | median)
	tc=$(cut -d' ' -f2 "$4" | median)
	printf 'median wall: %s %.2fs, %s %.2fs: ratio %.1fx\n' "$1" "$ow" "$3" "$tw" "$(echo "$tw / $ow" | bc -l)"
	printf 'median cpu:  %s %.2fs, %s %.2fs: ratio %.1fx\n' "$1" "$oc" "$3" "$tc" "$(echo "$tc / $oc" | bc -l)"
}
compare "hwprof dump" "$tmp/dump" "perf script" "$tmp/script"
compare "hwprof dump --stats" "$tmp/dumpstats" "perf report --stats" "$tmp/stats"
