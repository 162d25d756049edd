#!/usr/bin/env bash
# What hwprof's profiles do for Go's PGO. Builds the Go workload in
# $PGOBENCH_PROG (default testdata/go/pgobench: an interface call whose
# frequent target is cheap and whose rare target is costly, so that call
# counts and CPU time name different hot targets, and a small hot function
# over the inliner's ordinary budget) four ways:
#   base     no PGO
#   runtime  PGO from the Go runtime's own CPU profile (runtime/pprof)
#   timer    PGO from hwprof's timer profile (record -g; report --pgo --pgo-weight time)
#   exact    PGO from hwprof's exact call counts (record --source exact; --pgo-weight calls)
# each profile taken on the same input (INPUT: square or circle) over 3 s
# of the program's CPU time (1 s for the exact source). Then the
# PGO cycle is repeated once: each PGO build is profiled again the same way
# and rebuilt (runtime2, timer2, exact2), to show whether each kind of
# profile keeps its gains when it is taken of an optimized program.
#
# For each build it prints the compiler's PGO decisions in the workload's
# package (-gcflags=-m -d=pgodebug=1: interface calls devirtualized, and to
# which target; calls inlined only because the profile made them hot), and
# for each profile the weights it gives the targets of the interface call.
#
# Timing: every build runs the same fixed work (rounds=N; N sized at the
# start so that the fastest build's run takes at least SECONDS of CPU), ROUNDS
# times, the builds alternating round by round (ABCD... ABCD...). The
# program measures its own work loop: the CPU time of the thread running
# it (the loop allocates nothing and runs on one locked thread), which a
# loaded machine disturbs far less than wall time; the wall time
# (monotonic clock) is shown too. Every build must compute the same
# checksum. Per build: median, interquartile range and min-max of the CPU
# time, the median's difference to base, and a two-sided Mann-Whitney U
# test against base (normal approximation with ties; "faster"/"slower"
# when p < 0.01, else "not separated").
#
# Each go build -pgo rebuilds the standard library for its profile (10-20 s
# on an idle 2-CPU machine, a minute when loaded): with the defaults the
# script should take about seven minutes on an idle 2-CPU machine (25 minutes
# at a load average of 20 to 26). Needs root or
# perf_event_paranoid <= 2, and uprobes (root) for the exact source.
#
# usage: scripts/bench-pgo.sh [ROUNDS] [INPUT]      (default 10 square)
# environment: PGOBENCH_PROG=DIR     the workload (a main package; default testdata/go/pgobench)
#              PGOBENCH_SECONDS=S    least CPU seconds of the fastest build's run (default 2)
#              PGOBENCH_CPU=N        pin the timed runs to CPU N with taskset (default: not pinned)
set -euo pipefail
. "$(dirname "$0")/stats.sh"
rounds=${1:-10}
input=${2:-square}
prog=${PGOBENCH_PROG:-testdata/go/pgobench}
seconds=${PGOBENCH_SECONDS:-2}
cpu=${PGOBENCH_CPU:-}
case $rounds in '' | *[!0-9]* | 0) echo "bench-pgo: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2 ;; esac
case $input in square | circle) ;; *) echo "bench-pgo: INPUT must be square or circle, not '$input'" >&2; exit 2 ;; esac
echo "command: PGOBENCH_PROG=$prog PGOBENCH_SECONDS=$seconds PGOBENCH_CPU=$cpu scripts/bench-pgo.sh $rounds $input"
echo "machine: $(go version | awk '{print $3, $4}'), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
start=$SECONDS
cd "$(dirname "$0")/.."
[ -f "$prog/main.go" ] || { echo "bench-pgo: no $prog/main.go (set PGOBENCH_PROG)" >&2; exit 2; }
pin=()
if [ -n "$cpu" ]; then
	command -v taskset >/dev/null || { echo "bench-pgo: PGOBENCH_CPU needs taskset" >&2; exit 2; }
	pin=(taskset -c "$cpu")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof
