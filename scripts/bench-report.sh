#!/usr/bin/env bash
# Report speed and memory on every kind of recording: `hwprof report`
# against `perf report --stdio --no-children`, and both against the cost of
# reading the file's bytes.
#
# Kinds (--kinds, default all four):
#   fp     frame-pointer callchains: perf record -e cpu-clock -c 10000 -g
#          (a sample every 10 us of CPU) of a C program, built here, that
#          calls into shared libraries (libc's qsort, strlen, memcpy and
#          libm's sin through a call tree of its own)
#   dwarf  the same program under perf record -e cpu-clock -c 50000
#          --call-graph dwarf (8 kB user stack copies)
#   exact  the same program under hwprof record --source exact (a uprobe on
#          every function of the program; a sample per call)
#   lbr    the real LBR recordings in ../shared/fixtures beside the
#          repository (reached through internal/fixtures/shared): every
#          x86-64 file-mode recording with branch stacks that its
#          EXPECTED.tsv lists, the two autofdo programs found through
#          --symfs for both tools. No machine here records LBR, and these
#          files are small (milliseconds each: process start-up would be
#          what is timed), so each is replayed --lbr-replay times into a
#          longer recording (internal/cmd/perfreplay: its samples N times,
#          shifted in time, as a longer run of the same program; the same
#          shares in both tools' reports) and the figures are of one run
#          over all of them; --lbr-repeat reads each file more than once a
#          run (figures per pass: total / repeat).
# The program runs for --size CPU seconds (clock(), so a slower or loaded
# machine records as much). For each kind, ROUNDS rounds alternate hwprof
# report, perf report, dd and cat (output to /dev/null; the file is in the
# page cache after a first cat; dd and cat read a single file 10 times a
# run, their times being near the clock's 10 ms resolution, and are timed
# per read).
# Printed: medians of wall time, CPU time (user+sys) and peak RSS from GNU
# time (-f '%e %U %S %M'), the ratios hwprof/perf (below 1: hwprof faster
# or smaller), and the floor of reading the bytes (dd bs=1M, cat), as a
# Markdown table; then each tool's top functions, to show that both read
# the file alike.
# Needs perf, gcc, python3, Go, GNU time (/usr/bin/time); exact needs root.
#
# usage: scripts/bench-report.sh [options]
#   --kinds LIST       comma-separated kinds: fp,dwarf,lbr,exact (default all)
#   --rounds N         timing rounds (default 3)
#   --size SECONDS     CPU seconds of the recorded program (default 10:
#                      800k frame-pointer samples, 200k DWARF samples
#                      (1.6 GB) and 820k exact calls on a 2-CPU VM; on
#                      much smaller recordings process start-up and the
#                      kernel's symbols are most of both tools' times)
#   --lbr-replay N     replays of each LBR fixture's samples (default 20;
#                      1: the fixtures as they are)
#   --lbr-repeat N     reads of each LBR file per run (default 1)
#   --keep DIR         record into DIR (the program too) and keep it there
#   --fp FILE, --dwarf FILE, --exact FILE
#                      measure FILE for that kind instead of recording one
#   --lbr FILE         measure FILE (repeatable) instead of the fixtures
#   --dedup-ratio RR   also run hwprof report --dedup-ratio RR once on the
#                      fp recording and compare its top functions
set -euo pipefail

