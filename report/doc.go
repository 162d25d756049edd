// Package report holds every output format of `hwprof report`: it renders
// a named profile (package profile) as the text report (Text), the JSON
// report (JSON), a flame-graph page (Flamegraph) and folded stacks
// (Folded); its subpackages draw one format each from a small input model
// of their own (report/flamegraph: pages and folded stacks of Stacks).
// FlameStacks is the adapter from a profile to report/flamegraph's model,
// PProfProfile the one to report/pprof's (WritePProf writes it: pprof
// for go tool pprof, profiling servers and go build -pgo).
// Comparison prints hwprof compare's table of an alignment of several
// sources' profiles (profile.Alignment); Diff and DiffFlamegraph show
// what changed between two profiles. report/script prints the samples of
// a recording as perf script does, from the engine's visit of it rather
// than from a profile.
// It reads no files, does no I/O beyond the writer it is given and starts
// no goroutines: the caller loads the profile (engine.Load) and passes a
// writer.
//
// Text and JSON:
//
// Both renderers show the same lists, computed once (summarize):
//
//   - functions: self and total (inclusive, once per sample under
//     recursion) as shares of the sampled weight (Totals.Samples), and the
//     calls into the function when the source counts calls (HasCalls);
//     hottest by self, then total, then calls.
//   - edges: for a source that counts calls, every edge's Calls, as count
//     and as share of all calls. For a timer profile, edges come from
//     adjacent frames of sampled stacks as pprof and Go PGO derive them:
//     every adjacent pair (caller frame, callee frame) of a sample adds the
//     sample's weight, once per occurrence (a recursive edge twice on one
//     stack counts twice), summed from the calling contexts of the edge
//     (their Total); shares are of the sum over all edges, and there is no
//     count. Contexts removed by ccmap's Prune take their edges' weight
//     with them.
//   - contexts: calling contexts from the outermost caller to the callee,
//     hottest first. With call counts, by the calls made in that context
//     (share of the calls that came with a context); for timer, by the
//     samples whose whole stack is that path (share of the sampled weight).
//
// Every list is sorted by weight, ties broken by names (then objects and
// call-site offsets, then ids), so the output is deterministic. Shares are
// 0 when their total is 0. The JSON follows docs/REPORT-JSON.md (hwprof_json
// 1); unknown strings (an object, a source file and its line) are null
// there, as is a command line the recording lacks, and a call site
// missing from Profile.Sites is a null callsite.
//
// The header lists the recording's processes (Recording.Processes) with
// their shares of the sampled weight when there is more than one (the
// text shows the ten busiest; the JSON always has all of them).
//
// Options: Top bounds functions and edges (0: 20), Contexts the contexts
// (0: 10); a negative value shows all.
package report
