// Package engine is the one analysis path of a recording, shared by every
// command that reads one (report, script, compare, and the flame graph and
// folded outputs): reading, ordering, the process model, unwinding,
// folding and symbolization happen here, and nowhere else. It owns
//
//   - the object resolver (Objects): for each recorded object the file
//     read for its segments, CFI, code and symbols (its path under
//     --symfs when the build-id matches, else a file named by its
//     build-id under a debug directory, or a file the caller names), and
//     the one key its symbols are resolved by: the kernel's kallsyms, a
//     JIT region's perf map /tmp/perf-PID.map, the running kernel's vdso,
//     or the object's file with its recorded build-id (all-zero build-ids
//     cleaned away); every file it opens for a recording goes through
//     package safefile (regular files only, within --symfs, each debug
//     directory or /), and each file refused is kept once (Refused) for
//     Diagnose;
//   - the process model the side-band records build (Apply) and the
//     unwinding of each sample into typed frames (Frames: runtime address,
//     object, object address, instruction pointer or return address);
//   - symbolization once per unique address of each object key (Symbols),
//     after the samples are read (Resolve), or a window of samples at a
//     time, each object read once and kept (ResolveAdded);
//   - a per-sample visitor over a whole recording (Visit), in time order:
//     hwprof script is a consumer of it, through ScriptView (the engine in
//     public types: report/script's Analysis);
//   - what reading found wrong (Diagnose, into package diag's Log): the
//     reader's warnings and error, the records that did not decode
//     (Skips; Analyzed says which types count) and the files refused, the
//     same for the loader, the visitor and hwprof dump;
//   - the loader (Load, LoadFrom: load.go, finish.go and the files beside
//     them), the stages of package pipeline, which fold a recording into
//     the public model, a profile.Profile: each event's samples by its
//     source (classify.go:
//     timer, lbr, calls, exact), stacks through a cache of unwound
//     callchains (stackcache.go; foldFast folds a sample whose callchain
//     is cached without decoding it), address ids projected onto
//     functions after symbolization, and the recording's facts (period
//     history, processes, loss).
//
// The loader and the visitor are in one package so that report and script
// can never name a frame differently: both take their frames from Frames
// and their names from Symbols (TestReportAndScriptNameFramesAlike runs
// both over every fixture).
//
// It does not print or render: package report renders a Profile, and
// report/script prints each visited sample (hwprof script).
//
// It starts no goroutines. Load runs the recording through package
// pipeline, which owns the concurrency (preparers, the folding goroutine,
// the Folder's workers; LoadAll's recordings in parallel), with the loader
// as its stages (load.go: Route, Apply; prepare.go: Preparer; sample.go:
// Fold, Flush): the stages say what is done to a record, the pipeline
// where and in which order. Symbols reads kallsyms and the objects' symbol
// tables ahead while the records are read (PreloadKernel, PreloadObject)
// and resolves objects in parallel through package symbolize's Ahead and
// EachObject; Resolve, or Close for the kernel's, waits for them.
//
// The caller provides the perfdata.Reader to New (and closes it), and
// calls Close to remove the files the engine wrote (the vdso's image);
// Load opens, reads and closes a file itself.
package engine
