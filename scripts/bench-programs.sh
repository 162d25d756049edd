# Sourced by bench-pair.sh and bench-cost.sh, with $root (the repository)
# and $tmp (a scratch directory) set: builds hwprof and the programs of
# scripts/bench-adaptive.sh (testdata/c/adaptive_*.c, as it builds them)
# into $tmp, and defines
#   fill STR   STR with {hwprof}, {phased}, {recurse}, {threads} and
#              {out} (a scratch output file) replaced by their paths
#   run CMD    the work per CPU-second of the program CMD runs, from its
#              "work N cpu S" line ("nan" without one)
(cd "$root" && go build -o "$tmp/hwprof" ./cmd/hwprof)
for p in phased recurse threads; do
	gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/$p" "$root/testdata/c/adaptive_$p.c"
done
fill() { sed "s|{hwprof}|$tmp/hwprof|g; s|{phased}|$tmp/phased|g; s|{recurse}|$tmp/recurse|g; s|{threads}|$tmp/threads|g; s|{out}|$tmp/out.data|g" <<< "$1"; }
run() {
	sh -c "$1" 2> "$tmp/err" > /dev/null || true
	awk '/^work /{w = $2; c = $4} END{if (c > 0) printf "%.6f", w / c; else print "nan"}' "$tmp/err"
}
