#!/usr/bin/env bash
# Leaf frames (issue 15, item 1): how many of the caller -> callee pairs
# that timer stacks show are real calls.
#
# Two programs built with `-O2 -g -fno-omit-frame-pointer` (gcc 12 leaves
# leaf functions without a frame there), from testdata/c and testdata/cpp:
#   leaf.c   leaves called from several callers, an indirect call through a
#            table, a recursion, tail calls
#   leaf.cc  virtual calls through a base class, a recursion, a leaf shared
#            by several callers
# Each runs for a set CPU time. Per program:
#   exact  hwprof record --source exact: every call, the reference edges
#   timer  hwprof record --source timer -c 250000 (4 kHz; the small stack
#          copy that repairs leaf frames included), read by hwprof report
#          and by perf script (the same file, the kernel's chains as they are)
#   perf   perf record -g -e cpu-clock -c 250000 of the same program
# and the figure: of the weight of adjacent caller -> callee pairs in the
# timer stacks whose callee is a function of the program, the share whose
# (caller, callee) is an edge of the exact profile. Also the share of the
# timer's samples whose chain hwprof repaired.
#
# usage: scripts/bench-leaf.sh [SECONDS]   (of CPU time per timer run)
set -euo pipefail
secs=${1:-3}
ms=$((secs * 1000))
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof
hw=$tmp/hwprof
gcc -O2 -g -fno-omit-frame-pointer -o "$tmp/leaf-c" testdata/c/leaf.c
g++ -O2 -g -fno-omit-frame-pointer -o "$tmp/leaf-cc" testdata/cpp/leaf.cc

# share PAIRS EXACT FUNCS: PAIRS is "caller<TAB>callee<TAB>weight" lines,
# EXACT the exact edges ("caller<TAB>callee"), FUNCS the program's
# functions; prints the weighted share of pairs into the program that are
# exact edges.
share() {
	awk -F'\t' -v exact="$2" -v funcs="$3" '
		BEGIN { while ((getline l < exact) > 0) e[l] = 1; while ((getline l < funcs) > 0) f[l] = 1 }
		($2 in f) { all += $3; if (($1 "\t" $2) in e) ok += $3 }
		END { if (all == 0) print "-"; else printf "%.2f%%\n", 100 * ok / all }' "$1"
}
# perfpairs FILE BIN: the adjacent pairs of every stack perf script prints
# for FILE, weight 1 each, callees in BIN only.
perfpairs() {
	perf script -i "$1" -F ip,sym,dso 2>/dev/null | awk -v bin="$2" '
		function flush(   i) { for (i = 1; i < n; i++) if (dso[i] == bin) printf "%s\t%s\t1\n", sym[i+1], sym[i]; n = 0 }
		/^[ \t]*$/ { flush(); next }
		{
			line = $0; sub(/^[ \t]*[0-9a-f]+ /, "", line)
			d = line; sub(/.* \(/, "", d); sub(/\)$/, "", d)
			s = line; sub(/ \([^(]*\)$/, "", s); sub(/\+0x[0-9a-f]+$/, "", s)
			n++; sym[n] = s; dso[n] = d
		}
		END { flush() }'
}

printf '%-8s %8s %8s %10s %12s %12s %12s\n' program samples repaired unknown hwprof perf-same perf-record
for prog in leaf-c leaf-cc; do
	bin=$tmp/$prog
	"$hw" record -q --source exact --max-slowdown 0 -o "$tmp/$prog.exact" -- "$bin" 1000 >/dev/null 2>&1
	"$hw" record -q --source timer -c 250000 -o "$tmp/$prog.timer" -- "$bin" "$ms" >/dev/null 2>&1
	perf record -q -g -e cpu-clock -c 250000 -o "$tmp/$prog.perf" -- "$bin" "$ms" >/dev/null 2>&1
	"$hw" report -i "$tmp/$prog.exact" --format json --top 100000 | jq -r '.edges[] | "\(.caller)\t\(.callee)"' | sort -u >"$tmp/$prog.edges"
	"$hw" report -i "$tmp/$prog.timer" --format json --top 100000 >"$tmp/$prog.json"
	jq -r --arg bin "$bin" '.functions[] | select(.object == $bin) | .name' "$tmp/$prog.json" | sort -u >"$tmp/$prog.funcs"
	jq -r '.edges[] | "\(.caller)\t\(.callee)\t\(.weight)"' "$tmp/$prog.json" >"$tmp/$prog.hw"
	perfpairs "$tmp/$prog.timer" "$bin" >"$tmp/$prog.ps"
	perfpairs "$tmp/$prog.perf" "$bin" >"$tmp/$prog.pr"
	read -r samples checked inserted unknown < <(jq -r '.recording | "\(.samples) \(.leaf.checked // 0) \(.leaf.inserted // 0) \(.leaf.unknown // 0)"' "$tmp/$prog.json")
	printf '%-8s %8d %7.1f%% %9.2f%% %12s %12s %12s\n' "$prog" "$samples" \
		"$(echo "100 * $inserted / ($checked + ($checked == 0))" | bc -l)" \
		"$(echo "100 * $unknown / ($checked + ($checked == 0))" | bc -l)" \
		"$(share "$tmp/$prog.hw" "$tmp/$prog.edges" "$tmp/$prog.funcs")" \
		"$(share "$tmp/$prog.ps" "$tmp/$prog.edges" "$tmp/$prog.funcs")" \
		"$(share "$tmp/$prog.pr" "$tmp/$prog.edges" "$tmp/$prog.funcs")"
done
