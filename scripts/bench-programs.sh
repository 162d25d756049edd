# Sourced by bench-adaptive.sh, bench-pair.sh and bench-cost.sh, with $root
# (the repository) and $tmp (a scratch directory) set: builds hwprof and
# the programs of scripts/bench-adaptive.sh into $tmp, and defines
#   fill STR   STR with {hwprof}, {phased}, {recurse}, {threads}, {sqlite},
#              {xz} and {out} (a scratch output file) replaced by their
#              paths
#   run CMD    the work per CPU-second of the program CMD runs, from its
#              "work N cpu S" line ("nan" without one)
# The programs built are those of $bench_progs (default phased, recurse
# and threads; sqlite and xz also when named there):
#   phased, recurse, threads   testdata/c/adaptive_*.c
#   sqlite   SQLite's amalgamation under testdata/c/adaptive_sqlite.c; the
#            amalgamation is not in the repository: it comes from the npm
#            package better-sqlite3 (npm pack, then its deps/sqlite3) and is
#            compiled once into BENCH_CACHE (default
#            ${XDG_CACHE_HOME:-~/.cache}/hwprof-bench); needs npm
#   xz       testdata/c/adaptive_xz.c on liblzma; needs liblzma-dev
(cd "$root" && go build -o "$tmp/hwprof" ./cmd/hwprof)
bench_cflags=(-O2 -g -fno-omit-frame-pointer -pthread)
for p in ${bench_progs:-phased recurse threads}; do
	case $p in
	phased | recurse | threads)
		gcc "${bench_cflags[@]}" -o "$tmp/$p" "$root/testdata/c/adaptive_$p.c"
		;;
	sqlite)
		# better-sqlite3 12's amalgamation, compiled once (a minute or more)
		cache=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hwprof-bench}/sqlite-12
		if [ ! -f "$cache/sqlite3.o" ]; then
			command -v npm >/dev/null || { echo "bench: sqlite needs npm (or leave it out)" >&2; exit 1; }
			mkdir -p "$cache"
			(cd "$cache" && npm pack --silent "better-sqlite3@12" >/dev/null && tar xzf better-sqlite3-*.tgz package/deps/sqlite3)
			echo "bench: compiling SQLite's amalgamation into $cache" >&2
			gcc "${bench_cflags[@]}" -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -c \
				-o "$cache/sqlite3.o.tmp" "$cache/package/deps/sqlite3/sqlite3.c"
			mv "$cache/sqlite3.o.tmp" "$cache/sqlite3.o"
		fi
		gcc "${bench_cflags[@]}" -I"$cache/package/deps/sqlite3" -o "$tmp/sqlite" "$root/testdata/c/adaptive_sqlite.c" "$cache/sqlite3.o" -lm
		;;
	xz)
		gcc "${bench_cflags[@]}" -o "$tmp/xz" "$root/testdata/c/adaptive_xz.c" -llzma ||
			{ echo "bench: xz needs liblzma-dev (or leave it out)" >&2; exit 1; }
		;;
	*)
		echo "bench: no program $p" >&2
		exit 2
		;;
	esac
done
fill() { sed "s|{hwprof}|$tmp/hwprof|g; s#{\(phased\|recurse\|threads\|sqlite\|xz\)}#$tmp/\1#g; s|{out}|$tmp/out.data|g" <<< "$1"; }
run() {
	sh -c "$1" 2> "$tmp/err" > /dev/null || true
	awk '/^work /{w = $2; c = $4} END{if (c > 0) printf "%.6f", w / c; else print "nan"}' "$tmp/err"
}
