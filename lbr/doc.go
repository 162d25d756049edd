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
// Notation: the event counts a class of branches B (calls retired with an
// ANY_CALL branch filter, or taken branches with -j any): the same class the
// window records. The counter overflows after P branches of B (the
// sample's period, PERF_SAMPLE_PERIOD, or the attr's fixed period); the
// sample then holds the last D branches of B (D is the hardware depth, the
// LBR size, not the entries of one sample). Number the branches of one
// thread 1, 2, ...; samples happen at branch indices t_1 < t_2 < ...;
// P_k = t_k - t_{k-1}.
//
// Branch i is in the window of sample k exactly when t_k - D < i <= t_k,
// that is when a sample falls in [i, i+D-1]. Let N_i be the number of
// such samples. The Horvitz–Thompson estimator of the number of calls on
// edge e weights every appearance by the inverse of its expected number
// of appearances:
//
//	Ĉ(e) = Σ_k Σ_{entries j of window k on e} w_kj,  with E[Σ_{k∋i} w_k] = 1 for every i.
//
// Mode EveryEntry: w = P_k/D for every entry. With a fixed period P and a
// phase φ uniform in [1, P] (samples at t ≡ φ mod P), any D consecutive
// indices hold exactly D/P sampling points in expectation, so E[N_i] = D/P
// and E[Ĉ(e)] = Σ_{i on e} (P/D)(D/P) = C(e): unbiased for any sequence,
// whatever its periodicity — P < D (windows overlap, a call is counted in
// about D/P windows, each time at P/D), P = D (each call in exactly one
// window) and P > D (gaps, each call in a window with probability D/P).
// With varying periods (randomized, or changed by the tuner) drawn
// independently of the program, the points form a stationary renewal
// process with mean period μ; by Campbell's formula for the marked point
// process (mark = the period P_k ending at t_k, which under the Palm
// distribution has the period's own distribution) E[Σ_{t_k in [i,i+D-1]}
// P_k] = (D/μ)·μ = D, so E[Σ_{k∋i} P_k/D] = 1: unbiased again, using each
// sample's own period.
//
// Mode NewestPeriod: when P_k <= D, the newest P_k entries of window k are
// exactly the branches t_{k-1}+1 .. t_k, so counting only those, at weight 1,
// counts every branch exactly once: the estimate is exact (no variance)
// when no sample is lost; when P_k > D every entry is counted at P_k/D as
// above. Unbiasedness for P_k > D: given the period L of the interval
// holding branch i, i's position in it is uniform (random phase; length-
// biased interval), so it is among the last D with probability D/L and its
// expected weight is (D/L)(L/D) = 1.
//
// Assumptions, and what breaks them:
//
//   - The event counts the class of branches the window records, per
//     thread. With cycles as the event (propeller_sample_1) the expected
//     number of windows holding a branch is the cycle span of the next D
//     branches over P: estimates are then biased by the local branch
//     density and only appearance counts (or shares) are meaningful.
//   - The phase is random relative to the program: a fixed period
//     synchronized with a loop (a pattern of length P) is unbiased only in
//     expectation over the phase; each run may be far off (the simulation
//     shows the spread). A prime or randomized period avoids that.
//   - Samples are not lost or throttled; lost samples bias both modes down
//     by the lost share (NewestPeriod also loses its exactness).
//   - The window is full and follows the thread: the kernel resets the LBR
//     at context switch, so right after one the window is short; and the
//     last D-1 branches of a thread are under-counted (no later sample).
//     Both affect O(D) branches per switch or thread.
//   - Entries the hardware records but the event does not count (far
//     branches under ANY_CALL on Intel, which the event
//     BR_INST_RETIRED.NEAR_CALL excludes) shorten the window in branches
//     of B; rare in user code.
//
// The simulation test (TestEstimatorUnbiased) checks this: uniform,
// skewed, bursty and period-aliased call sequences sampled as above, for
// P < D, P = D and P > D, fixed and randomized periods, both modes; it
// logs the bias and spread of the relative error per edge and fails when
// an edge's mean error is beyond 4.5 standard errors of zero.
//
// # Checked on real hardware data
//
// TestFixturesMatchPerfScript reads the autofdo LBR recordings
// (propeller_sample_1.perfdata1, test.lbr) and checks that the edges, with
// their appearance, mispredict and cycle counts, equal those obtained from
// perf's own `perf script -F brstack` output classified by the mnemonic
// `objdump -d` prints at each from address.
//
// # What it does not do
//
// It does not read processes, recordings or symbol tables: the caller
// decodes samples (package perf), tracks mappings and symbolizes the
// edges. It knows x86-64 only. No goroutines.
package lbr
