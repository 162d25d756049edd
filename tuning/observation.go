package tuning

import (
	"math"
	"strconv"
	"time"
)

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

// window accumulates observations since the last change or evaluation.
// The period is constant inside a window.
type window struct {
	n                                 int
	dur                               time.Duration
	samples, lost, throttled, repeats uint64
	self                              time.Duration
	cpu                               float64 // program CPU-seconds, measured or estimated
	cpuKnown                          bool    // no observation assumed every CPU busy
	lbrPairs                          uint64
	lbrSum                            float64
	extended                          bool // an uncertain evaluation is collecting more samples
	rateExact                         bool // cpu was derived from the samples: the rate is 1/period exactly
}

// minCPU is the program CPU time (seconds) the cost rules need in a
// window, so an idle program does not move the period.
const minCPU = 0.010

// observed returns the window of one observation at the given period.
func observed(o Observation, period uint64, k Kind) window {
	w := window{
		n:         1,
		dur:       o.Duration,
		samples:   o.Samples,
		lost:      o.Lost,
		throttled: o.Throttled,
		repeats:   min(o.Repeats, o.Samples),
		self:      o.SelfCPU,
		cpuKnown:  true,
	}
	switch {
	case o.ProgramCPU > 0:
		w.cpu = o.ProgramCPU.Seconds()
	case k == Time:
		w.cpu = float64(o.Samples+o.Lost) * float64(period) / 1e9
		w.rateExact = true
	default:
		w.cpu = o.Duration.Seconds() * float64(max(o.CPUs, 1))
		w.cpuKnown = false
	}
	if o.LBRPairs > 0 {
		w.lbrPairs = o.LBRPairs
		w.lbrSum = min(max(o.LBROverlap, 0), 1) * float64(o.LBRPairs)
	}
	return w
}

// merge adds x to w.
func (w *window) merge(x window) {
	if w.n == 0 {
		*w = x
		return
	}
	w.n += x.n
	w.dur += x.dur
	w.samples += x.samples
	w.lost += x.lost
	w.throttled += x.throttled
	w.repeats += x.repeats
	w.self += x.self
	w.cpu += x.cpu
	w.cpuKnown = w.cpuKnown && x.cpuKnown
	w.rateExact = w.rateExact && x.rateExact
	w.lbrPairs += x.lbrPairs
	w.lbrSum += x.lbrSum
}

// recent holds the latest observations since the last change, newest
// last, for the cost rules, which judge the most recent stretch of
// recording rather than everything since the last evaluation.
type recent struct {
	ring [64]window
	n    int // observations held, at most len(ring)
	next int
}

func (r *recent) push(w window) {
	r.ring[r.next] = w
	r.next = (r.next + 1) % len(r.ring)
	r.n = min(r.n+1, len(r.ring))
}

// last merges the newest observations until they span at least span; ok
// is false when all of them together are shorter.
func (r *recent) last(span time.Duration) (w window, ok bool) {
	for i := range r.n {
		w.merge(r.ring[(r.next-1-i+2*len(r.ring))%len(r.ring)])
		if w.dur >= span {
			return w, true
		}
	}
	return w, false
}

// rate is samples taken (kept or lost) per second per CPU of program time.
func (w *window) rate() float64 {
	if w.cpu <= 0 {
		return 0
	}
	return float64(w.samples+w.lost) / w.cpu
}

// rateBound is the rate with the sample count moved by z standard
// deviations (Poisson, at least one sample's worth): the rate's plausible
// upper (z > 0) or lower (z < 0) bound. A rate derived from the period
// alone has no noise.
func (w *window) rateBound(z float64) float64 {
	if w.cpu <= 0 {
		return 0
	}
	if w.rateExact {
		return w.rate()
	}
	n := float64(w.samples + w.lost)
	return max(n+z*math.Sqrt(max(n, 1)), 0) / w.cpu
}

// selfShare is hwprof's CPU time as a share of the program's.
func (w *window) selfShare() float64 {
	if w.cpu <= 0 {
		return 0
	}
	return w.self.Seconds() / w.cpu
}

// cost is the profile's estimated cost as a share of the program's CPU.
func (w *window) cost(sampleCost time.Duration) float64 {
	return w.rate()*sampleCost.Seconds() + w.selfShare()
}

func (w *window) overlap() float64 {
	if w.lbrPairs == 0 {
		return 0
	}
	return w.lbrSum / float64(w.lbrPairs)
}

// Rule names the rule that made a Decision.
type Rule uint8

const (
	RuleWait       Rule = iota // not enough data yet
	RuleStable                 // repetition (and LBR overlap) inside the band
	RuleHold                   // a reversal held back by hysteresis
	RuleBackOff                // the kernel throttled or lost samples
	RuleBudget                 // cost or rate over the budget
	RuleFloor                  // rate under the floor
	RuleRepetition             // repetition share outside the band
	RuleOverlap                // consecutive LBR windows overlap too much
)

var ruleNames = [...]string{"wait", "stable", "hold", "back-off", "budget", "floor", "repetition", "lbr-overlap"}

func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return "Rule(" + strconv.Itoa(int(r)) + ")"
}

// Decision is the controller's answer to one Observation.
type Decision struct {
	// Period is the period to use from now on; it differs from the
	// previous one exactly when Changed.
	Period  uint64
	Changed bool
	// Rule is the rule that decided, Reason a sentence for people:
	// "repetition 0.4% < 1%: shrink period 1000003 → 500009".
	Rule   Rule
	Reason string
}
