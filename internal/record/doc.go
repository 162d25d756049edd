// Package record measures a program or running processes with perf events
// and writes what the kernel reports to a perf.data file (Record), or
// tries whether events open at all (TryOpen, for hwprof check).
//
// One event per CPU is opened for each target task (an inherited event
// with cpu = -1 cannot be mmapped), or system-wide one per CPU for every
// task (pid -1), every event gets its own ring buffer
// (or, with Options.ShareRing, all events of a CPU share one),
// and a single loop drains all rings at each epoll wake-up, writing the
// records verbatim. The header is brought up to date about once a second,
// so a recording whose hwprof was killed is readable up to then. It
// writes the records perf synthesizes for processes that existed before
// the recording (package perf/synth) and the build-ids of the objects
// mapped. At the end it reads its own file's samples back once (hits.go)
// to keep the objects that had samples in the build-id cache
// (Options.BuildIDCache), and keeps the perf maps and jitdump files of
// JIT processes of other namespaces in the host's /tmp (perfmaps.go),
// opened through /proc/PID/root while they lived. With Options.Adaptive it tunes the events' periods while
// recording (package tuning decides; adaptive.go applies).
//
// It also owns the small pieces of a record command line that are about
// the recording rather than the flags (Options.Adapt, SetMaxStack); the
// values of -p and -m are read by internal/perfflags, and the summary
// printed after a recording is package internal/record/summary's.
//
// What it does not do: it does not choose the events (event.BuildAttrs
// builds them from perf's options, internal/source chooses a sample
// source, internal/uprobe defines the exact source's probes), and it reads
// no recordings but its own, at its end.
//
// The caller provides attrs (event.BuildAttrs) and, for the command mode,
// a binary whose main dispatches launch.Arg to launch.Main (hwprof's
// does: see internal/launch); with many events whose release is slow
// (tracepoints), the binary doubles as the background releaser of the
// events: its main dispatches release.Arg to release.Main (package
// internal/record/release). Opening events
// needs the privileges perf_event_paranoid asks for; attaching to another
// user's process needs CAP_PERFMON or root. Options.Interrupt delivers the
// signals that end a recording.
//
// Options.Watch is shown what the targets use (their CPU time from
// /proc/PID/stat, the samples) about every WatchInterval and may end the
// recording (Stats.Stop says what ended it: summary.StopNote says it for
// the user).
//
// Concurrency: the recording loop runs on the caller's goroutine and calls
// Options.Status, Options.Watch and Options.Notice from it. It starts no
// goroutines: closing thousands of events when the background releaser
// cannot start is shared between threads by internal/pipeline's Each,
// whose goroutines are gone when Record returns.
package record
