#!/usr/bin/env bash
# hwprof's default sampling period (no -c/-F: adaptive) against perf's
# default (`perf record -g`: cpu-clock at 4000 Hz here, or cycles where
# there is a PMU) on programs of different shapes, each measured against a
# fine fixed-period reference (hwprof -c 100000: 10 kHz of cpu-clock):
#   phased   a call-heavy phase (short calls), then a loop without calls
#   recurse  a recursion (fib) and a qsort over a comparison function
#   threads  four pthreads workers with different call shapes (short calls,
#            recursion, a loop, qsort), each for a quarter of SECS of its
#            own CPU time, all started before any period change: a change
#            reaches only the events hwprof opened, and the threads may
#            take turns with those and with the copies they inherited (see
#            internal/record/adaptive.go)
#   sqlite   a real program with deep stacks: SQLite's amalgamation under
#            a driver (testdata/c/adaptive_sqlite.c: inserts in a
#            transaction, two index builds, grouped and joined queries).
#            The amalgamation is not in the repository: the script takes
#            it from the npm package better-sqlite3 (npm pack, then its
#            deps/sqlite3) and builds it once into BENCH_CACHE (default
#            ${XDG_CACHE_HOME:-~/.cache}/hwprof-bench); needs npm
#   xz       a real multi-threaded program: xz's compressor (liblzma's
#            multi-threaded encoder, two workers, as xz -T2 -1) on
#            generated text (testdata/c/adaptive_xz.c); needs liblzma-dev
# Every program (testdata/c/adaptive_*.c) runs until it has used SECS
# seconds of CPU (its command line), then prints the work it did.
#
# usage: scripts/bench-adaptive.sh [ROUNDS] [SECS]   (default 3 rounds, 3 s)
#
# Per program and tool, over the rounds (the tools alternate their order
# round by round; the program alone runs first in every round):
#   wall     median wall time relative to the program alone
#   work     median work per CPU-second lost against the program alone:
#            the sampling interrupts are charged to the program's CPU
#            time, so a program that runs for a set CPU time does less
#   selfCPU  median CPU of the tool itself (all CPU of the run minus the
#            program's) as a share of the program's CPU
#   wakes/s  median voluntary context switches per second of the run, of
#            the tool and the program together (the program, CPU-bound,
#            makes a handful): how often the recorder woke. On a program
#            that keeps every CPU busy each wake-up takes a CPU from it;
#            a thread that only sleeps and wakes ~3700 times a second cost
#            the threads program ~3.5% of its work per CPU-second here
#            (8 of 8 rounds), about 1 point per 1000 wake-ups a second.
#            Most of hwprof's are the Go runtime's monitor thread (sysmon),
#            which polls every 20 µs or more while the recorder works
#   samples  samples of the last round
#   overlap  median over the rounds of the function overlap (sum over
#            functions of the smaller self share) with the reference
#            recorded in the same round
# and for hwprof the period of each thread's last sample (last round).
# and hwprof's summary line saying how its rate compares with perf's
# (last round). Then a verdict line per program, from the rounds paired (each round has
# its own reference and its own load): hwprof's overlap minus perf's and
# hwprof's work lost minus perf's, as median [smallest..largest round],
# and whether hwprof is at least as good (median), worse (in the median
# and in enough rounds for a sign test at 10%) or within the rounds'
# noise. On a loaded machine
# only the CPU-time figures (work, selfCPU) mean anything; wall does not.
# BENCH_VERBOSE=1 prints every round's overlaps and hwprof's periods;
# BENCH_PROGS="threads" (for example) runs some of the programs.
set -euo pipefail
rounds=${1:-3}
secs=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v perf >/dev/null || { echo "bench-adaptive: needs perf" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
progs=${BENCH_PROGS:-phased recurse threads sqlite xz}
bench_progs=$progs
. "$root/scripts/bench-programs.sh"
hw=$tmp/hwprof

median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

# run NAME TOOL... -- PROG ARGS: runs one measured command; appends
# "wall cpu_all work cpu_prog wakes" to $tmp/NAME.runs (wakes: voluntary
# context switches per second, of the tool and the program).
run() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %w" -o "$tmp/time" "$@" 2> "$tmp/err" >/dev/null
	local wall usr sys work cpu vcs
	read -r wall usr sys vcs < "$tmp/time"
	read -r _ work _ cpu < <(grep '^work ' "$tmp/err" | tail -1)
	echo "$wall $(echo "$usr + $sys" | bc -l) $work $cpu $(echo "$vcs / $wall" | bc -l)" >> "$tmp/$name.runs"
}

# shares FILE: "function<TAB>self" of a recording's profile.
shares() {
	"$hw" report -i "$1" --format json --top 100000 2>/dev/null |
		jq -r '.functions[] | "\(.name)\t\(.self)"' | sort
}
# overlap A B: the sum over functions of the smaller self share.
overlap() {
	join -t $'\t' <(shares "$1") <(shares "$2") |
		awk -F'\t' '{s += ($2 < $3 ? $2 : $3)} END{printf "%.2f", 100*s}'
}
samples() { "$hw" report -i "$1" --format json --top 1 2>/dev/null | jq '.recording.samples'; }
inforce() { # hwprof's period of each thread's last sample, or the last period
	local l
	l=$("$hw" report -i "$1" --top 1 2>/dev/null | sed -n "s/^period of each thread's last sample: //p")
	[ -n "$l" ] && { echo "$l"; return; }
	"$hw" report -i "$1" --format json --top 1 2>/dev/null | jq -r '.recording.periods | last | "\(.event) \(.period)"'
}

