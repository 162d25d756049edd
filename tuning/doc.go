// Package tuning chooses sampling periods while a recording runs: hwprof's
// self-tuning profiler, after the CC-Map paper's sampling profiler, which
// shrinks its interval when few samples find the same activation record on
// top of the stack as the sample before and grows it when many do.
//
// A Controller tunes one event. The caller observes each interval of
// recording (about 100ms to 1s), hands an Observation to Observe, and
// applies the Decision it returns to every CPU's event with
// PERF_EVENT_IOC_PERIOD before the next interval starts. Every sample
// carries its period (PERF_SAMPLE_PERIOD), so a profile that weights
// samples by period stays unbiased however often the period changes.
//
// # What the caller feeds
//
// Per interval and event: the samples received, the samples the kernel
// lost (PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES) and its throttle
// records (PERF_RECORD_THROTTLE), the interval's length and the CPUs the
// event is open on, hwprof's own CPU time (getrusage), the program's CPU
// time if known, the number of samples whose top frame repeats the
// previous sample's top frame on the same thread (RepeatCounter counts
// them from (tid, top frame) pairs without allocating), and for LBR
// events the mean overlap of consecutive LBR windows of a thread
// (WindowOverlap).
//
// The top frame is a key of the caller's choosing, and the choice sets
// what "repetition" means. The paper's key is the activation record (the
// same invocation still on top); a function key mixed with the caller's
// return address approximates it from a frame-pointer callchain. A bare
// function key also counts landing in the same hot function again by
// chance, so a program dominated by one function reads as over-sampled at
// every period and ends at the maximum period, which is cheap and, for
// such a program, accurate enough. A raw instruction pointer undercounts
// repeats inside loops.
//
// The program's CPU time makes rates per CPU exact. For a Time event it is
// estimated from the samples (each one stands for one period of the
// program's CPU time); for a Count event without it, every CPU the event
// is open on is assumed busy, which understates cost for programs that use
// fewer CPUs, and the rate floor is not applied.
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
//  2. Budget. Over a window of at least MinWindow (100ms) and 10ms of
//     program CPU, the profile's cost is estimated as samples per second
//     per CPU × SampleCost (the kernel's work per sample, 2.5µs) plus
//     hwprof's CPU share. Above Budget (1%), or above the rate cap
//     (Budget/SampleCost = 4000 samples/s per CPU, perf's default
//     frequency, or MaxRate), the period grows in one step to land
//     Headroom (20%) inside the limit.
//  3. Floor. With the program's CPU time known, fewer than MinRate (100)
//     samples per second per CPU shrink the period in one step to land
//     Headroom above it, as far as the budget allows. A Count event whose
//     rate falls with a phase (few calls in a loop) would otherwise starve.
//  4. Accuracy, every MinSamples (1000) samples, as the paper: the share
//     of repeated top frames below MinRepeat (1%) shrinks the period, above
//     MaxRepeat (15%) grows it. The step aims at the band's geometric
//     middle (3.9%): first by the model share = exp(−period/dwell) (a
//     frame stays on top for an exponentially distributed time), then by
//     the secant through this run's earlier measurement, and once a
//     change overshot, by interpolating inside the bracket the two sides
//     form; one step moves the period by at most MaxStep (8×). For LBR
//     events, consecutive windows of a thread overlapping by more than
//     MaxLBROverlap (25%) grow the period (the samples repeat each other)
//     and limit how far a shrink may go.
//
// Every period stays within the kind's Bounds: Time events (cpu-clock,
// task-clock; nanoseconds) 10µs–10ms, Count events (hardware and raw
// events; occurrences) 1000–10^9. Count periods are primes, so sampling
// does not fall into lockstep with a loop whose trip count shares a
// factor with the period; Time periods are whole microseconds.
//
// # Why it does not oscillate
//
// The repetition band is itself wide (a factor of 15), the aim is its
// middle, and the share must leave the band by DeadBand (25%) before the
// period moves, so sampling noise at the edges does nothing. A change is
// not reversed by the next Hold (1) evaluations. A reversal within a run
// of changes interpolates inside the bracket of measurements on both
// sides and never returns to where the run came from; cost rules aim
// Headroom inside their limits and accuracy respects the same limits with
// that headroom, so budget and accuracy cannot push each other back and
// forth. Changes under MinChange (20%) are not made.
//
// # What it does not do
//
// It makes no system calls, starts no goroutines and keeps no history:
// applying a decision, timing intervals, reading hwprof's CPU time and
// recording the periods (each sample's PERIOD field does that) belong to
// the caller. One controller tunes one event; a recording with several
// events runs several, each with its share of hwprof's CPU time.
package tuning