usage() { sed -n '/^# usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "bench-report: $*" >&2; exit 1; }

kinds=fp,dwarf,lbr,exact rounds=3 size=10 lbr_repeat=1 lbr_replay=20 keep= dedup=
declare -A given=()
lbr_given=()
while [ $# -gt 0 ]; do
	case $1 in
	--kinds | --rounds | --size | --lbr-repeat | --lbr-replay | --keep | --fp | --dwarf | --exact | --lbr | --dedup-ratio)
		[ $# -ge 2 ] || die "$1 needs a value"
		case $1 in
		--kinds) kinds=$2 ;;
		--rounds) rounds=$2 ;;
		--size) size=$2 ;;
		--lbr-repeat) lbr_repeat=$2 ;;
		--lbr-replay) lbr_replay=$2 ;;
		--keep) keep=$2 ;;
		--lbr) lbr_given+=("$2") ;;
		--dedup-ratio) dedup=$2 ;;
		*) given[${1#--}]=$2 ;;
		esac
		shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds $rounds: want a positive whole number"
[[ $lbr_repeat =~ ^[1-9][0-9]*$ ]] || die "--lbr-repeat $lbr_repeat: want a positive whole number"
[[ $lbr_replay =~ ^[1-9][0-9]*$ ]] || die "--lbr-replay $lbr_replay: want a positive whole number"
[[ $size =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v s="$size" 'BEGIN {exit !(s > 0)}' ||
	die "--size $size: want a positive number of seconds"
ms=$(awk -v s="$size" 'BEGIN {printf "%d", s * 1000}') # the program takes milliseconds of CPU
IFS=, read -r -a kind_list <<<"$kinds"
for k in "${kind_list[@]}"; do
	case $k in fp | dwarf | lbr | exact) ;; *) die "--kinds: unknown kind '$k' (fp, dwarf, lbr, exact)" ;; esac
done
for f in "${given[@]}" "${lbr_given[@]}"; do
	[ -f "$f" ] || die "$f: not a regular file"
done
for t in perf gcc python3 go /usr/bin/time; do
	command -v "$t" >/dev/null || die "needs $t"
done

root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$keep" ]; then
	mkdir -p "$keep" || die "--keep $keep: cannot make the directory"
	work=$(cd "$keep" && pwd)
else
	work=$tmp
fi
(cd "$root" && go build -o "$tmp/hwprof" ./cmd/hwprof && go build -o "$tmp/perfreplay" ./internal/cmd/perfreplay)
hwprof=$tmp/hwprof

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1);" \
	"load average at start $(cut -d' ' -f1-3 /proc/loadavg)"

# The program, built in the work directory (kept with --keep, so that kept
# recordings still find it).
build_prog() {
	[ -x "$work/prog" ] && [ -n "${prog_built:-}" ] && return
	cat "$root/testdata/c/cpu_ms.h" "$root/testdata/c/benchreport.c" | grep -v '^#include "cpu_ms.h"' >"$tmp/src.c"
	if [ -e "$work/prog.c" ] || [ -e "$work/prog" ]; then
		# a kept directory of an earlier run: reuse its program if it is this one
		cmp -s "$tmp/src.c" "$work/prog.c" && [ -x "$work/prog" ] ||
			die "$work/prog.c or $work/prog exists and is not this script's program: use another --keep DIR"
	else
		cp "$tmp/src.c" "$work/prog.c"
		gcc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$work/prog" "$work/prog.c" -lm
	fi
	prog_built=1
}

# record KIND: the recording of KIND in the work directory
record() {
	local k=$1 out=$work/$1.data
	[ -e "$out" ] && die "$out exists: remove it, or measure it with --$k $out"
	build_prog
	echo "recording $k: $size s of CPU of the program" >&2
	case $k in
	fp) perf record -N -e cpu-clock -c 10000 -g -o "$out" -- "$work/prog" "$ms" ;;
	dwarf) perf record -N -e cpu-clock -c 50000 --call-graph dwarf -m 16M -o "$out" -- "$work/prog" "$ms" ;;
	exact) "$hwprof" record --source exact --max-slowdown 0 -o "$out" -- "$work/prog" "$ms" ;;
	esac 2>"$tmp/record.err" || { cat "$tmp/record.err" >&2; die "recording $k failed"; }
	grep -i 'lost\|wrote\|recorded' "$tmp/record.err" | sed "s|^|  $k: |" >&2 || true
	echo "$out"
}

