#!/usr/bin/env bash
# What the build-id cache costs a recording: the wall time of `hwprof
# record -g` of node spinning for a few seconds (node maps a ~100 MB binary
# and a dozen libraries), with the cache turned off (--no-buildid-cache),
# with an empty cache (the objects kept are copied), and with the cache
# already holding them (nothing copied: what is left is the end-of-run
# pass that finds the objects that had samples), the three in turn in
# every round; and what the cache holds after one recording.
#
# usage: scripts/bench-buildid-cache.sh [ROUNDS [MS [BASE [WORKLOAD]]]]
#   ROUNDS    rounds (default 5); MS  how long the workload spins (default 3000)
#   BASE      a git revision to measure the same way first, for a
#             before/after comparison (built from `git archive BASE`); "" for none
#   WORKLOAD  node (default: a 100 MB binary, a dozen libraries, its own code
#             hot) or gdb (gdb's Python spinning: about 60 libraries mapped,
#             libpython and libc hot, gdb's own 10 MB binary barely run)
# needs node (or gdb). Prints the medians of each, the cache's size and its files,
# and /proc/loadavg before and after (other work on the machine shows in
# the wall times).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5} ms=${2:-3000} base=${3:-} workload=${4:-node}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case $workload in
node)
	command -v node >/dev/null || { echo "node not installed"; exit 1; }
	echo "const end = Date.now() + $ms; let s = 0; while (Date.now() < end) s++;" > "$work/spin.js"
	cmd=(node "$work/spin.js") ;;
gdb)
	command -v gdb >/dev/null || { echo "gdb not installed"; exit 1; }
	cmd=(gdb -nx -batch -ex "python exec(\"import time\\ne=time.time()+$ms/1000\\nwhile time.time()<e: pass\")") ;;
*) echo "unknown workload $workload (node, gdb)"; exit 1 ;;
esac
echo "load before: $(cat /proc/loadavg)"

run() { # hwprof cache-dir extra-args...: prints the wall milliseconds
	local bin=$1 dir=$2; shift 2
	local s e
	s=$(date +%s%N)
	HWPROF_BUILDID_DIR=$dir "$bin" record -q -e cpu-clock -g "$@" -o "$work/x.data" -- "${cmd[@]}"
	e=$(date +%s%N)
	echo $(( (e - s) / 1000000 ))
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

bench() { # name hwprof
	local name=$1 bin=$2 off=() empty=() warm=()
	for _ in $(seq "$rounds"); do
		rm -rf "$work/cache"
		off+=("$(run "$bin" "$work/cache" --no-buildid-cache)")
		empty+=("$(run "$bin" "$work/cache")")
		warm+=("$(run "$bin" "$work/cache")")
	done
	echo "$name: record -g of $workload ($ms ms), median of $rounds rounds:"
	echo "  --no-buildid-cache  $(median "${off[@]}") ms"
	echo "  empty cache         $(median "${empty[@]}") ms (the objects kept are copied)"
	echo "  warm cache          $(median "${warm[@]}") ms (nothing copied)"
	echo "  cache size          $(du -sk "$work/cache" | cut -f1) KiB in $(find "$work/cache" -type f | wc -l) files"
}

if [ -n "$base" ]; then
	mkdir "$work/base"
	git archive "$base" | tar -x -C "$work/base"
	(cd "$work/base" && go build -o "$work/hwprof-base" ./cmd/hwprof)
	bench "base $(git rev-parse --short "$base")" "$work/hwprof-base"
fi
go build -o "$work/hwprof" ./cmd/hwprof
bench "this tree" "$work/hwprof"
echo "load after: $(cat /proc/loadavg)"
