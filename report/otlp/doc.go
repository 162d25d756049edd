// Package otlp converts hwprof's pprof profiles into OpenTelemetry's
// profiles signal (OTLP profiles, the v1development protocol of the
// Collector release hwprof is built against; see go.mod), so that
// recordings can be sent to an OpenTelemetry Collector and from there to
// any profiling backend.
//
// The input is the pprof profile package report/pprof builds
// (pprof.Build of report.PProfProfile): the same mappings, functions,
// locations, stacks and weights `hwprof report --format pprof` writes, so a
// pushed recording has the functions, stacks and weights its report has.
// FromPProf writes one OTLP Profile per sample type but samples/count (a
// count the other types already weigh): cpu/nanoseconds or the event's
// count for the sampled stacks, calls/count for the measured call edges of
// call-counting sources. Each sample keeps pprof's label kind=stack or
// kind=edge as the attribute "kind"; a sample whose value of that type is
// zero is left out of that type's profile.
//
// OTLP profiles keep mappings, locations, functions, stacks, strings and
// attributes in one dictionary shared by all profiles of a message; each
// table's entry 0 is the empty (zero) entry, as the protocol asks, and an
// index 0 means "none". A mapping's build-id is its attribute
// process.executable.build_id.gnu (hex) or process.executable.build_id.go
// (a Go build-id); the resource attributes are OpenTelemetry's semantic
// conventions (Resource).
//
// The package does no I/O and starts no goroutines; sending is
// internal/otlpsend's.
package otlp