# The LBR fixtures: every x86-64 file-mode recording with branch stacks in
# EXPECTED.tsv, and a --symfs that holds the two programs at the paths the
# autofdo recordings name (the other recordings' objects are not public).
lbr_symfs=
lbr_files() {
	local fx
	for fx in "$root/internal/fixtures/shared/fixtures" "$root/../shared/fixtures"; do
		[ -f "$fx/EXPECTED.tsv" ] && break
	done
	[ -f "$fx/EXPECTED.tsv" ] || return 1
	awk -F'\t' -v d="$fx" 'NR > 1 && $2 == "file" && $3 == "x86_64" && $7 == "Y" {print d "/" $1}' "$fx/EXPECTED.tsv"
	lbr_symfs=$tmp/symfs
	local prop=/build/work/11ef31a2a8be9640fa8d4c917e76f0db3923/google3/blaze-out/k8-opt/genfiles/devtools/crosstool/autofdo/testdata/propeller_sample_1.bin.gen
	mkdir -p "$lbr_symfs/export/hda3/tmp" "$lbr_symfs$(dirname "$prop")"
	# copies: hwprof follows no symbolic link out of a --symfs
	cp -f "$fx/autofdo/test.binary" "$lbr_symfs/export/hda3/tmp/test.binary"
	cp -f "$fx/autofdo/propeller_sample_1.bin" "$lbr_symfs$prop"
}

# A run reads each file of a list REPEAT times: the command's last argument
# is joined with the file name (-i=FILE, --input=FILE, if=FILE).
loop='n=$1 list=$2; shift 2
for ((i = 0; i < n; i++)); do
	while IFS= read -r f; do "${@:1:$#-1}" "${!#}$f" >/dev/null || exit; done <"$list"
done'
# measure OUT REPEAT LIST CMD...: append wall s, CPU s (user+sys) per pass
# and peak RSS kB to OUT
measure() {
	local out=$1 n=$2 list=$3
	shift 3
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/t" bash -c "$loop" _ "$n" "$list" "$@" 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; die "failed: $* (on a file of $list)"; }
	awk -v n="$n" '{printf "%.4f %.4f %s\n", $1 / n, ($2 + $3) / n, $4}' "$tmp/t" >>"$out"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { cut -d' ' -f"$1" "$2" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }
mb() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }
secs() { awk -v s="$1" 'BEGIN {printf (s < 0.1 ? "%.3f" : "%.2f"), s}'; }

# top3 TOOL FILE ARGS...: the three hottest functions with their share
# (perf: by samples, also where it would show its branch view)
top3() {
	local tool=$1 f=$2
	shift 2
	if [ "$tool" = hwprof ]; then
		"$hwprof" report -i "$f" --format json --top 3 --contexts 1 "$@" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(", ".join("%s %.2f%%%s" % (f["name"], 100 * (f["self"] or f["calls_share"] or 0), "" if f["self"] else " of calls")
                for f in d["functions"][:3]))'
	else
		perf report --stdio --no-children --no-branch-stack -g none --sort sym -q -i "$f" "$@" 2>/dev/null |
			awk 'NF >= 3 && n < 3 {sub(/^ +/, ""); p = $1; $1 = ""; $2 = ""; sub(/^ +/, ""); out = out (n ? ", " : "") $0 " " p; n++} END {print out}'
	fi
}

# callers FILE (exact): hwprof's two hottest call edges, and the two hottest
# call chains of perf's graph (callee first) into the hottest function
callers() {
	echo "  hwprof report, top call edges: $("$hwprof" report -i "$1" --format json --top 2 --contexts 1 2>/dev/null | python3 -c '
import json, sys
print(", ".join("%s -> %s %.2f%%" % (e["caller"], e["callee"], 100 * e["weight"]) for e in json.load(sys.stdin)["edges"][:2]))')"
	echo "  perf report, top chains (-g folded,0,callee): $(perf report --stdio --no-children --sort sym -g folded,0,callee -q -i "$1" 2>/dev/null |
		awk '/^[0-9.]+% / {print $2 " " $1; if (++n == 2) exit}' | paste -sd, | sed 's/,/, /g')"
}

