#!/usr/bin/env bash
# Checks that go test's cache does not hide the shared fixtures: in a fresh
# clone with no ../shared beside it, the fixture test skips; once
# ../shared/fixtures appears, the same `go test` (no -count=1) runs it
# again and it passes, rather than replaying the cached skip.
#
# usage: scripts/check-fixture-cache.sh   (needs ../shared/fixtures beside this repository)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
fx=$repo/internal/fixtures/shared/fixtures
[ -f "$fx/EXPECTED.tsv" ] || { echo "no ../shared/fixtures beside the repository to copy" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q "$repo" "$tmp/repo"
cd "$tmp/repo"
first=$(go test -v -run '^TestDir$' ./internal/fixtures 2>&1)
echo "$first" | grep -q -- '--- SKIP: TestDir' || { echo "without ../shared: expected a skip, got:"; echo "$first"; exit 1; }
mkdir -p "$tmp/shared/fixtures"
cp "$fx/EXPECTED.tsv" "$tmp/shared/fixtures/"
second=$(go test -v -run '^TestDir$' ./internal/fixtures 2>&1)
if echo "$second" | grep -q '(cached)' || ! echo "$second" | grep -q -- '--- PASS: TestDir'; then
	echo "after ../shared/fixtures appeared: expected a fresh pass, got:"; echo "$second"; exit 1
fi
echo "ok: the fixture test skipped without ../shared and ran again (not cached) once it appeared"
