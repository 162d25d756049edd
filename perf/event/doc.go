// Package event turns perf's event syntax into the perf_event_attr
// structs `perf record` (6.1) would open: it parses event specifications
// (Parse, SplitList: cycles:u, rNNNN, pmu/term=value,.../), discovers the
// PMUs sysfs lists under /sys/bus/event_source/devices (DiscoverPMUs,
// PMUType) with their format bits and event aliases, resolves each
// specification against them, and applies the record options of a
// RecordConfig (-c, -F, -g, --call-graph, -j, --no-inherit, -p, -a) the
// way perf's evsel__config does (BuildAttrs). Its attrs equal what
// `perf record -vv` prints for the same options, quirks included; the
// tests hold them against perf itself. It also knows which Intel event
// counts retired calls on which CPU model (NearCallEvent), from perf's
// event tables.
//
// It does not open events, read rings or decode records (package perf
// does), register command-line flags (internal/perfflags), or choose a
// sample source (internal/source). It starts no goroutines.
//
// Parsing and building are pure once the PMUs are known: give
// RecordConfig.PMUs (IntelCorePMU stands in for a cpu PMU that is
// missing) and RecordConfig.Limits to build attrs without reading the
// machine. Otherwise BuildAttrs reads sysfs for a pmu/.../ event and the
// kernel.perf_event_* sysctls under /proc/sys; nothing needs privileges.
package event