table=$tmp/table checks=$tmp/checks notes=$tmp/notes
: >"$table" >"$checks" >"$notes"
for k in "${kind_list[@]}"; do
	list=$tmp/$k.files repeat=1 extra=()
	: >"$list"
	case $k in
	lbr)
		if [ ${#lbr_given[@]} -gt 0 ]; then
			printf '%s\n' "${lbr_given[@]}" >"$list"
		elif ! lbr_files >"$list"; then
			echo "| lbr | skipped: the real LBR recordings (../shared/fixtures beside the repository) are absent; give --lbr FILE |" >>"$table"
			echo "lbr: skipped: no ../shared/fixtures/EXPECTED.tsv beside the repository" >&2
			continue
		fi
		repeat=$lbr_repeat
		[ -n "$lbr_symfs" ] && extra=(--symfs "$lbr_symfs")
		if [ "$lbr_replay" -gt 1 ]; then
			# each file replayed into the work directory (kept with --keep)
			mkdir -p "$work/lbr"
			while IFS= read -r f; do
				out=$work/lbr/$(basename "$f").x$lbr_replay
				[ -f "$out" ] || "$tmp/perfreplay" -n "$lbr_replay" "$f" "$out" 2>/dev/null ||
					die "perfreplay $f failed"
				echo "$out"
			done <"$list" >"$list.replayed"
			mv "$list.replayed" "$list"
		fi
		;;
	exact)
		if [ -n "${given[$k]:-}" ]; then
			echo "${given[$k]}" >"$list"
		elif [ "$(id -u)" != 0 ]; then
			echo "| exact | skipped: recording with uprobes needs root; give --exact FILE |" >>"$table"
			echo "exact: skipped: not root (uprobes)" >&2
			continue
		else
			record exact >"$list"
		fi
		;;
	*)
		if [ -n "${given[$k]:-}" ]; then echo "${given[$k]}" >"$list"; else record "$k" >"$list"; fi
		;;
	esac

	samples=0 bytes=0 nfiles=0
	while IFS= read -r f; do
		s=$("$hwprof" dump --stats -i "$f" | sed -n 's/^samples //p')
		samples=$((samples + ${s:-0})) bytes=$((bytes + $(stat -c %s "$f"))) nfiles=$((nfiles + 1))
		cat "$f" >/dev/null # into the page cache
	done <"$list"
	what="$(printf "%'d" "$samples") samples, $(mb $((bytes / 1024))) MB"
	[ "$nfiles" -gt 1 ] && what="$nfiles files, $what"
	[ "$repeat" -gt 1 ] && what="$what; times per pass over all (runs of $repeat passes)"
	echo "== $k: $(head -1 "$list")$([ "$nfiles" -gt 1 ] && echo " and $((nfiles - 1)) more"): $what"

	floor_repeat=$repeat
	[ "$repeat" = 1 ] && floor_repeat=10
	rm -f "$tmp"/{hw,pf,dd,cat}
	for r in $(seq "$rounds"); do
		measure "$tmp/hw" "$repeat" "$list" "$hwprof" report "${extra[@]}" -i=
		measure "$tmp/pf" "$repeat" "$list" perf report --stdio --no-children "${extra[@]}" --input=
		measure "$tmp/dd" "$floor_repeat" "$list" dd of=/dev/null bs=1M status=none if=
		measure "$tmp/cat" "$floor_repeat" "$list" cat ""
		printf '  round %d (wall s/cpu s/peak kB): hwprof %s  perf %s  dd %s  cat %s\n' "$r" \
			"$(tail -1 "$tmp/hw" | tr ' ' /)" "$(tail -1 "$tmp/pf" | tr ' ' /)" \
			"$(tail -1 "$tmp/dd" | cut -d' ' -f1-2 | tr ' ' /)" "$(tail -1 "$tmp/cat" | cut -d' ' -f1-2 | tr ' ' /)"
	done
	hw_w=$(col 1 "$tmp/hw") hw_c=$(col 2 "$tmp/hw") hw_m=$(col 3 "$tmp/hw")
	pf_w=$(col 1 "$tmp/pf") pf_c=$(col 2 "$tmp/pf") pf_m=$(col 3 "$tmp/pf")
	dd_w=$(col 1 "$tmp/dd") dd_c=$(col 2 "$tmp/dd") cat_w=$(col 1 "$tmp/cat") cat_c=$(col 2 "$tmp/cat")
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$k" "$what" \
		"$(secs "$hw_w")" "$(secs "$hw_c")" "$(mb "$hw_m")" "$(secs "$pf_w")" "$(secs "$pf_c")" "$(mb "$pf_m")" \
		"$(ratio "$hw_w" "$pf_w")" "$(ratio "$hw_c" "$pf_c")" "$(ratio "$hw_m" "$pf_m")" \
		"$(secs "$dd_w") / $(secs "$dd_c")" "$(secs "$cat_w") / $(secs "$cat_c")" "$(ratio "$hw_w" "$dd_w")" >>"$table"

	# both tools read the file alike: their hottest functions (the first file)
	f=$(head -1 "$list")
	{
		echo "$k ($(basename "$f")):"
		echo "  hwprof report: $(top3 hwprof "$f" "${extra[@]}")"
		echo "  perf report:   $(top3 perf "$f" "${extra[@]}")"
		[ "$k" = exact ] && callers "$f"
	} >>"$checks"
	case $k in
	exact) echo "- exact: perf report reads the uprobe samples (one per call) and counts the same calls per function (below). Its call graph is the frame-pointer chain taken at the callee's first instruction, before the callee pushed its frame, so the immediate caller can be missing from it (compare the callers below); hwprof takes the caller from the return address in the 8-byte user stack copy." >>"$notes" ;;
	lbr) echo "- lbr: perf report shows its branch view (from/to pairs) by itself on the recordings whose headers allow it, hwprof its usual report; both are timed as they run by default. Each run starts every command once per file and pass. The fixtures are replayed $lbr_replay times each (--lbr-replay; 1: as they are, where process start-up is a large part of the times)." >>"$notes" ;;
	esac
