#!/usr/bin/env bash
# What hwprof's profiles do for Go's PGO: builds testdata/go/pgoprog
# (interface calls whose hot target depends on the input, and a small hot
# function just over the inliner's budget) four ways —
#   base     no PGO
#   runtime  PGO from the Go runtime's own CPU profile (runtime/pprof)
#   timer    PGO from hwprof's timer profile (record -g; report --pgo --pgo-weight time)
#   exact    PGO from hwprof's exact call counts (record --source exact; --pgo-weight calls)
# — each profile taken on the same input (INPUT: square or circle), then
# runs every build on a fixed amount of work (rounds=N, N set so that the
# base build runs about a second) ROUNDS times, alternating the builds
# round by round, and prints the median and spread of each build's CPU
# time (user+sys). Then the PGO cycle is repeated once: each PGO build is
# profiled again the same way and rebuilt (runtime2, timer2, exact2), to
# show whether each kind of profile keeps its gains when it is taken of
# an optimized program. Each go build -pgo rebuilds the standard library
# (about a minute on a loaded 2-CPU machine): the script takes ten to
# fifteen minutes. Needs root or perf_event_paranoid <= 2, and uprobes
# (root) for the exact source.
#
# usage: scripts/bench-pgo.sh [ROUNDS] [INPUT]
set -euo pipefail
rounds=${1:-15}
input=${2:-square}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof
mod=$tmp/mod
mkdir -p "$mod"
cp testdata/go/pgoprog/main.go "$mod/"
printf 'module pgoprog\n\ngo 1.22\n' >"$mod/go.mod"
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-buildvcs=false

build() { # NAME [PROFILE]
	local flags=()
	[ -n "${2:-}" ] && flags=(-pgo="$2")
	(cd "$mod" && go build "${flags[@]}" -o "$tmp/$1" .)
}
# profile KIND BIN OUT: take a profile of kind KIND (runtime, timer, exact) of BIN on the input.
profile() {
	case $1 in
	runtime) PGOPROG_CPUPROFILE=$3 "$2" 3000 "$input" >/dev/null ;;
	timer)
		"$tmp/hwprof" record -q -g -o "$tmp/p.data" -- "$2" 3000 "$input" >/dev/null
		"$tmp/hwprof" report -i "$tmp/p.data" --pgo --pgo-weight time -o "$3" 2>/dev/null ;;
	exact)
		"$tmp/hwprof" record -q --source exact --probe-filter '^main\.' -o "$tmp/p.data" -- "$2" 1000 "$input" >/dev/null
		"$tmp/hwprof" report -i "$tmp/p.data" --pgo --pgo-weight calls -o "$3" 2>/dev/null ;;
	esac
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

# Work for about a second of the base build.
per_s=$("$tmp/base" 1000 "$input" | awk '{print $2}')
n=$((per_s > 0 ? per_s : 1))
echo "input $input, $n rounds of 1000 shapes per run, $rounds runs per build (alternating)"
for b in "${builds[@]}"; do : >"$tmp/$b.times"; done
for r in $(seq 1 "$rounds"); do
	for b in "${builds[@]}"; do
		/usr/bin/time -f '%U %S' -o "$tmp/t" "$tmp/$b" "rounds=$n" "$input" >/dev/null
		awk '{printf "%.3f\n", $1 + $2}' "$tmp/t" >>"$tmp/$b.times"
	done
done
base_med=$(sort -n "$tmp/base.times" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
printf '%-9s %10s %10s %10s %10s\n' build "median s" "min s" "max s" "vs base"
for b in "${builds[@]}"; do
	sort -n "$tmp/$b.times" | awk -v b="$b" -v base="$base_med" '{a[NR]=$1} END {
		m = a[int((NR+1)/2)]; printf "%-9s %10.3f %10.3f %10.3f %9.1f%%\n", b, m, a[1], a[NR], 100 * (m - base) / base }'
done
