#!/usr/bin/env bash
# How much user stack the leaf repair needs (source.LeafStackBytes, issue
# 15 item 1): records the leaf programs, scripts/bench-adaptive.sh's
# programs and a libc-heavy loop with the timer source and a 512-byte
# stack copy (--leaf-copy 512), then replays each recording's repair with
# its copies cut to 256, 192, 128, 96, 64, 32 and 16 bytes
# (internal/engine TestLeafCopyCut) and prints, per recording and size,
# the samples checked, those whose lost caller was restored and those the
# repair could not judge. Programs built with gcc/g++ -O2 -g
# -fno-omit-frame-pointer.
#
# usage: scripts/bench-leafcopy.sh [SECONDS]   (of CPU time per program)
set -euo pipefail
secs=${1:-2}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hwprof" ./cmd/hwprof
cc="gcc -O2 -g -fno-omit-frame-pointer -pthread"
$cc -o "$tmp/leaf-c" testdata/c/leaf.c
g++ -O2 -g -fno-omit-frame-pointer -o "$tmp/leaf-cc" testdata/cpp/leaf.cc
$cc -o "$tmp/libcheavy" testdata/c/libcheavy.c
for p in phased recurse threads; do
	$cc -o "$tmp/$p" "testdata/c/adaptive_$p.c"
done
files=()
# record NAME ARG: a timer recording of program NAME run with ARG
record() {
	"$tmp/hwprof" record -q --source timer --leaf-copy 512 -o "$tmp/$1.data" -- "$tmp/$1" "$2" > /dev/null 2>&1
	files+=("$tmp/$1.data")
}
record leaf-c $((secs * 1000))
record leaf-cc $((secs * 1000))
record libcheavy $((secs * 1000))
for p in phased recurse threads; do
	record $p "$secs" # the adaptive programs take seconds
done
HWPROF_LEAFCUT_FILES="${files[*]}" go test -count=1 ./internal/engine -run 'TestLeafCopyCut$' -v |
	sed -n 's/^ *leafcut_test.go:[0-9]*: //p'
