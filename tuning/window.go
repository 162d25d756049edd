package tuning

import (
	"math"
	"time"
)

// window accumulates observations since the last change or evaluation.
// The period is constant inside a window.
type window struct {
	n                                 int
	dur                               time.Duration
	samples, lost, throttled, repeats uint64
	self                              time.Duration
	cpu                               float64 // program CPU-seconds, measured or estimated
	cpuKnown                          bool    // no observation assumed every CPU busy
	cpus                              int     // the most CPUs an observation had the event open on
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
		cpus:      max(o.CPUs, 1),
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
	w.cpus = max(w.cpus, x.cpus)
	w.rateExact = w.rateExact && x.rateExact
	w.lbrPairs += x.lbrPairs
	w.lbrSum += x.lbrSum
}

// recent holds the latest observations since the last change, newest
// last, for the cost rules, which judge the most recent stretch of
// recording rather than everything since the last evaluation. With 64
// of them, the rate floor's second is covered for observation intervals
// of 16ms and longer.
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

// busy is the share of a CPU that hwprof's own work takes from the
// program: how far the program's CPUs and hwprof's together go past all
// but one of the CPUs, from 0 (hwprof finds an idle CPU: a program of one
// thread on two CPUs, with or without another process beside it) to 1
// (the program keeps every CPU busy, so hwprof's work displaces it). A
// loaded machine lowers the program's CPUs and so never raises it.
func (w *window) busy() float64 {
	d := w.dur.Seconds()
	if d <= 0 {
		return 0
	}
	return min(max(w.cpu/d+w.self.Seconds()/d-float64(w.cpus-1), 0), 1)
}

func (w *window) overlap() float64 {
	if w.lbrPairs == 0 {
		return 0
	}
	return w.lbrSum / float64(w.lbrPairs)
}
