// Package autofdo writes sample profiles for sample-based feedback-directed
// optimization: LLVM's text sample profile, the format clang's
// -fprofile-sample-use and `llvm-profdata merge --sample` read (and, through
// llvm-profdata, its extensible binary form).
//
// A recording gives one or two kinds of count (Counts), turned into a
// Profile by FromProfile from a profile.Profile loaded with its sampled
// instructions (the engine's Instrs option, which takes source positions):
//
//   - Samples, where time went: each sampled instruction's samples (self
//     weight over the recording's mean period) times its duplication factor,
//     at its source line — the offset of the line from its function's
//     declaration line (DW_AT_decl_line) in 16 bits and the line's base
//     discriminator, as LLVM computes them — nested under the call sites of
//     the functions inlined there (the instruction's DWARF inlined frames); a
//     line counts its most sampled instruction, as create_llvm_prof counts.
//     Call targets are the samples under each call site in the recorded
//     stacks (after the leaf repair): the time a callee took from there.
//   - Calls, how often: the exact source's (or LBR's estimated) calls, as
//     each function's head count, the call targets of each call site, and
//     the count of each line that calls and of each function's declaration
//     line (at least its calls).
//
// Combine adds counts of one kind and puts the two kinds together: heads
// and call targets from the calls, line counts from the samples scaled to
// executions per function (docs/fdo.md says how). Names are linkage names
// (mangled for C++), without the suffixes compilers give clones (".cold",
// ".part.N", ".llvm.N"…) and symbol versions, as clang looks functions up.
// Only the object asked for is profiled; samples elsewhere are counted.
//
// WriteBOLT writes BOLT's own profile (.fdata) for llvm-bolt: the branches
// of an LBR recording (profile.Profile.Branches), or the sampled
// instructions of another.
//
// The package reads nothing and starts no goroutines: its caller loads the
// recordings (internal/engine) and gives the writer its io.Writer.
package autofdo