mod=$tmp/mod
mkdir -p "$mod"
cp "$prog"/*.go "$mod/"
printf 'module pgobench\n\ngo 1.22\n' >"$mod/go.mod"
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-buildvcs=false

# build NAME [PROFILE]: build the workload, keeping the compiler's
# optimization log of its own package in NAME.log.
build() {
	local flags=()
	[ -n "${2:-}" ] && flags=(-pgo="$2")
	(cd "$mod" && go build "${flags[@]}" -gcflags='pgobench=-m -d=pgodebug=1' -o "$tmp/$1" . >"$tmp/$1.log" 2>&1) ||
		{ cat "$tmp/$1.log" >&2; exit 1; }
}
# profile KIND BIN OUT: take a profile of kind KIND (runtime, timer, exact) of BIN on the input.
profile() {
	case $1 in
	runtime) PGOBENCH_CPUPROFILE=$3 "$2" 3s "$input" >/dev/null ;;
	timer)
		"$tmp/hwprof" record -q -g -o "$tmp/p.data" -- "$2" 3s "$input" >/dev/null
		"$tmp/hwprof" report -i "$tmp/p.data" --pgo --pgo-weight time -o "$3" 2>/dev/null ;;
	exact)
		"$tmp/hwprof" record -q --source exact --max-slowdown 0 --probe-filter '^main\.' -o "$tmp/p.data" -- "$2" 1s "$input" >/dev/null
		"$tmp/hwprof" report -i "$tmp/p.data" --pgo --pgo-weight calls -o "$3" 2>/dev/null ;;
	esac
}
# weights PROFILE: the profile's weights, as the compiler reads them (go
# tool preprofile), of the callees of main.round: the interface call's
# targets and tag.
weights() {
	go tool preprofile -i "$1" | awk 'NR > 1 { l[++n] = $0 } END {
		for (i = 1; i + 2 <= n; i += 3) if (l[i] == "main.round") { split(l[i+2], f, " "); w[l[i+1]] += f[2]; t += f[2] }
		if (t == 0) { print "no edges from main.round"; exit }
		s = ""; for (c in w) s = s sprintf("%s%s %.1f%%", s == "" ? "" : ", ", c, 100 * w[c] / t)
		print s }'
}
# decisions NAME: the PGO decisions in NAME's compiler log.
decisions() {
	awk '/PGO devirtualizing interface call/ { d = d (d == "" ? "" : ",") $NF; nd++ }
		/^hot-budget check allows inlining for call/ { h = h (h == "" ? "" : ",") $7; nh++ }
		END { printf "%d %s %d %s\n", nd, (nd ? d : "-"), nh, (nh ? h : "-") }' "$tmp/$1.log"
}

build base
builds=(base)
for kind in runtime timer exact; do
	profile "$kind" "$tmp/base" "$tmp/$kind.pgo"
	build "$kind" "$tmp/$kind.pgo"
	builds+=("$kind")
done
for kind in runtime timer exact; do
	profile "$kind" "$tmp/$kind" "$tmp/${kind}2.pgo"
	build "${kind}2" "$tmp/${kind}2.pgo"
	builds+=("${kind}2")
done
echo "builds and profiles took $((SECONDS - start)) s"
echo
echo "profile weights of main.round's callees (the compiler's reading, go tool preprofile):"
for b in "${builds[@]:1}"; do printf '  %-9s %s\n' "$b" "$(weights "$tmp/$b.pgo")"; done
echo

# Size the work: N rounds so that the fastest build's run takes $seconds s of
# CPU, with a margin of 10% over what a short run of each build measured.
per_round=$(for b in "${builds[@]}"; do "${pin[@]}" "$tmp/$b" 0.5s "$input"; done |
	awk '{ r = $4 / $2; if (NR == 1 || r < m) m = r } END { printf "%.0f", m }')
n=$(awk -v s="$seconds" -v p="$per_round" 'BEGIN { printf "%d", 1.1 * s * 1e9 / p + 1 }')
echo "input $input: $n rounds of 1000 shapes per run (the fastest build: $per_round ns a round), $rounds runs per build, builds alternating${cpu:+, pinned to CPU $cpu}"
for b in "${builds[@]}"; do : >"$tmp/$b.times"; done
sum=
for r in $(seq 1 "$rounds"); do
	for b in "${builds[@]}"; do
		out=$("${pin[@]}" "$tmp/$b" "rounds=$n" "$input")
		set -- $out
		[ "$1 $2" = "rounds $n" ] || { echo "bench-pgo: $b printed '$out'" >&2; exit 1; }
		# Every build computes the same area and hash.
		if [ -z "$sum" ]; then sum="$8 ${10}"; elif [ "$sum" != "$8 ${10}" ]; then
			echo "bench-pgo: $b computed '$8 ${10}', base '$sum'" >&2; exit 1
		fi
		echo "$4 $6" >>"$tmp/$b.times"
	done
done

echo
printf '%-9s %-18s %-27s %8s %15s %15s %8s %9s %9s  %s\n' build devirtualized "hot inlines" "median s" "IQR s" "min-max s" "vs base" "wall s" "U test p" "vs base"
for b in "${builds[@]}"; do
	read -r nd dev nh hot <<<"$(decisions "$b")"
	awk -v b="$b" -v dev="$nd $dev" -v hot="$nh $hot" "$stats_awk"'
	FNR == NR { x[++nx] = $1 / 1e9; xw[nx] = $2 / 1e9; next }
	{ y[++ny] = $1 / 1e9 }
	END {
		p = mwu_p(x, nx, y, ny) # this build (x) against base (y)
		sort(x, nx); sort(y, ny); sort(xw, nx)
		m = q(x, nx, 0.5); mb = q(y, ny, 0.5)
		verdict = b == "base" ? "" : p < 0.01 ? (m < mb ? "faster" : "slower") : "not separated"
		line = sprintf("%-9s %-18s %-27s %8.3f %15s %15s %7.1f%% %9.3f %9s  %s", b, dev, hot, m,
			sprintf("%.3f-%.3f", q(x, nx, 0.25), q(x, nx, 0.75)), sprintf("%.3f-%.3f", x[1], x[nx]),
			100 * (m - mb) / mb, q(xw, nx, 0.5), b == "base" ? "" : sprintf("%.2g", p), verdict)
		sub(/ +$/, "", line)
		print line
	}' "$tmp/$b.times" "$tmp/base.times"
done
echo
echo "devirtualized: count and targets of the interface calls PGO devirtualized; hot inlines: count and callees"
echo "of the calls inlined only because the profile made them hot (over the budget of 80). Times are the"
echo "work loop's CPU time. Total time $((SECONDS - start)) s."
