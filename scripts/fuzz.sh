#!/bin/sh
# Run every fuzz target of the module, one after another, each for FUZZTIME
# (default 10m) with one worker, and print a line per target with its
# execution count. Exit non-zero if any target found a failure (the failing
# input is kept under the package's testdata/fuzz, as go test does).
#
#   scripts/fuzz.sh                 # every target, 10 minutes each
#   FUZZTIME=30s scripts/fuzz.sh    # a quick pass
#   scripts/fuzz.sh FuzzOpen FuzzReader   # only these targets
set -u
cd "$(dirname "$0")/.." || exit 1
fuzztime=${FUZZTIME:-10m}
workers=${FUZZWORKERS:-1}
logdir=${FUZZLOGS:-${TMPDIR:-/tmp}/hwprof-fuzz}
mkdir -p "$logdir"
status=0
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
	pkg=./$(dirname "${f#./}")
	for t in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
		echo "$pkg $t"
	done
done > "$logdir/targets"
if [ $# -gt 0 ]; then
	for t in "$@"; do grep " $t\$" "$logdir/targets"; done > "$logdir/chosen"
else
	cp "$logdir/targets" "$logdir/chosen"
fi
while read -r pkg t; do
	log=$logdir/$t.log
	start=$(date +%s)
	go test -run='^$' -fuzz="^$t\$" -fuzztime="$fuzztime" -parallel="$workers" "$pkg" > "$log" 2>&1
	rc=$?
	end=$(date +%s)
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	if [ $rc -eq 0 ]; then
		echo "ok   $t ($pkg) $((end - start)) s, ${execs:-?} execs"
	else
		echo "FAIL $t ($pkg) $((end - start)) s, ${execs:-?} execs: see $log"
		status=1
	fi
done < "$logdir/chosen"
exit $status
