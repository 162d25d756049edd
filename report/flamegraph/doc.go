// Package flamegraph draws flame graphs of sampled stacks: a self-contained
// interactive HTML page (WriteHTML), a differential page of two profiles
// (WriteDiffHTML), folded stacks for Brendan Gregg's flamegraph.pl and the
// tools that read its format (WriteFolded, ParseFolded), and a table of the
// functions whose shares changed most between two profiles (DiffTable).
//
// The input is deliberately small: a list of Stacks, each a path of Frames
// from the root caller to the leaf, with its weights (time, samples and,
// for sources that count calls, the estimated calls into the leaf in that
// context), and a Meta saying what was recorded. The package knows nothing
// of perf.data, symbolization or the analysis engine; the caller converts
// its profile to Stacks.
//
// Time off the CPU. A Stack may carry OffCPU, the nanoseconds threads
// spent off the CPU with it (Meta.HasOffCPU); the page then offers an
// off-CPU view and, when Stack.Time is nanoseconds of a clock event too
// (Meta.HasWall), a wall view summing the two in each frame. Frames whose
// weight in the view is all off-CPU time are drawn in an off-CPU palette,
// "[preempted]" apart; folded stacks can be written by either weight.
// A differential page has no off-CPU view.
//
// Weights. A frame's width is the weight of every stack that passes through
// it (its total); its self weight is that of the stacks ending at it. With
// the calls weight a stack's weight is the calls into its leaf in that
// context, so a frame's total is the calls made at or below that context:
// children nest inside their parents exactly as with time, and a frame's
// self calls are the calls into that function in that calling context.
//
// The page. One HTML file with its script, style and data inline: it loads
// nothing from the network and opens offline in any current browser. The
// stacks are merged into a tree and embedded as parallel arrays with a
// string table (see encode.go), so a profile of 50,000 distinct stacks
// takes a few MB at most. Siblings too narrow to see (Options.MinShare of
// the whole under every weight shown) are merged into one counted
// "[N narrow frames]" frame per parent, as flamegraph.pl and inferno do
// with a minimum width; their weight is kept, never dropped, but their
// names are gone, so a search cannot match inside them (the page says how
// much weight it could not search). Broken or
// truncated stacks keep their Broken frames, drawn in their own colour.
//
// The page script exposes window.hwprofFlame (frames, state, zoom, reset,
// search, setWeight, setOrientation) for tests and for scripting, and sets
// the performance mark "hwprof-ready" when it is interactive.
//
// The package does no I/O beyond the writer it is given and starts no
// goroutines.
package flamegraph
