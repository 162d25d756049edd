#!/usr/bin/env bash
# Runs a command (by default the test suite) on a machine that pretends to
# run another kernel: in a mount and UTS namespace where /sys/kernel/notes
# holds another build-id (or none), the release is another (setarch
# --uname-2.6: uname(2) says 2.6.N, and /proc/sys/kernel/osrelease the
# same) and the host has another name. The suite must pass there as it
# does here: it depends on no fact of the host that a test does not
# measure. Needs root, unshare(1) and setarch(8).
#
#   scripts/pretend-kernel.sh                     # go test -count=1 ./...
#   scripts/pretend-kernel.sh --no-build-id go test -count=1 ./cmd/hwprof
set -euo pipefail
cd "$(dirname "$0")/.."
id=a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3
if [ "${1:-}" = --no-build-id ]; then id=""; shift; fi
[ $# -gt 0 ] || set -- go test -count=1 ./...
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
arch=$(uname -m)
release=$(setarch "$arch" --uname-2.6 uname -r)
echo "$release" >"$dir/osrelease"
# ELF notes: a "Linux" note, then NT_GNU_BUILD_ID (type 3) when id is set
note() { # name type hexdesc
	local name=$1 typ=$2 desc=$3
	printf '%08x' $(( ${#name} + 1 )) | fold -w2 | tac | tr -d '\n' | xxd -r -p
	printf '%08x' $(( ${#desc} / 2 )) | fold -w2 | tac | tr -d '\n' | xxd -r -p
	printf '%08x' "$typ" | fold -w2 | tac | tr -d '\n' | xxd -r -p
	printf '%s' "$name"; head -c $(( 4 - ${#name} % 4 )) /dev/zero
	printf '%s' "$desc" | xxd -r -p
	head -c $(( (4 - ${#desc} / 2 % 4) % 4 )) /dev/zero
}
{
	note Linux 6 4c696e7578000000
	[ -z "$id" ] || note GNU 3 "$id"
} >"$dir/notes"
echo "pretend kernel: build-id ${id:-none}, release $release, host pretend-host" >&2
unshare --mount --uts --propagation private sh -c \
	'mount --bind "$1" /sys/kernel/notes && mount --bind "$2" /proc/sys/kernel/osrelease && hostname pretend-host && shift 2 && exec "$@"' \
	sh "$dir/notes" "$dir/osrelease" setarch "$arch" --uname-2.6 "$@"
