#!/usr/bin/env bash
# Symbolizing and unwinding speed: `hwprof script` against `perf script` on
# one recording of about a million samples with frame-pointer callchains of
# a C program that spends its time in its own code, in a shared library the
# script builds (libbench.so; both from testdata/c/script_*.c) and in libm
# and libc (perf record, cpu-clock every 10 us on each CPU, one copy of the
# program per CPU). Both print
# every sample with every frame's address, symbol+offset and object; the
# script counts the lines and the [unknown] frames of each to show the
# information is the same, then times both with output to /dev/null,
# alternating them in each round, and prints the medians of wall and CPU
# (user+sys) time, their ratio (perf's over hwprof's: above 1, hwprof is
# faster) and the peak RSS of each: the median and the largest over the
# rounds, and their ratio. Needs perf, gcc and GNU time.
#
# usage: scripts/bench-script.sh [ROUNDS] [SECONDS] [FILE]
#   ROUNDS   timing rounds (default 3); the medians are compared
#   SECONDS  seconds each copy of the program runs while recording (default 30)
#   FILE     measure this recording instead of making one
# CALL_GRAPH=dwarf records with --call-graph dwarf (an 8 kB stack copy per
# sample) instead of frame pointers (-g), every 200 us instead of 10 us:
# about 40 MB per second the program runs on each CPU.
set -euo pipefail
rounds=${1:-3}
secs_run=${2:-30}
file=${3:-}
case ${CALL_GRAPH:=fp} in
fp) graph=(-c 10000 -g) ;;
dwarf) graph=(-c 200000 --call-graph dwarf) ;;
*) echo "CALL_GRAPH must be fp or dwarf" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof

if [ -z "$file" ]; then
	gcc -O2 -g -fno-omit-frame-pointer -fPIC -shared -o "$tmp/libbench.so" "$root/testdata/c/script_lib.c" -lm
	gcc -O2 -g -fno-omit-frame-pointer -o "$tmp/bench" "$root/testdata/c/script_main.c" -L"$tmp" -lbench -Wl,-rpath,"$tmp"
	file=$tmp/bench.data
	ncpu=$(nproc)
	cat >"$tmp/work.sh" <<SH
#!/bin/sh
for i in \$(seq $ncpu); do "$tmp/bench" $secs_run >/dev/null & done
wait
SH
	chmod +x "$tmp/work.sh"
	perf record -q -e cpu-clock "${graph[@]}" -o "$file" -- "$tmp/work.sh" 2>"$tmp/record.err" ||
		{ cat "$tmp/record.err"; exit 1; }
fi
samples=$("$tmp/hwprof" dump --stats -i "$file" | sed -n 's/^samples //p')
echo "recording: $file, $(du -h "$file" | cut -f1), $samples samples"

# The same information: every sample and every frame of its stack, with
# symbol+offset and object. Count frame lines and [unknown] symbols.
"$tmp/hwprof" script -i "$file" >"$tmp/h.txt" 2>"$tmp/h.err" || { cat "$tmp/h.err"; exit 1; }
perf script -i "$file" >"$tmp/p.txt" 2>/dev/null
frames() { grep -c $'^\t' "$1" || true; }
unknown() { grep $'^\t' "$1" | grep -c '\[unknown\]' || true; }
printf 'hwprof script: %d lines, %d frames, %d frames [unknown]\n' "$(wc -l <"$tmp/h.txt")" "$(frames "$tmp/h.txt")" "$(unknown "$tmp/h.txt")"
printf 'perf script:   %d lines, %d frames, %d frames [unknown]\n' "$(wc -l <"$tmp/p.txt")" "$(frames "$tmp/p.txt")" "$(unknown "$tmp/p.txt")"
# Frames whose symbol+offset or object differ (perf prints a user frame's
# address relative to its object, hwprof the runtime address; both
# print samples of equal time in their own order): count the multiset
# difference of "symbol+offset (object)".
awk '/^\t/ {print $2, $3}' "$tmp/h.txt" | sort >"$tmp/h.f"
awk '/^\t/ {print $2, $3}' "$tmp/p.txt" | sort >"$tmp/p.f"
echo "frames named differently: $(comm -23 "$tmp/h.f" "$tmp/p.f" | wc -l) by hwprof, $(comm -13 "$tmp/h.f" "$tmp/p.f" | wc -l) by perf; the most common:"
comm -3 "$tmp/h.f" "$tmp/p.f" | sort | uniq -c | sort -rn | head -8
[ -s "$tmp/h.err" ] && { echo "hwprof script said:"; cat "$tmp/h.err"; }
rm -f "$tmp/h.txt" "$tmp/p.txt" "$tmp/h.f" "$tmp/p.f"

# run a command, output discarded; print wall s, CPU (user+sys) s, peak RSS MB
measure() {
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$@" >/dev/null 2>&1
	awk '{printf "%s %.3f %.0f\n", $1, $2 + $3, $4 / 1024}' "$tmp/t"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for r in $(seq "$rounds"); do
	measure "$tmp/hwprof" script -i "$file" >>"$tmp/hw"
	measure perf script -i "$file" >>"$tmp/perf"
	printf 'round %d (wall s / cpu s / peak RSS MB): hwprof script %s  perf script %s\n' "$r" \
		"$(tail -1 "$tmp/hw" | tr ' ' /)" "$(tail -1 "$tmp/perf" | tr ' ' /)"
done
hw_w=$(cut -d' ' -f1 "$tmp/hw" | median)
hw_c=$(cut -d' ' -f2 "$tmp/hw" | median)
hw_m=$(cut -d' ' -f3 "$tmp/hw" | median)
pf_w=$(cut -d' ' -f1 "$tmp/perf" | median)
pf_c=$(cut -d' ' -f2 "$tmp/perf" | median)
pf_m=$(cut -d' ' -f3 "$tmp/perf" | median)
echo "median wall: hwprof script ${hw_w}s, perf script ${pf_w}s, ratio perf/hwprof $(awk -v a="$pf_w" -v b="$hw_w" 'BEGIN {printf "%.2f", a / b}')"
echo "median cpu:  hwprof script ${hw_c}s, perf script ${pf_c}s, ratio perf/hwprof $(awk -v a="$pf_c" -v b="$hw_c" 'BEGIN {printf "%.2f", a / b}')"
hw_mx=$(cut -d' ' -f3 "$tmp/hw" | sort -g | tail -1)
pf_mx=$(cut -d' ' -f3 "$tmp/perf" | sort -g | tail -1)
echo "peak RSS:    hwprof script ${hw_m} MB, perf script ${pf_m} MB (medians), ratio perf/hwprof $(awk -v a="$pf_m" -v b="$hw_m" 'BEGIN {printf "%.2f", a / b}'); largest ${hw_mx} MB and ${pf_mx} MB"
