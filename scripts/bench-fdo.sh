#!/usr/bin/env bash
# What hwprof's sample profiles do for clang's sample-based FDO
# (-fprofile-sample-use). Builds each workload with clang-19 seven ways:
#   base    -O2, no profile
#   timer   hwprof's profile of a timer recording (report --format autofdo)
#   exact   hwprof's profile of that timer recording and of an exact run
#           of the functions it found hot (hwprof fdo)
#   instr   front-end instrumentation PGO (-fprofile-instr-generate, then
#           -fprofile-instr-use), which in clang 19 profiles no indirect
#           call targets (its value profiling is off by default)
#   irpgo   IR instrumentation PGO (-fprofile-generate, then -fprofile-use),
#           which does: with instr, the ceiling
#   anchor  AutoFDO's own create_llvm_prof --use_lbr=false on a perf
#           recording (cpu-clock, no LBR) of the same run
#   counts  a sample profile of exact counts: valgrind's callgrind counts
#           every instruction run and every call of the same work, folded
#           as hwprof folds an LBR recording (internal/cmd/callgrindafdo):
#           what a sample profile does when nothing in it is estimated,
#           the ceiling of the format
# Every build uses the same flags (-O2 -gdwarf-4 -fdebug-info-for-profiling
# -fno-omit-frame-pointer: DWARF 4 because the autofdo package's
# create_llvm_prof 0.19 reads no DWARF 5). Each profile is taken of the
# base build on the same input, for PROFILE_MS of the program's CPU time.
#
# Workloads: fdobench (testdata/c/fdobench.c: an indirect call whose cheap
# target takes 99% of the calls and whose costly target takes most of the
# time) and SQLite's amalgamation (deps/sqlite3 of the npm package
# better-sqlite3@12, fetched with npm pack into a temporary directory,
# never kept) under testdata/c/sqlbench.c (inserts, index builds,
# queries).
#
# Timing: every build runs the same fixed work (rounds=N, N sized at the
# start so that the base build's run takes about SECONDS of CPU), ROUNDS
# times, the builds alternating round by round. The program measures its
# own work with its CPU clock; every build must print the same checksum.
# Per build: median, interquartile range and min-max of the CPU time, the
# median's difference to base, the share it gets of the gain of the faster
# instrumented build (instr or irpgo), the same two of the per-round ratios
# to base (paired: the median of the build's time over base's in each
# round, which moves less with the machine's load), and a
# two-sided Mann-Whitney U test against base (normal approximation with
# ties; "faster"/"slower" when p < 0.01, else "not separated").
#
# Needs clang-19, llvm-profdata-19, create_llvm_prof (Debian's autofdo),
# perf, valgrind, npm (for SQLite), root for the exact source's uprobes.
#
# usage: scripts/bench-fdo.sh [ROUNDS] [WORKLOADS]     (default 10 "fdobench sqlite")
# environment: FDOBENCH_SECONDS=S   CPU seconds of the base build's run (default 1)
#              FDOBENCH_PROFILE_MS=MS  CPU ms of each profiling run (default 2000)
set -euo pipefail
. "$(dirname "$0")/stats.sh"
rounds=${1:-10}
workloads=${2:-fdobench sqlite}
seconds=${FDOBENCH_SECONDS:-1}
profile_ms=${FDOBENCH_PROFILE_MS:-2000}
case $rounds in '' | *[!0-9]* | 0) echo "bench-fdo: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2 ;; esac
for tool in clang-19 llvm-profdata-19 create_llvm_prof perf valgrind; do
	command -v "$tool" >/dev/null || { echo "bench-fdo: $tool is not installed" >&2; exit 2; }
done
echo "command: FDOBENCH_SECONDS=$seconds FDOBENCH_PROFILE_MS=$profile_ms scripts/bench-fdo.sh $rounds '$workloads'"
echo "machine: $(clang-19 --version | head -1), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
start=$SECONDS
cd "$(dirname "$0")/.."
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof
go build -o "$tmp/callgrindafdo" ./internal/cmd/callgrindafdo
cflags=(-O2 -gdwarf-4 -fdebug-info-for-profiling -fno-omit-frame-pointer -I "$root/testdata/c")
builds=(base timer exact counts instr irpgo anchor)

