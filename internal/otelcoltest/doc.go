// Package otelcoltest runs a real OpenTelemetry Collector for tests: the
// one of testdata/otelcol (the OTLP receiver and the file exporter, pinned
// to the Collector release hwprof's go.mod uses), built once by
// scripts/build-otelcol.sh into a cache outside the repository (the
// first test on a fresh machine builds it: minutes, not counted in any
// test's own time, since .ci/run builds it first).
//
// Start runs it on free loopback ports with a configuration written in the
// test's temporary directory and the service.profilesSupport feature gate;
// Profiles decodes what its file exporter wrote with pdata/pprofile's JSON
// unmarshaler; Kill and Restart take it away and bring it back on the
// same ports, as a Collector that crashes and restarts. Fold and FoldPProf
// reduce OTLP and pprof profiles to comparable samples.
//
// It starts a process (and no goroutine) and reads files; for tests only.
package otelcoltest
