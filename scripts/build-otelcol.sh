#!/usr/bin/env bash
# Builds the OpenTelemetry Collector that hwprof's OTLP tests send profiles
# to (testdata/otelcol: the OTLP receiver and the file exporter, its own Go
# module pinned to one Collector release) once, into a cache directory
# outside the repository, and prints the binary's path. The binary is
# named by a hash of the module's go.mod, go.sum and main.go, so a change
# to any of them builds a new one; one already built is reused at once.
# A cold build takes minutes (hundreds of modules); .ci/run calls this
# before the tests, and the tests call it when the binary is missing.
#
# usage: scripts/build-otelcol.sh   (cache: $HWPROF_OTELCOL_CACHE, else
#        $XDG_CACHE_HOME/hwprof/otelcol, else ~/.cache/hwprof/otelcol)
set -euo pipefail
cd "$(dirname "$0")/../testdata/otelcol"
cache=${HWPROF_OTELCOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hwprof/otelcol}
key=$(cat go.mod go.sum main.go | sha256sum | cut -c1-16)
bin=$cache/otelcol-$key
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp "$cache/.build.XXXXXX")
  trap 'rm -f "$tmp"' EXIT
  echo "building the test Collector into $bin (once; a cold build takes minutes)" >&2
  go build -trimpath -o "$tmp" .
  mv -f "$tmp" "$bin"
fi
echo "$bin"
