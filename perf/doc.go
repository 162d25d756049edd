// Package perf is hwprof's view of the Linux perf_event kernel ABI: the
// perf_event_attr struct and its constants (attr.go, abi.go), printing an
// attr as `perf record -vv` does (printattr.go), opening events and the
// ioctls on them (open.go), with the permission rules and perf's
// user-space fallback that explain a refused open (fallback.go), the
// system facts opening depends on (system.go: perf_event_paranoid,
// capabilities, online CPUs, the perf_event_* sysctls), and decoding the
// records the kernel and perf write (record*.go, sample.go, decode*.go):
// one decoder for live ring buffers and perf.data files. A SampleFormat
// built from a recording's attrs tells which event each record belongs to
// and decodes it; DecodeSample does not allocate once warm.
//
// It does not parse event specifications, discover PMUs or build attrs
// from perf's options: package perf/event does, on top of this one. It
// imports nothing of hwprof and registers no command-line flags.
//
// Encoding and decoding are pure and testable without a kernel; only the
// functions that say so read files under /proc or /sys or make system
// calls. The package starts no goroutines.
//
// Opening hardware events needs a CPU PMU and, depending on
// /proc/sys/kernel/perf_event_paranoid, CAP_PERFMON or root.
package perf
