#!/usr/bin/env bash
# What the build-id cache costs a recording: the wall time of `hwprof
# record` of a program that maps a large binary (node, ~100 MB), with the
# cache turned off (--no-buildid-cache), with an empty cache (every object
# is copied), and with the cache already holding them (nothing copied),
# the three in turn in every round.
#
# usage: scripts/bench-buildid-cache.sh [ROUNDS]   (default 5; needs node)
#
# Prints the median wall time of each, and the cache's size after one
# recording.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
command -v node >/dev/null || { echo "node not installed"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/hwprof" ./cmd/hwprof
echo 'const end = Date.now() + 300; let s = 0; while (Date.now() < end) s++;' > "$work/spin.js"
run() { # cache-dir extra-args...: prints the wall seconds
	local dir=$1; shift
	local s e
	s=$(date +%s%N)
	HWPROF_BUILDID_DIR=$dir "$work/hwprof" record -q -e cpu-clock "$@" -o "$work/x.data" -- node "$work/spin.js"
	e=$(date +%s%N)
	echo $(( (e - s) / 1000000 ))
}
off=() empty=() warm=()
for _ in $(seq "$rounds"); do
	rm -rf "$work/cache"
	off+=("$(run "$work/cache" --no-buildid-cache)")
	empty+=("$(run "$work/cache")")
	warm+=("$(run "$work/cache")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "record of node (300 ms), median of $rounds rounds:"
echo "  --no-buildid-cache  $(median "${off[@]}") ms"
echo "  empty cache         $(median "${empty[@]}") ms (every object copied)"
echo "  warm cache          $(median "${warm[@]}") ms (nothing copied)"
echo "  cache size          $(du -sh "$work/cache" | cut -f1)"
