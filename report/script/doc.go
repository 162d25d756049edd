// Package script prints every sample of a recording as `perf script`
// does: command, pid/tid, cpu, time, period and event, then one line per
// frame (address, function+offset, object); with Options.Srcline the
// source lines of each frame, inlined ones included; with -F brstack or
// brstacksym the branch stack. -F with perf's field names (FieldNames:
// comm, tid, time, ip, sym, dso, brstack, ...) prints those fields in perf
// script 6.1's layout instead; ParseFields reads -F. Objects are named as
// perf's dso names them ([kernel.kallsyms], [module], the recorded path).
//
// It owns the printer (Printer): what is kept of each sample while the
// recording is read, the per-address symbol requests, and the layouts.
// It does not read the recording, unwind or symbolize: the analysis
// engine (internal/engine) does, and the names printed are the engine's,
// so that report and script never name a frame differently.
//
// The caller provides the perfdata.Reader and its engine.Engine (New),
// runs the engine's Visit with Printer.Add, then calls Printer.Symbolize
// (which resolves every object's unique addresses at once through the
// engine's Symbols and notes the objects that could not be read in a
// diag.Log) and Printer.Print with a writer. The caller closes the engine
// and the reader, and reports the engine's own diagnostics (Diagnose).
// It starts no goroutines of its own (Symbols.Resolve runs its own, and
// ends them before it returns).
package script
