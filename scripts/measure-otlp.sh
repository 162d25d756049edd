#!/usr/bin/env bash
# Measures what `hwprof record -a --otlp` costs: its resident memory after
# 1 minute and at the end, and its own CPU time as a share of one core, at
# the default, adaptive rate. The profiles go to the test Collector
# (scripts/build-otelcol.sh) on free loopback ports. With REF=1 the same
# system-wide recording without --otlp runs beside it, for comparison:
# then each recorder samples the other's work too (the reference samples
# the idle task as well), which is not an idle machine's cost.
#
# usage: [REF=1] scripts/measure-otlp.sh [SECONDS]   (default 600; as root)
# The machine should be idle apart from this: say how loaded it was.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/hwprof" ./cmd/hwprof
col=$(bash scripts/build-otelcol.sh)
read -r grpc http < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
cat >"$work/otelcol.yaml" <<YAML
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "127.0.0.1:$grpc"}
      http: {endpoint: "127.0.0.1:$http"}
exporters:
  file: {path: "$work/profiles.jsonl"}
service:
  telemetry: {logs: {level: warn}, metrics: {level: none}}
  pipelines:
    profiles: {receivers: [otlp], exporters: [file]}
YAML
"$col" --config "$work/otelcol.yaml" --feature-gates=+service.profilesSupport 2>"$work/otelcol.log" &
sleep 2
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
if [ "${REF:-0}" = 1 ]; then
	"$work/hwprof" record -a -q --duration "${secs}s" -o "$work/ref.data" &
else
	sleep "$secs" & # no reference: its figures read 0
fi
ref=$!
"$work/hwprof" record -a -q --duration "${secs}s" -o "$work/otlp.data" \
  --otlp "http://127.0.0.1:$http" --otlp-spool "$work/spool" 2>"$work/otlp.log" &
otlp=$!
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
peak() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime, clock ticks
# (with no reference, "without" reads sleep's: next to nothing)
hz=$(getconf CLK_TCK)
sleep 60
echo "RSS at 1 min: with --otlp $(rss $otlp) KB, without $(rss $ref) KB"
sleep $((secs - 62))
t_otlp=$(cpu $otlp) t_ref=$(cpu $ref)
echo "RSS at $((secs - 2)) s: with --otlp $(rss $otlp) KB, without $(rss $ref) KB; peak so far $(peak $otlp) KB and $(peak $ref) KB"
awk -v a="$t_otlp" -v b="$t_ref" -v hz="$hz" -v s="$((secs - 2))" 'BEGIN {
  printf "own CPU over %d s: with --otlp %.2f%% of one core, without %.2f%%\n", s, 100*a/hz/s, 100*b/hz/s }'
wait $otlp $ref
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "profiles the Collector wrote: $(wc -l <"$work/profiles.jsonl") requests; recording: $(du -h "$work/otlp.data" | cut -f1)"
cat "$work/otlp.log"
