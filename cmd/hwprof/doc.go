// Command hwprof measures how often each call edge of a native program
// runs, with the CPU's performance-monitoring unit through perf_event_open.
//
// Usage:
//
//	hwprof record [options] -- CMD ARGS   record a program
//	hwprof record -p PID[,PID] [options]  attach to running processes
//	hwprof record -a [-- sleep N]         record every process (system-wide)
//	hwprof check                          what this machine can measure
//	hwprof demo                           record the built-in workload
//	hwprof report [-i FILE]               functions, call edges and contexts
//	hwprof script [-i FILE]               every sample with its stack
//	hwprof compare -- CMD ARGS            each source against the exact counts
//	hwprof dump [-i FILE] [--stats]       the records of a perf.data file
//	hwprof diff BASE NEW                  what changed between two recordings
//
// Run "hwprof help" or "hwprof CMD -h" for the options.
//
// The command is thin: each subcommand parses its flags and calls one
// function per stage from the packages that own the work. record: the
// sample-source policy (internal/source.Decide), the exact source's probes
// (internal/uprobe), the recording (internal/record) and its summary
// (internal/record/summary); report and compare: the engine and the
// reports (compare's table: report.Comparison; its recordings:
// compare_record.go); script: report/script over the engine's visitor;
// dump: perf/perfdata/dump; check: internal/source's verdicts confirmed by
// record.TryOpen. What stays
// here is the flags, the messages and exit codes (exit 2 for a usage
// error, 1 for a failure, the recorded program's status in command mode),
// the live status line on a terminal, and the built-in workload `hwprof
// demo` records (workload.go: the same binary re-executed with a marker
// argument, so the demo needs no compiler).
//
// The binary also serves as internal/launch's trampoline (where its memfd
// launcher cannot run) and as internal/record's background releaser of
// events: both are re-executions of this binary with a marker argument
// (launch.Arg, release.Arg), which main hands to launch.Main or
// release.Main before anything else.
package main
