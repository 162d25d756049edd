// Package profile is hwprof's public data model: the profile a report is
// drawn from, the way pprof keeps its profile/ package in the open and
// everything else internal.
//
// It owns
//
//   - Profile: one recording folded by function, a function-level CC-Map
//     (package ccmap) whose FuncIDs index Funcs, the call sites of its
//     edges (Sites) with their source lines, the facts of the recording
//     (Recording: command, source, events, samples, loss, duration, period
//     history, processes, build-ids) and the warnings of loading it;
//   - the typed values the model is made of: Source, the sample source
//     (timer, lbr, calls, exact, or mixed), and BuildID;
//   - the comparison of profiles (compare.go): aligning the edges and
//     functions of several profiles by name, object and call site
//     (AlignKindsTo; DCGColumns: the columns of hwprof compare) and the
//     agreement metrics of each with a reference (Alignment.Stats:
//     overlap, hot-edge coverage, Pearson and Spearman correlation).
//
// It does not read recordings, symbolize, fold or print: internal/engine
// loads a recording into a Profile (engine.Load), package report renders
// one (text, JSON, flame graphs, folded stacks). Nothing here does I/O or
// starts a goroutine; the caller provides Profiles (from engine.Load, or
// built by hand in tests).
package profile