# sources WORKLOAD: the compiler arguments of the workload's sources.
sources() {
	case $1 in
	fdobench) echo "$root/testdata/c/fdobench.c" ;;
	sqlite) echo "-DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I $tmp/sqlite $root/testdata/c/sqlbench.c $tmp/sqlite/sqlite3.c" ;;
	esac
}
# build WORKLOAD NAME [FLAGS...]: build the workload into $tmp/WORKLOAD.NAME,
# keeping what the compiler said about the profile in NAME.log.
build() {
	local w=$1 name=$2
	shift 2
	# shellcheck disable=SC2046
	clang-19 "${cflags[@]}" "$@" -o "$tmp/$w.$name" $(sources "$w") >"$tmp/$w.$name.log" 2>&1 ||
		{ cat "$tmp/$w.$name.log" >&2; exit 1; }
}

if [[ " $workloads " == *" sqlite "* ]]; then
	command -v npm >/dev/null || { echo "bench-fdo: npm is not installed (for SQLite)" >&2; exit 2; }
	(cd "$tmp" && npm pack --silent better-sqlite3@12 >/dev/null && tar xzf better-sqlite3-*.tgz package/deps/sqlite3 && mv package/deps/sqlite3 sqlite)
	echo "SQLite $(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$tmp/sqlite/sqlite3.h") from better-sqlite3@12"
fi

for w in $workloads; do
	b=$tmp/$w.base
	build "$w" base
	# The profiles, each of the base build over profile_ms of its CPU.
	"$tmp/hwprof" fdo -o "$tmp/$w.exact.afdo" -- "$b" "$profile_ms" >/dev/null 2>"$tmp/$w.fdo.log"
	"$tmp/hwprof" report -i "$tmp/$w.exact.afdo.timer.data" --format autofdo -o "$tmp/$w.timer.afdo" 2>/dev/null
	perf record -q -e cpu-clock -o "$tmp/$w.perf.data" -- "$b" "$profile_ms" >/dev/null 2>&1
	create_llvm_prof --use_lbr=false --binary="$b" --profile="$tmp/$w.perf.data" --out="$tmp/$w.anchor.raw" --format=text 2>/dev/null
	# create_llvm_prof 0.19 names some inlined functions with bytes of
	# garbage, which clang refuses: those entries (and what is nested in
	# them) are left out, and counted.
	LC_ALL=C awk '{ match($0, /^ */); d = RLENGTH; if (skip >= 0 && d > skip) next; skip = -1
		if ($0 ~ /[^ -~]/) { skip = d; bad++; next } print }
		END { print bad + 0 > "/dev/stderr" }' skip=-1 "$tmp/$w.anchor.raw" >"$tmp/$w.anchor.afdo" 2>"$tmp/$w.anchor.bad"
	[ "$(cat "$tmp/$w.anchor.bad")" = 0 ] || echo "$w: anchor: $(cat "$tmp/$w.anchor.bad") entries of create_llvm_prof's profile with unreadable names left out"
	# The exact counts, of the work the others did in profile_ms (its
	# rounds; under valgrind the program's clock runs 50 times slower).
	probe=$("$b" rounds=5)
	pn=$(awk -v ms="$profile_ms" -v c="$(echo "$probe" | awk '{print $4}')" 'BEGIN { print int(5 * ms / 1000 / c + 1) }')
	valgrind --tool=callgrind --dump-instr=yes --compress-strings=no --compress-pos=no \
		--callgrind-out-file="$tmp/$w.callgrind" "$b" "rounds=$pn" >/dev/null 2>"$tmp/$w.callgrind.log" ||
		{ cat "$tmp/$w.callgrind.log" >&2; exit 1; }
	"$tmp/callgrindafdo" -o "$tmp/$w.counts.afdo" "$tmp/$w.callgrind" 2>/dev/null
	build "$w" gen -fprofile-instr-generate
	LLVM_PROFILE_FILE="$tmp/$w.profraw" "$tmp/$w.gen" "$profile_ms" >/dev/null
	llvm-profdata-19 merge -o "$tmp/$w.profdata" "$tmp/$w.profraw"
	build "$w" irgen -fprofile-generate="$tmp/$w.ir"
	LLVM_PROFILE_FILE="$tmp/$w.ir.profraw" "$tmp/$w.irgen" "$profile_ms" >/dev/null
	llvm-profdata-19 merge -o "$tmp/$w.ir.profdata" "$tmp/$w.ir.profraw"
	for k in timer exact counts anchor; do
		build "$w" "$k" -fprofile-sample-use="$tmp/$w.$k.afdo" -Wprofile-instr-out-of-date -Wprofile-instr-unprofiled
	done
	build "$w" instr -fprofile-instr-use="$tmp/$w.profdata"
	build "$w" irpgo -fprofile-use="$tmp/$w.ir.profdata"
	for k in timer exact counts anchor instr irpgo; do
		n=$(grep -c 'warning' "$tmp/$w.$k.log" || true)
		[ "$n" = 0 ] || { echo "bench-fdo: $w $k: clang warned $n times:"; head -5 "$tmp/$w.$k.log"; }
	done
	echo "$w: profile sizes (functions): timer $(grep -c '^[^ ]' "$tmp/$w.timer.afdo"), exact $(grep -c '^[^ ]' "$tmp/$w.exact.afdo"), counts $(grep -c '^[^ ]' "$tmp/$w.counts.afdo"), anchor $(grep -c '^[^ ]' "$tmp/$w.anchor.afdo")"
