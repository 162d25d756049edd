// Package source owns hwprof's sample-source policy: which source a
// recording uses and why, and what recording with it means.
//
// The sources (see DESIGN.md): lbr (a hardware call event with an LBR
// branch stack), calls (the hardware call event alone), timer (software
// cpu-clock with callchains), exact (uprobes on function entries).
//
// Gather reads the machine's facts (sysfs PMUs, perf_event_paranoid,
// capabilities, the CPU model, tracefs access); Assess turns them into a
// verdict per source by pure rules, so every rule is a table test; Choose
// picks the default: lbr where it works, else calls, else timer, with a
// sentence saying why. Decide applies the whole policy to what a command
// line asks (Request: --source, -e, and perf's -c/-F/-g/-j beside them):
// -e and --source exclude each other, a named source that does not work
// here is an error naming what is missing and what works instead, and the
// overrides that do not apply to a source are refused. Plan sets up the
// events of lbr, calls and timer (perf record options, prime periods, the
// event known for the CPU model) and Decision.Config applies the overrides.
// Compared and Runs are compare's policy: which sources it records
// against the reference, and which of them share a run of the program.
//
// What it does not do: it opens no events (internal/record does, and
// `hwprof check` confirms each verdict by opening the source's events with
// record.TryOpen), it does not set up the exact source's probes
// (internal/uprobe does) and it does not parse flags. Only Gather touches
// the machine; everything else is pure and safe for concurrent use. It
// starts no goroutines.
//
// The caller provides the facts (Gather, or made up for another machine:
// `hwprof record --print-attr --cpu` replaces the CPU model) and, for
// Decide, the flags as the user wrote them, so that errors can name them.
package source
