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
// what "repetition" means. A native profiler cannot mark frames as the
// paper's did; ActivationKey identifies the top activation from what a
// sample holds: the callchain's return addresses, the stack pointer, the
// word at the top of the stack, the callee-saved registers, and the
// caller-saved registers that no code still to run in the activation can
// write (Frame.Kept, from the code itself: unwind/clobber). Without the
// program's CPU time, a Count event assumes every CPU it is open on busy.
//
// # The rules, in order
//
// Observe runs the rules in this order; the first that changes the period
// decides, so loss, throttling and the budget always beat accuracy.
//
//  1. Back-off. Any lost sample or throttle record grows the period by
//     BackOff (2) and caps the rate for the rest of the recording.
//  2. Cost. By default (no Budget), perf's: the rate at which hwprof's
//     samples cost the program what perf's default (PerfRate) would, at
//     most MaxRate (3600); hwprof's own work per sample counts only for
//     the share of a CPU it takes from the program. With a Budget, the
//     kernel's work per sample (SampleCost) and hwprof's, as a share of
//     the program's CPU above Budget, or a rate above MaxRate, grow the
//     period to land Headroom (20%) inside the limit.
//  3. Floor. With the program's CPU time known, fewer than MinRate (100)
//     samples per second per CPU shrink the period, as far as the budget
//     allows.
//  4. Accuracy, as the paper: every MinSamples (1000) samples the share
//     of repeated top frames is held between MinRepeat (1%) and MaxRepeat
//     (15%), at most MaxStep (8×) a step; for LBR events, windows that
//     overlap by more than MaxLBROverlap (25%) grow the period. Without a
//     budget, never past perf's period (Controller.Trade says where).
//
// Every period stays within the kind's Bounds: Time events (cpu-clock,
// task-clock; nanoseconds) 10µs–8ms, Count events (hardware and raw
// events; occurrences) 1000–10^9; Count periods are primes, Time periods
// whole microseconds. A share moves the period only beyond doubt, and
// hysteresis (DeadBand, Hold, MinChange) keeps it from oscillating.
//
// docs/adaptive-period.md has each rule in full, the noise and hysteresis
// rules, the reasons for the defaults (measured against perf), and what
// activation_test.go and the package's simulations found.
//
// # What it does not do
//
// It makes no system calls, starts no goroutines and keeps no history:
// applying a decision, timing intervals, reading hwprof's CPU time and
// recording the periods (each sample's PERIOD field does that) belong to
// the caller. One controller tunes one event.
package tuning
