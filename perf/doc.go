// Package perf is hwprof's view of the Linux perf_event kernel ABI: the
// perf_event_attr struct and its constants, event specifications in perf's
// syntax and the attrs they build, PMU discovery under
// /sys/bus/event_source/devices, opening events, and decoding the records
// the kernel and perf write (record*.go, sample.go, decode*.go): one
// decoder for live ring buffers and perf.data files. A SampleFormat built
// from a recording's attrs tells which event each record belongs to and
// decodes it; DecodeSample does not allocate once warm.
//
// Everything that turns a specification into an attr, and every encoding or
// decoding of kernel structs, is pure and testable without a kernel; only
// the functions that say so open files under /sys or make system calls.
// The package starts no goroutines.
//
// Opening hardware events needs a CPU PMU and, depending on
// /proc/sys/kernel/perf_event_paranoid, CAP_PERFMON or root.
package perf