# stat NAME FIELD: a median over the rounds (alone is the baseline).
col() { awk -v f="$2" '{print $f}' "$tmp/$1.runs" | median; }

lost() { # lost TOOL: per round, the work lost against the alone median
	awk -v b="$(awk '{print $3/$4}' "$tmp/alone.runs" | median)" '{print 100*(1 - ($3/$4)/b)}' "$tmp/$1.runs"
}
# spread: "median [min..max]" of a column of numbers
spread() { sort -g | awk '{a[NR]=$1} END{printf "%+.2f [%+.2f..%+.2f]", a[int((NR+1)/2)], a[1], a[NR]}'; }

printf '%-8s %-14s %7s %7s %8s %8s %8s %8s  %s\n' program tool wall work selfCPU wakes/s samples overlap "hwprof: period of each thread's last sample"
for prog in $progs; do
	rm -f "$tmp"/*.runs "$tmp"/*.ov
	for r in $(seq "$rounds"); do
		run alone "$tmp/$prog" "$secs"
		if [ $((r % 2)) = 1 ]; then order="hwprof perf"; else order="perf hwprof"; fi
		for tool in $order; do
			case $tool in
			hwprof)
				run hwprof "$hw" record -g -o "$tmp/hw.data" -- "$tmp/$prog" "$secs"
				sed -n "s/^hwprof: [^ ]*: \(.*perf's rate.*\)/\1/p" "$tmp/err" | tail -1 > "$tmp/trade"
				;;
			perf) run perf perf record -q -g -o "$tmp/perf.data" -- "$tmp/$prog" "$secs" ;;
			esac
		done
		run fine "$hw" record -q -c 100000 -g -o "$tmp/fine.data" -- "$tmp/$prog" "$secs"
		overlap "$tmp/hw.data" "$tmp/fine.data" >> "$tmp/hwprof.ov"; echo >> "$tmp/hwprof.ov"
		overlap "$tmp/perf.data" "$tmp/fine.data" >> "$tmp/perf.ov"; echo >> "$tmp/perf.ov"
		if [ -n "${BENCH_VERBOSE:-}" ]; then echo "  $prog round $r: overlap hwprof $(tail -1 "$tmp/hwprof.ov") perf $(tail -1 "$tmp/perf.ov"); hwprof $(inforce "$tmp/hw.data")" >&2; fi
	done
	aw=$(col alone 1)
	for tool in hwprof perf; do
		# per round: work per CPU-second against the alone median, and the
		# tool's own CPU share
		wl=$(lost "$tool" | median)
		sc=$(awk '{print 100*($2-$4)/$4}' "$tmp/$tool.runs" | median)
		w=$(col "$tool" 1)
		case $tool in
		hwprof) label="hwprof default" n=$(samples "$tmp/hw.data") f=$(inforce "$tmp/hw.data") ;;
		perf) label="perf -g" n=$(samples "$tmp/perf.data") f="" ;;
		esac
		printf '%-8s %-14s %6.1f%% %6.1f%% %7.2f%% %8.0f %8s %7s%%  %s\n' "$prog" "$label" \
			"$(echo "100 * ($w - $aw) / $aw" | bc -l)" "$wl" "$sc" "$(col "$tool" 5)" "$n" "$(median < "$tmp/$tool.ov")" "$f"
	done
	printf '%-8s hwprof: %s\n' "$prog" "$(cat "$tmp/trade")"
	# The verdict compares the tools round by round (each round has its
	# own reference and its own load): the median of hwprof minus perf,
	# with the smallest and largest round, and how many rounds hwprof was
	# at least as good. Worse means worse in the median and in enough
	# rounds (sign test, below); anything else is within the rounds' noise.
	dov=$(paste "$tmp/hwprof.ov" "$tmp/perf.ov" | awk '{print $1-$2}')
	dwl=$(paste <(lost hwprof) <(lost perf) | awk '{print $1-$2}')
	verdict() { # verdict "DIFFS" SIGN: hwprof is better where SIGN*diff > 0
		local m k
		m=$(echo "$1" | awk -v s="$2" '{print s*$1}' | median)
		k=$(echo "$1" | awk -v s="$2" 's*$1 < 0' | wc -l)
		# worse: worse in the median, and in so many rounds that a fair
		# coin would do it at most one time in ten (one-sided sign test)
		awk -v m="$m" -v k="$k" -v n="$rounds" 'BEGIN{
			p = 0; c = 1
			for (i = 0; i <= n; i++) { if (i >= k) p += c / 2^n; c = c * (n - i) / (i + 1) }
			if (m >= 0) print "hwprof at least as good"; else if (p <= 0.1) print "hwprof WORSE"; else print "within noise"}'
	}
	printf '%-8s verdict: overlap with the reference hwprof-perf %s pts (%s, hwprof >= perf in %d of %d rounds); work lost hwprof-perf %s pts (%s)\n' \
		"$prog" "$(echo "$dov" | spread)" "$(verdict "$dov" 1)" "$(echo "$dov" | awk '$1 >= 0' | wc -l)" "$rounds" \
		"$(echo "$dwl" | spread)" "$(verdict "$dwl" -1)"
done
echo "($rounds rounds of $secs s of program CPU; medians; reference: hwprof -c 100000 -g in the same round; set BENCH_VERBOSE=1 for every round)"
