#!/usr/bin/env bash
# Checks that no function is unreachable (issue 29): deadcode -test ./...
# (from the binaries and every test) lists nothing, and deadcode
# ./cmd/hwprof (from hwprof alone) lists only the entry points
# docs/entry-points.md names, each as `package.Function`, the package as
# its directory in the module.
#
# usage: scripts/check-deadcode.sh   (installs deadcode at the version below
# from the Go module proxy into a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
version=v0.52.0 # golang.org/x/tools
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install "golang.org/x/tools/cmd/deadcode@$version"

dead=$("$bin/deadcode" -test ./...)
if [ -n "$dead" ]; then
  echo "deadcode -test ./...: functions neither a binary nor a test reaches:"
  echo "$dead"
  exit 1
fi

module=$(go list -m)
unreached=$("$bin/deadcode" -f '{{range .Funcs}}{{$.Path}}.{{.Name}}{{"\n"}}{{end}}' ./cmd/hwprof |
  sed "s|^$module/||")
listed=$(sed -n 's/^- `\([^`]*\)`.*/\1/p' docs/entry-points.md)
unlisted=$(grep -vxF -f <(echo "$listed") <<<"$unreached" || true)
if [ -n "$unlisted" ]; then
  echo "deadcode ./cmd/hwprof: functions hwprof does not reach and docs/entry-points.md does not list:"
  echo "$unlisted"
  exit 1
fi
stale=$(grep -vxF -f <(echo "$unreached") <<<"$listed" || true)
if [ -n "$stale" ]; then
  echo "note: docs/entry-points.md lists functions hwprof now reaches or that are gone:"
  echo "$stale"
fi
echo "deadcode: nothing unreachable; $(grep -c . <<<"$unreached") entry points hwprof does not call, all in docs/entry-points.md"