done

if [ -n "$dedup" ] && [ -s "$tmp/fp.files" ]; then
	f=$(head -1 "$tmp/fp.files")
	rm -f "$tmp/dedup"
	measure "$tmp/dedup" 1 "$tmp/fp.files" "$hwprof" report --dedup-ratio "$dedup" -i=
	{
		echo "fp, --dedup-ratio $dedup (wall s/cpu s/peak kB $(tr ' ' / <"$tmp/dedup")):"
		echo "  hwprof report: $(top3 hwprof "$f" --dedup-ratio "$dedup")"
	} >>"$checks"
fi

echo
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; medians of $rounds rounds;" \
	"CPU = user+sys; peak = maximum resident set; ratios hwprof/perf (below 1: hwprof faster or smaller);" \
	"on a loaded machine wall times include waiting for a CPU: CPU times are the steadier measure"
echo
echo "| kind | recording | hwprof wall s | hwprof CPU s | hwprof peak MB | perf wall s | perf CPU s | perf peak MB | wall hwprof/perf | CPU hwprof/perf | memory hwprof/perf | dd wall / CPU s | cat wall / CPU s | hwprof wall / dd wall |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
cat "$table"
echo
cat "$notes"
if [ -s "$checks" ]; then
	echo
	echo "Top functions (self share; exact: share of calls; perf report --no-branch-stack -g none --sort sym):"
	cat "$checks"
fi
[ -n "$keep" ] && echo "recordings kept in $work"
exit 0
