// Package script prints every sample of a recording as `perf script`
// does: command, pid/tid, cpu, time, period and event, then one line per
// frame (address, function+offset, object); with Options.Srcline the
// source lines of each frame, inlined ones included; with -F brstack or
// brstacksym the branch stack. -F with perf's field names (FieldNames:
// comm, tid, time, ip, sym, dso, brstack, ...) prints those fields in perf
// script 6.1's layout instead; ParseFields reads -F. Objects are named as
// perf's dso names them ([kernel.kallsyms], [module], the recorded path:
// Analysis.ObjectName).
//
// It owns the printer (Printer): what is kept of each sample of a window
// of samples while the recording is read, the symbols asked for, and the
// layouts. It prints as it reads: a window at a time (a few thousand
// samples), once the window's new addresses are resolved, so its memory
// grows with the recording's distinct addresses, not with its samples.
// It does not read the recording, unwind or symbolize: the analysis of
// the recording does, through the Analysis interface (hwprof's engine,
// internal/engine, provides it), and the names printed are the engine's,
// so that report and script never name a frame differently.
//
// The caller provides the perfdata.Reader, the Analysis of its samples
// and the writer (New), hands every sample to Printer.Add in time order
// (the engine's Visit), then calls Printer.Finish, which prints the last
// window and returns the error of writing and notes on the objects that
// could not be read. The caller closes the reader and reports the
// analysis's own diagnostics. It starts no goroutines of its own (the
// Analysis's Resolve may, and ends them before it returns).
package script
