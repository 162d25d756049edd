// Package pprof writes hwprof's profiles in pprof's format (profile.proto,
// gzipped), for `go tool pprof`, continuous-profiling servers and
// `go build -pgo`.
//
// The input is deliberately small: a Profile of mappings, functions,
// locations (an address and its source lines, inlined frames included),
// sampled stacks with their sample counts and time, and measured call
// edges with their call counts, plus the recording facts as comments. The
// package knows nothing of perf.data, symbolization or the analysis
// engine; the caller converts its profile to this one. Write goes through
// github.com/google/pprof/profile and checks the result with its
// CheckValid before writing.
//
// # What an ordinary profile holds
//
// Mappings with their build-ids; functions with file and start_line;
// locations whose inlined frames are pprof lines (innermost first); the
// sample types cpu/nanoseconds (when the profile has time), samples/count,
// and calls/count (when it has measured call counts); the recording facts
// as comments (`go tool pprof -comments`). The default sample type is the
// Options.Weight asked for when the profile has it.
//
// # How call counts are written
//
// A pprof profile has no call edges of its own: pprof and the Go compiler
// derive an edge weight from every adjacent pair of frames in a sample's
// stack (caller frame, callee frame), adding the sample's value. So a
// measured edge caller → callee, called N times from one call site, is
// written as its own two-frame sample — the callee's entry (a location with
// no address, one line: the callee at its start line), then the caller's
// call-site location — whose calls/count is N. The adjacent-pair weight
// pprof derives for (call site, callee) is then exactly the measured count,
// and no other pair gets weight from it. Their samples/count is N too: a
// call is what a call-counting source samples (each probe hit of the exact
// source is one call), and go build -pgo weighs edges by samples/count when
// the profile has no cpu/nanoseconds (an exact or lbr recording's), so it
// weighs them by the measured calls. They carry zero cpu/nanoseconds and
// event weight, and the sampled stacks carry zero calls/count, so time and
// calls never mix; the label kind=edge or kind=stack tells the two kinds
// apart (`-tagfocus kind=edge`). Under calls/count a function's flat weight
// is the calls into it; its cumulative weight adds the calls it made. (Under
// samples/count, a profile with both kinds adds the stacks' sample counts to
// the edges' calls; -tagfocus kind=stack shows the samples alone.)
//
// # Profiles for go build -pgo
//
// With Options.PGO the file is made for the Go compiler, which reads only
// the first sample type that is samples/count or cpu/nanoseconds, builds its
// call graph from adjacent frames as above, and rejects a profile without
// any non-zero Function.start_line (Write then fails with ErrNoStartLine).
// With the calls weight the file holds only the edge samples, and their
// samples/count is the measured call count (a comment in the file says so;
// calls/count repeats it under its own name): the compiler's edge weights
// are the measured call counts. With the time weight it holds the sampled
// stacks, cpu/nanoseconds first. (An ordinary profile with time, whose first
// type is cpu/nanoseconds, also works with go build -pgo, weighted by time;
// its edge samples then weigh nothing. One without time, such as an exact
// recording's, is weighted by the edges' samples/count: the measured calls.)
//
// # Odd items
//
// Validate says what a profile must hold; Write never refuses a
// whole profile for one item that breaks it: Repair names a function
// without a name from its object and address ("[object+0xoffset]", as
// hwprof's reports name code without a symbol), clears negative lines,
// leaves out a sample or edge it cannot write, and says so in a warning
// per kind (Options.Warn).
//
// The package does no I/O beyond the writer it is given and starts no
// goroutines.
package pprof
