package tuning

import "time"

// Observation is what one interval of recording saw for one event. The
// caller fills it from the records it drained since the previous
// observation, and applies the previous Decision before the interval
// starts, so every interval ran at the controller's current period.
type Observation struct {
	// Duration is the interval's wall-clock length.
	Duration time.Duration
	// CPUs is how many CPUs the event is open on; used only to estimate
	// the program's CPU time when ProgramCPU is 0 and the event counts
	// (every CPU is then assumed busy).
	CPUs int
	// Samples is the number of PERF_RECORD_SAMPLE records of the event.
	Samples uint64
	// Lost is the number of samples the kernel reported lost
	// (PERF_RECORD_LOST and PERF_RECORD_LOST_SAMPLES).
	Lost uint64
	// Throttled is the number of PERF_RECORD_THROTTLE records.
	Throttled uint64
	// SelfCPU is hwprof's own CPU time (user and system) in the interval,
	// or this event's share of it when several events are tuned.
	SelfCPU time.Duration
	// SampleCPU is the part of SelfCPU spent on the interval's records:
	// draining the rings, decoding, counting and writing them, the work
	// that grows with the samples (the caller times its drains with its
	// thread's CPU clock). The rest of SelfCPU, wakeups, timers and the
	// runtime, does not depend on the period and is never budgeted. 0
	// when not measured (a drain of any record takes measurable time).
	// The controller trusts the measure once the drains held MinSamples
	// samples; until then, or without it, it assumes
	// Policy.SelfSampleCost per sample or, once the observations span a
	// range of rates, a fit of SelfCPU.
	SampleCPU time.Duration
	// ProgramCPU is the program's CPU time in the interval, if known. When
	// 0 it is estimated: Samples+Lost periods for a Time event, Duration ×
	// CPUs for a Count event (then the rate floor is not applied).
	ProgramCPU time.Duration
	// Repeats is how many of the Samples have the same top frame as the
	// previous sample of the same thread (see RepeatCounter).
	Repeats uint64
	// LBRPairs is how many pairs of consecutive LBR windows of a thread
	// were compared (0 when the event has no branch stack), and
	// LBROverlap their mean overlap, 0 to 1 (see WindowOverlap).
	LBRPairs   uint64
	LBROverlap float64
}
