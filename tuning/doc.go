// Package tuning chooses sampling periods while a recording runs: hwprof's
// self-tuning profiler, after the CC-Map paper's sampling profiler, which
// shrinks its interval when few samples find the same activation record on
// top of the stack as the sample before and grows it when many do.
//
// A Controller tunes one event. The caller observes each interval of
// recording (100ms to 1s), hands an Observation to Observe, and applies
// the Decision it returns to every CPU's event with PERF_EVENT_IOC_PERIOD
// (the ioctl takes a pointer to a u64) before the next interval starts.
// Every sample carries its period (PERF_SAMPLE_PERIOD), so a profile that
// weights samples by period stays unbiased however often the period
// changes. Decision.Reason says why, in words, for logs and reports.
//
// # What the caller feeds
//
// Per interval and event: the samples received, the samples the kernel
// lost (PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES) and its throttle
// records (PERF_RECORD_THROTTLE), the interval's length and the number of
// CPUs the event is open on, hwprof's own CPU time (getrusage; with
// several tuned events, each event's share) and the part of it spent on
// the records (its drains, timed with the thread's CPU clock), the
// program's CPU time if known, the number of samples whose top frame repeats the previous
// sample's top frame on the same thread (RepeatCounter counts them from
// (tid, top frame) pairs without allocating; with several threads it
// reports the least repeating thread's share, as the period they share
// must suit the thread of the shortest activations), and for LBR events the mean
// overlap of consecutive LBR windows of a thread (WindowOverlap).
//
// The top frame is a key of the caller's choosing, and the choice sets
// what "repetition" means. The paper's is the activation record: the
// profiler marks each frame it has seen, and a sample repeats when the
// frame on top is still the marked one, the same invocation. A native
// profiler cannot mark frames; ActivationKey identifies the top
// activation from what a sample holds: the callchain's return addresses
// (the path of calls), the stack pointer (the depth), the word at the top
// of the stack (a frameless leaf's return address), the callee-saved
// registers, in which a caller that calls in a loop keeps the loop's
// state across the call, and the caller-saved registers that no code
// still to run in the activation can write (Frame.Kept, from the code
// itself: unwind/clobber), in which a caller compiled with
// interprocedural register allocation (gcc's -fipa-ra, on at -O2) keeps
// that state instead when it knows its callees leave them alone. So the
// next iteration's call is a new key while one call's samples share it.
// A bare function key is not a proxy: a hot function is on top of
// successive samples at any period, so a program dominated by one reads
// as over-sampled at every period (95% repeats in a loop over a 2µs leaf
// that truly repeats 0.1%) and the period climbs to its maximum, 125 Hz,
// with small functions lost in the noise.
//
// activation_test.go runs programs of 1µs to 5ms activations under
// sampling periods of 10µs to 8ms: the key stays within 5 points of the
// true activation repetition wherever the running code leaves the
// callee-saved registers and the top of its stack alone, and otherwise
// reads low, never high (a function's own loop counter in rbx makes one
// activation look like many). Without the caller-saved registers it read
// 23-25% repetition on a loop over small leaves whose state gcc keeps in
// caller-saved registers (scripts/bench-adaptive.sh's phased), where the
// truth is 0.3%; a recording of phased read 25.4% at 250µs and grew
// the period to 716µs at 0.4 s, where with them it stays at 250µs through
// the call phase and grows in the loop phase. Where the running code cannot be
// read through (an indirect jump, such as a switch's table, in the leaf
// on top) or hwprof may not read the process's memory, Kept is 0 and the
// key falls back to that error. Reading low
// only shortens the period, which costs overhead that the budget rule
// caps; reading high, as the function rule does, lengthens it and costs
// accuracy, which nothing caps. A caller without the registers (an old
// recording, a source without the stack copy) may key by the return
// address of the innermost frame; a raw instruction pointer undercounts
// repeats inside loops.
//
// The program's CPU time makes rates per CPU exact. For a Time event it is
// derived from the samples (each stands for one period of the program's
// CPU time); for a Count event without it, every CPU the event is open on
// is assumed busy, which understates the cost for programs that use fewer
// CPUs, and the rate floor is not applied.
//
// # The rules, in order
//
// Observe runs the rules in this order; the first that changes the period
// decides, so loss, throttling and the budget always beat accuracy, and
// accuracy's proposals are clamped to what the earlier rules allow.
//
//  1. Back-off. Any lost sample or throttle record grows the period by
//     BackOff (2) at once, and the rate at which it happened, divided by
//     BackOff, becomes a cap for the rest of the recording, so accuracy
//     never leads back to it.
//  2. Budget. Over the latest MinWindow (100ms) with at least 10ms of
//     program CPU, the cost the period controls is estimated as samples
//     per second per CPU × SampleCost (the kernel's work per sample,
//     2.5µs) plus hwprof's CPU per sample (measured over its drains,
//     Observation.SampleCPU, once they held MinSamples samples; the
//     newest 5-10 × MinSamples count) as a share of the program's CPU. Above
//     Budget (2%), or above the rate cap (MaxRate, 3600 samples/s per
//     CPU, where hwprof's samples cost what perf's default 4000 do; lower
//     if the budget cannot pay the kernel's part), the period grows in one
//     step to land Headroom (20%) inside the limit. hwprof's fixed CPU (wakeups, timers, the Go
//     runtime: it does not scale with the samples) is reported in the
//     reason but never budgeted, since no period reduces it. Until the
//     drains are measured, and for a caller that does not time them,
//     hwprof's work is taken as SelfSampleCost (2µs) per sample,
//     never more than hwprof spent, and a least-squares split of hwprof's
//     CPU into fixed and per-sample parts once the observations span a
//     range of rates; so a first decision never takes fixed cost for cost
//     per sample.
//  3. Floor. With the program's CPU time known, fewer than MinRate (100)
//     samples per second per CPU over the latest second shrink the period
//     in one step to land Headroom above it, as far as the budget allows.
//     A Count event whose rate falls with a phase (few calls in a loop)
//     would otherwise starve.
//  4. Accuracy, as the paper: every MinSamples (1000) samples the share
//     of repeated top frames is compared with MinRepeat (1%) and MaxRepeat
//     (15%); too few repeats shrink the period, too many grow it. The step
//     comes from the best information at hand: an interpolation inside
//     the bracket that measurements on both sides of the band form during
//     a run of changes, the secant through two measurements on one side
//     that differ beyond noise, or else the model share =
//     exp(−period/dwell) (a frame stays on top for an exponentially
//     distributed time), aiming past the band's middle to make up for
//     shares that hold a floor of chance repeats. One step moves the
//     period by at most MaxStep (8×). For LBR events, consecutive windows
//     of a thread overlapping by more than MaxLBROverlap (25%) grow the
//     period (the samples repeat each other) and limit how far a shrink
//     may go.
//
// Every period stays within the kind's Bounds: Time events (cpu-clock,
// task-clock; nanoseconds) 10µs–8ms, Count events (hardware and raw
// events; occurrences) 1000–10^9. Count periods are primes, so sampling
// does not fall into lockstep with a loop whose trip count shares a factor
// with the period; Time periods are whole microseconds.
//
// # The defaults, against perf's
//
// perf's default is 4000 samples per second of CPU. hwprof's default takes
// at most 3600 (MaxRate), and a Time event starts there (278µs), because
// hwprof's samples cost the program more than perf's: at perf's rate the
// default cost more than perf's default. What a sample costs a program is
// mostly the kernel's work, charged to the program's CPU time: the
// interrupt, the callchain walk and the copy into the ring. hwprof's
// samples are bigger, a timer sample of 363 bytes where perf's is 67: the
// user registers and a 128-byte stack copy that restore the leaf frame's
// caller and make the activation key. On the 2-core VM hwprof is measured
// on, the interrupt alone costs a CPU-bound program about 15µs a sample,
// and the bytes another 1-1.5µs (0.4-0.6 points of its work at 4000 Hz,
// paired round by round against perf; without the copy and registers
// hwprof costs what perf does). hwprof's own work on a sample (its drains
// measure about 1.2µs, decoding it for the key) runs on another CPU when
// one is free; a trial that cut hwprof's wake-ups to a fifth (most are the
// Go runtime's monitor thread) saved no more than the noise, 0.1 point. At
// 3600 the default costs the programs of scripts/bench-adaptive.sh less
// than perf's default, and its function overlap with the fine reference
// stays within the rounds' noise of perf's: 10% fewer samples widen the
// sampling error by about 5%, a few hundredths of a point at 12,000
// samples (scripts/bench-cost.sh and bench-adaptive.sh; README,
// Measuring). The cap is a constant measured there, not a measure of the
// machine at hand: where the interrupt is cheaper (no hypervisor, a PMU
// counter's own interrupt) the bytes weigh more against it. Accuracy may
// lengthen the period when the samples repeat the same activations, never
// shorten it past the cap.
//
// The budget, 2%, pays at the cap for the kernel's 0.9% and as much
// again for hwprof's work per sample: the period grows for cost only when
// hwprof's work per sample passes the kernel's, where hwprof would
// otherwise be clearly costlier than perf. hwprof's fixed CPU, 1-2ms per
// second of recording, is the same whatever the period: a longer period
// buys nothing against it, and budgeting it took a CPU-bound program on
// a loaded machine, where it is 3-5% of the program's CPU, to the maximum
// period (125 Hz) at no saving. The simulations "large fixed cost" (the
// period stays at the start) and "expensive hwprof" (it grows until the
// work per sample fits) hold both sides. scripts/bench-adaptive.sh
// compares the default with perf's on programs of different shapes.
//
// # Noise, and why it does not oscillate
//
// A share measured over 1000 samples is noisy: at 1% it rests on ten
// repeats. So a share moves the period only when it is outside its trigger
// beyond doubt: by the Poisson tail under the lower trigger, by the
// binomial standard deviation over the upper one, at two standard
// deviations' worth while a run of changes is under way and three once
// the period has settled. An uncertain share extends its window to 4000
// samples for a second look, with only overwhelming evidence (four
// standard deviations) acting in between; at the second look a settled
// period stays, and a run goes by the estimate. The cost rules, checked
// after every observation, act only on three (budget) or four (floor)
// standard deviations of evidence, and the limits they set for accuracy
// use the rates the counts plausibly stand for.
//
// Hysteresis: a run of changes ends only when the share is inside the band
// narrowed by DeadBand (25%), 1.25%–11.25% by default, and a settled
// period moves only when the share leaves the band widened by it,
// 0.75%–18.75%. A change is not reversed by the next Hold (1)
// evaluation; a reversal within a run interpolates inside the bracket and
// never returns to where the run came from. Cost rules aim Headroom
// inside their limits and accuracy respects the same limits with that
// headroom, so budget and accuracy do not push each other back and forth;
// a period held at a limit moves towards it again only when the limit
// has moved by twice MinChange. Changes under MinChange (20%) are not
// made.
//
// The package's simulations run these rules against programs with phases
// (call-heavy, loop-heavy, a dominant function, heavy-tailed shares,
// expensive hwprof, a large fixed cost, throttling and loss, LBR on calls
// retired and on cycles) and assert at most three changes per phase
// (four where throttling halves the period from the start three times),
// none in a phase's second half and no A→B→A reversal.
//
// # What it does not do
//
// It makes no system calls, starts no goroutines and keeps no history:
// applying a decision, timing intervals, reading hwprof's CPU time and
// recording the periods (each sample's PERIOD field does that) belong to
// the caller. One controller tunes one event.
package tuning