done
echo "builds and profiles took $((SECONDS - start)) s"

for w in $workloads; do
	# Size the work: N rounds of about $seconds s of the base build's CPU.
	probe=$("$tmp/$w.base" rounds=5)
	n=$(awk -v s="$seconds" -v c="$(echo "$probe" | awk '{print $4}')" 'BEGIN { print int(5 * s / c + 1) }')
	echo
	echo "$w: rounds=$n per run, $rounds runs per build, builds alternating"
	for b in "${builds[@]}"; do : >"$tmp/$w.$b.times"; done
	sum=
	for r in $(seq 1 "$rounds"); do
		for b in "${builds[@]}"; do
			out=$("$tmp/$w.$b" "rounds=$n")
			set -- $out
			if [ -z "$sum" ]; then sum=$2; elif [ "$sum" != "$2" ]; then
				echo "bench-fdo: $w $b computed checksum $2, base $sum" >&2; exit 1
			fi
			echo "$4" >>"$tmp/$w.$b.times"
		done
	done
	# The ceiling: the faster of the two instrumented builds.
	instr_median=$(for k in instr irpgo; do sort -g "$tmp/$w.$k.times" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; done | sort -g | head -1)
	# Paired: the median over rounds of the build's time over base's in
	# the same round (what a change of the machine's load between rounds
	# moves less), and its share of the faster instrumented build's.
	paired() { paste "$tmp/$w.$1.times" "$tmp/$w.base.times" | awk "$stats_awk"'{ r[NR] = $1 / $2 - 1 } END { sort(r, NR); print q(r, NR, 0.5) }'; }
	instr_paired=$(for k in instr irpgo; do paired "$k"; done | sort -g | head -1)
	printf '%-8s %9s %15s %15s %8s %12s %8s %9s %9s  %s\n' build "median s" "IQR s" "min-max s" "vs base" "of ceiling" paired "of ceil." "U test p" "vs base"
	for b in "${builds[@]}"; do
		awk -v b="$b" -v mi="$instr_median" -v pb="$(paired "$b")" -v pi="$instr_paired" "$stats_awk"'
		FNR == NR { x[++nx] = $1; next }
		{ y[++ny] = $1 }
		END {
			p = mwu_p(x, nx, y, ny) # this build (x) against base (y)
			sort(x, nx); sort(y, ny)
			m = q(x, nx, 0.5); mb = q(y, ny, 0.5)
			verdict = b == "base" ? "" : p < 0.01 ? (m < mb ? "faster" : "slower") : "not separated"
			share = (b == "base" || mb == mi) ? "" : sprintf("%.0f%%", 100 * (mb - m) / (mb - mi))
			pshare = (b == "base" || pi == 0) ? "" : sprintf("%.0f%%", 100 * pb / pi)
			line = sprintf("%-8s %9.3f %15s %15s %7.1f%% %12s %7.1f%% %9s %9s  %s", b, m,
				sprintf("%.3f-%.3f", q(x, nx, 0.25), q(x, nx, 0.75)), sprintf("%.3f-%.3f", x[1], x[nx]),
				100 * (m - mb) / mb, share, 100 * pb, pshare, b == "base" ? "" : sprintf("%.2g", p), verdict)
			sub(/ +$/, "", line)
			print line
		}' "$tmp/$w.$b.times" "$tmp/$w.base.times"
	done
done
echo
echo "Times are the work's CPU time (the program's own clock). of ceiling: the share of the faster"
echo "instrumented build's gain over base that the build gets. paired: the median over rounds of the"
echo "build's time over base's in the same round, less 1; of ceil.: its share of the faster"
echo "instrumented build's. Total time $((SECONDS - start)) s."
