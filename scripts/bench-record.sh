#!/usr/bin/env bash
# Recording overhead: the same call-heavy program run alone, under
# `perf record`, and under `hwprof record`, with the same events (cpu-clock
# every 100 us = 10 kHz per CPU, frame-pointer callchains), both CPUs busy.
# Rounds alternate the three so machine noise falls on all of them alike.
#
# usage: scripts/bench-record.sh [ROUNDS] [SCALE]
#   prints per-round wall times, the medians, the slowdown of each recorder,
#   hwprof's samples, loss and own CPU time per 100k samples.
set -euo pipefail
rounds=${1:-5}
scale=${2:-3}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof
ncpu=$(nproc)
# One copy of hwprof's built-in call-heavy workload per CPU.
# It appends its own run time to \$INNER: the program's slowdown without
# the recorders' start-up and wind-down.
cat > "$tmp/work.sh" <<SH
#!/bin/sh
t0=\$(date +%s.%N)
for i in \$(seq $ncpu); do "$tmp/hwprof" --hwprof-internal-workload $scale >/dev/null & done
wait
t1=\$(date +%s.%N)
echo "\$t1 - \$t0" | bc -l >> "\$INNER"
SH
chmod +x "$tmp/work.sh"
events=(-e cpu-clock -c 100000 -g)
# perf's attrs exactly: without --leaf-copy 0 hwprof adds the leaf copy
hevents=("${events[@]}" --leaf-copy 0)

secs() { # run a command, print its wall time in seconds
	local t0 t1
	export INNER=$1
	shift
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>>"$tmp/stderr"
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

: > "$tmp/t.plain"; : > "$tmp/t.perf"; : > "$tmp/t.hwprof"
echo "wall time of the whole command (s):"
printf '%-6s %10s %10s %10s\n' round plain perf hwprof
for r in $(seq "$rounds"); do
	p=$(secs "$tmp/i.plain" "$tmp/work.sh")
	f=$(secs "$tmp/i.perf" perf record "${events[@]}" -o "$tmp/perf.data" -- "$tmp/work.sh")
	: > "$tmp/stderr"
	h=$(secs "$tmp/i.hwprof" "$tmp/hwprof" record "${hevents[@]}" -o "$tmp/hwprof.data" -- "$tmp/work.sh")
	cat "$tmp/stderr" >> "$tmp/hwprof.log"
	echo "$p" >> "$tmp/t.plain"; echo "$f" >> "$tmp/t.perf"; echo "$h" >> "$tmp/t.hwprof"
	printf '%-6s %10.3f %10.3f %10.3f\n' "$r" "$p" "$f" "$h"
done
mp=$(median < "$tmp/t.plain"); mf=$(median < "$tmp/t.perf"); mh=$(median < "$tmp/t.hwprof")
printf '%-6s %10.3f %10.3f %10.3f\n' median "$mp" "$mf" "$mh"
ratio() { echo "$1 / $2" | bc -l | awk '{printf "%.3f", $1}'; }
echo "whole command: perf/plain $(ratio "$mf" "$mp")x, hwprof/plain $(ratio "$mh" "$mp")x, hwprof/perf $(ratio "$mh" "$mf")"
ip=$(median < "$tmp/i.plain"); if_=$(median < "$tmp/i.perf"); ih=$(median < "$tmp/i.hwprof")
echo "program's own run time (s, median): plain $ip, under perf $if_, under hwprof $ih"
echo "program slowdown: under perf $(ratio "$if_" "$ip")x, under hwprof $(ratio "$ih" "$ip")x, hwprof/perf $(ratio "$ih" "$if_")"
echo "perf's last recording:"
perf report --stats -i "$tmp/perf.data" 2>/dev/null | grep -E 'SAMPLE events|LOST events|LOST_SAMPLES events|THROTTLE events' | sed 's/^/  /' || true
echo "hwprof's recordings:"
grep -E 'recorded|lost|own CPU' "$tmp/hwprof.log" | sed 's/^hwprof: /  /'

# The recorders' own CPU time, recording the same running processes with
# -p: bash's `times` in a subshell shows the CPU time of the recorder
# alone, since the workload is not its child.
echo "recorder CPU time while attached with -p to one workload per CPU (s, user+sys):"
cputime() { # recorder args...: prints user+sys of the recorder
	local pids=()
	for i in $(seq "$ncpu"); do "$tmp/hwprof" --hwprof-internal-workload "$scale" >/dev/null & pids+=($!); done
	local list
	list=$(IFS=,; echo "${pids[*]}")
	( "$@" -p "$list" >/dev/null 2>&1; times ) | tail -1 |
		awk '{ split($1, u, "m"); split($2, s, "m"); printf "%.3f", u[1]*60+u[2]+s[1]*60+s[2] }'
	wait
}
for r in $(seq "$rounds"); do
	fc=$(cputime perf record "${events[@]}" -o "$tmp/perf-p.data")
	hc=$(cputime "$tmp/hwprof" record -q "${hevents[@]}" -o "$tmp/hwprof-p.data")
	fs=$(perf report --stats -i "$tmp/perf-p.data" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	hs=$(perf report --stats -i "$tmp/hwprof-p.data" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	printf '  round %s: perf %ss for %s samples (%s ms/100k), hwprof %ss for %s samples (%s ms/100k)\n' \
		"$r" "$fc" "$fs" "$(echo "$fc * 100000000 / $fs" | bc -l | awk '{printf "%.0f", $1}')" \
		"$hc" "$hs" "$(echo "$hc * 100000000 / $hs" | bc -l | awk '{printf "%.0f", $1}')"
done
