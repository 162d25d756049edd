// Package release closes perf events in a detached process, so that a
// recording whose events are slow to release returns at once.
//
// Releasing the last perf event of a tracepoint (a tracefs uprobe event
// among them) waits, under the kernel's global event_mutex, for grace
// periods: perf_trace_destroy → perf_trace_event_unreg → the uprobe's
// unregistration (uprobe_unregister_sync) and tracepoint_synchronize_unregister,
// about 80 ms on the Linux 6.18 VMs this was built on, one tracepoint at a
// time however many threads close them. Until the releaser is done the
// tracepoints stay registered, and opening new tracepoint or uprobe events
// waits for the event_mutex between releases.
//
// Start re-executes the caller's binary (/proc/self/exe) with Arg, the
// event fds as its descriptors 3, 4, ..., and the exact source's tracefs
// probes and mount, if this process made them (internal/uprobe); the
// releaser (Main) closes the fds, then removes the probes and unmounts
// that tracefs.
//
// What it does not do: it decides nothing about which events to release
// here (internal/record does), and it starts no goroutines.
//
// The caller provides a binary whose main, before anything else, calls
// Main when its first argument is Arg (hwprof's does, and the test
// binaries of the packages that record).
package release
