// Package engine is the one analysis path of a recording, shared by every
// command that reads one (report through internal/profile, script,
// compare): it owns
//
//   - the object resolver (Objects): for each recorded object the file
//     read for its segments, CFI, code and symbols (its path under
//     --symfs when the build-id matches, else a file named by its
//     build-id under a debug directory, or a file the caller names), and
//     the one key its symbols are resolved by: the kernel's kallsyms, a
//     JIT region's perf map /tmp/perf-PID.map, the running kernel's vdso,
//     or the object's file with its recorded build-id (all-zero build-ids
//     cleaned away);
//   - the process model the side-band records build (Apply) and the
//     unwinding of each sample into typed frames (Frames: runtime address,
//     object, object address, instruction pointer or return address);
//   - symbolization once per unique address of each object key (Symbols),
//     after the samples are read;
//   - a per-sample visitor over a whole recording (Visit), in time order.
//
// It does not fold, count or print: internal/profile folds what it
// unwinds into a profile (reading records ahead on a goroutine of its own
// and skipping the decoding of stacks it has seen, for speed), and
// hwprof script prints each visited sample.
//
// Goroutines: Symbols.Resolve opens objects in parallel and
// Symbols.PreloadKernel reads kallsyms while the records are read; all of
// them have ended when Resolve returns or Close is called.
//
// The caller provides the perfdata.Reader (and closes it), and calls
// Close to remove the files the engine wrote (the vdso's image).
package engine
