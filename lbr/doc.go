// Package lbr turns branch-stack samples (PERF_SAMPLE_BRANCH_STACK: Intel
// LBR and its kin) into call edges — call-site address → callee entry — and
// estimates how many times each edge executed.
//
// # Entries to call edges
//
// A sample's branch stack is a window of the last D branches the hardware
// recorded, newest first (struct perf_branch_entry: from, to, flags). A
// Decoder classifies each entry:
//
//   - kernel: from or to at or above KernelStart (0xffff800000000000), or
//     the entry's priv field (PERF_BR_PRIV_KERNEL, _HV): dropped;
//   - by the saved branch type, when the recording's branch_sample_type
//     had PERF_SAMPLE_BRANCH_TYPE_SAVE (Decoder.SavedType): PERF_BR_CALL
//     and PERF_BR_COND_CALL are direct calls, PERF_BR_IND_CALL indirect,
//     every other type is not a call; PERF_BR_UNKNOWN falls through to
//   - the instruction at from, read through a CodeReader and decoded with
//     golang.org/x/arch/x86/x86asm: CALL rel32 is a direct call, CALL r/m
//     (and the far LCALL) an indirect one, anything else not a call, bytes
//     that cannot be read or decoded unknown. On Intel the LBR from is the
//     address of the branch instruction itself.
//
// So recordings made with -j any (every taken branch, no saved types, as
// every LBR file in the shared fixtures) yield their call edges too. The
// classification is cached per (process, address): each call site is read
// and decoded once. Calls keep their position in the window (Call.Index,
// counting every recorded entry), their mispredict bit and cycle count.
//
// # The estimator
//
// The event counts a class of branches (calls retired with an ANY_CALL
// branch filter, or taken branches with -j any), the class the window
// records. Its counter overflows after P_k of them (the sample's period)
// and the sample holds the last D (the LBR depth). An Estimator weights
// every appearance of a call by the inverse of its expected number of
// appearances (Horvitz–Thompson). Mode EveryEntry counts each entry at
// P_k/D: unbiased for any call sequence, for P < D, P = D and P > D, with
// fixed or varying periods. Mode NewestPeriod counts only the newest P_k
// entries of a window at weight 1 when P_k <= D: exact when no sample is
// lost. Both assume that the event counts what the window records, per
// thread (with cycles as the event only shares are meaningful), a phase
// random relative to the program (a prime or randomized period), no lost
// or throttled samples, and full windows.
//
// docs/lbr.md has the derivation, the assumptions and what breaks them,
// the simulation test (TestEstimatorUnbiased) and the check against perf
// script on real LBR recordings (TestFixturesMatchPerfScript).
//
// # What it does not do
//
// It does not read processes, recordings or symbol tables: the caller
// decodes samples (package perf), tracks mappings and symbolizes the
// edges. It knows x86-64 only. No goroutines.
package lbr
