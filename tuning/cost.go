package tuning

import (
	"fmt"
	"math"
)

// The cost rules are checked after every observation, so they act only
// on strict evidence: the budget on a cost budgetConfidence standard
// deviations over it, the rate floor on a rate floorConfidence under it,
// judged over at least floorWindows × MinWindow of recording (a low rate
// needs a long look to be told from a Poisson dip).
const (
	budgetConfidence = 3.0
	floorWindows     = 10
	floorConfidence  = 4.0
)

// selfFit fits hwprof's CPU time as fixed·duration + perSample·samples by
// least squares over every observation, so a prediction at another period
// scales only the part that samples cost. Until the observations span a
// range of rates, all of it is taken to scale with the samples: that
// overstates what a shorter period would cost, so accuracy shrinks
// cautiously, and overstates what a longer one saves, so a budget step may
// fall short and take a second.
type selfFit struct {
	dd, dn, nn, ds, ns float64 // sums of products: duration, samples, self
	minRate, maxRate   float64
	seen               bool
}

func (f *selfFit) add(o Observation) {
	d, n, s := o.Duration.Seconds(), float64(o.Samples+o.Lost), o.SelfCPU.Seconds()
	if d <= 0 {
		return
	}
	f.dd += d * d
	f.dn += d * n
	f.nn += n * n
	f.ds += d * s
	f.ns += n * s
	r := n / d
	if !f.seen {
		f.minRate, f.maxRate, f.seen = r, r, true
	}
	f.minRate, f.maxRate = min(f.minRate, r), max(f.maxRate, r)
}

// solve returns hwprof's fixed CPU time per second and CPU time per
// sample, if the observations determine them.
func (f *selfFit) solve() (fixed, perSample float64, ok bool) {
	if !f.seen || f.maxRate < 1.5*f.minRate {
		return 0, 0, false
	}
	det := f.dd*f.nn - f.dn*f.dn
	if det <= 1e-9*f.dd*f.nn {
		return 0, 0, false
	}
	fixed = (f.ds*f.nn - f.dn*f.ns) / det
	perSample = (f.dd*f.ns - f.dn*f.ds) / det
	if fixed < 0 {
		fixed, perSample = 0, f.ns/f.nn
	}
	return fixed, perSample, perSample >= 0
}

// costParts splits the window's cost share into the part that scales
// with the number of samples (the kernel's and hwprof's work per sample)
// and the part that does not (hwprof's fixed work), keeping the window's
// measured total.
func (c *Controller) costParts(w *window) (scaling, fixed float64) {
	kernel, self := w.rate()*c.p.SampleCost.Seconds(), w.selfShare()
	if f, per, ok := c.self.solve(); ok {
		fd, pn := f*w.dur.Seconds(), per*float64(w.samples+w.lost)
		if fd+pn > 0 {
			share := fd / (fd + pn)
			return kernel + self*(1-share), self * share
		}
	}
	return kernel + self, 0
}

// costBound is the window's cost with its sample count moved by z
// standard deviations (Poisson). When the program's CPU time was measured,
// the part that scales with the samples moves. When it was derived from
// the samples (a Time event), the rate is exact and hwprof's share moves
// the other way, as fewer samples would mean less CPU time to spread it
// over (all of it, which is the safe side whatever part is fixed).
func (c *Controller) costBound(w *window, z float64) float64 {
	n := float64(w.samples + w.lost)
	if w.cpu <= 0 || n == 0 {
		return w.cost(c.p.SampleCost)
	}
	if w.rateExact {
		return w.rate()*c.p.SampleCost.Seconds() + w.selfShare()*n/max(n-z*math.Sqrt(n), 1e-9)
	}
	scaling, fixed := c.costParts(w)
	return scaling*max(n+z*math.Sqrt(n), 0)/n + fixed
}

// costStep returns the factor on the period at which the window's cost
// would equal target: above 1 to cut the cost, below 1 when there is
// room. +Inf when the fixed part alone exceeds the target.
func (c *Controller) costStep(w *window, target float64) float64 {
	scaling, fixed := c.costParts(w)
	if target <= fixed {
		return math.Inf(1)
	}
	return scaling / (target - fixed)
}

// maxRate is the policy's rate cap, lowered by what loss taught.
func (c *Controller) maxRate() float64 {
	r := c.p.RateCap()
	if c.rateCap > 0 && c.rateCap < r {
		r = c.rateCap
	}
	return r
}

// budget grows the period when the cost or rate of the latest MinWindow
// of recording is over the budget beyond noise, aiming Headroom inside
// it. At the maximum period it leaves the decision to the later rules.
func (c *Controller) budget() (Decision, bool) {
	rw, ok := c.recent.last(c.p.MinWindow)
	w := &rw
	if !ok || w.cpu < minCPU {
		return Decision{}, false
	}
	rate, cost, maxRate := w.rate(), w.cost(c.p.SampleCost), c.maxRate()
	// Judge by the lowest cost and rate the window's count plausibly
	// stands for.
	low := 1.0
	if rate > 0 {
		low = w.rateBound(-budgetConfidence) / rate
	}
	k, why := 1.0, ""
	if c.costBound(w, -budgetConfidence) > c.p.Budget {
		k = c.costStep(w, c.p.Budget*(1-c.p.Headroom))
		why = fmt.Sprintf("cost %s > budget %s (%.0f samples/s per CPU, hwprof %s)", pct(cost), pct(c.p.Budget), rate, pct(w.selfShare()))
	}
	if rate*low > maxRate {
		if kr := rate / (maxRate * (1 - c.p.Headroom)); kr > k {
			k, why = kr, fmt.Sprintf("rate %.0f > %.0f samples/s per CPU", rate, maxRate)
		}
	}
	if k <= 1 {
		return Decision{}, false
	}
	to := c.round(float64(c.period) * max(k, 1+c.p.MinChange))
	if to <= c.period {
		return Decision{}, false
	}
	return c.change(to, RuleBudget, why), true
}

// floor shrinks the period when, over the latest floorWindows ×
// MinWindow of recording, the program's known CPU time yields fewer than
// MinRate samples per second per CPU beyond noise, as far as the budget
// allows.
func (c *Controller) floor() (Decision, bool) {
	if c.p.MinRate == 0 {
		return Decision{}, false
	}
	rw, ok := c.recent.last(floorWindows * c.p.MinWindow)
	w := &rw
	if !ok || !w.cpuKnown || w.cpu < minCPU {
		return Decision{}, false
	}
	if w.rateBound(floorConfidence) >= c.p.MinRate {
		return Decision{}, false
	}
	// Aim from the lowest rate the count plausibly stands for, so a
	// shrink computed from a handful of samples does not fall short.
	rate := w.rate()
	k := 1 / c.p.MaxStep // no samples: no distance either
	if low := w.rateBound(-confidence); low > 0 {
		k = low / (c.p.MinRate * (1 + c.p.Headroom))
	}
	lo, _, _, _ := c.limits(w)
	to := c.round(max(float64(c.period)*k, lo))
	if to >= c.period {
		return Decision{}, false
	}
	return c.change(to, RuleFloor, fmt.Sprintf("rate %.3g < floor %g samples/s per CPU", rate, c.p.MinRate)), true
}

// limits returns the periods the other rules leave to accuracy: lo from
// the bounds, the budget, the rate cap and the LBR overlap; hi from the
// bounds and the rate floor. Where they conflict the cost wins.
func (c *Controller) limits(w *window) (lo, hi float64, loWhy, hiWhy string) {
	P, h := float64(c.period), c.p.Headroom
	lo, hi = float64(c.bounds.Min), float64(c.bounds.Max)
	loWhy, hiWhy = "the minimum period", "the maximum period"
	if w.cpu >= minCPU {
		// From the rates the window's count plausibly stands for: the
		// highest against the budget, the lowest against the floor.
		rate, high, low := w.rate(), w.rateBound(confidence), w.rateBound(-confidence)
		if v := P * c.costStep(w, c.p.Budget*(1-h)) * high / max(rate, 1e-300); v > lo {
			lo, loWhy = v, "the budget"
		}
		if mr := c.maxRate(); !math.IsInf(mr, 1) {
			if v := P * high / (mr * (1 - h)); v > lo {
				lo, loWhy = v, "the rate cap"
			}
		}
		if c.p.MinRate > 0 && w.cpuKnown && low > 0 {
			if v := P * low / (c.p.MinRate * (1 + h)); v < hi {
				hi, hiWhy = v, "the rate floor"
			}
		}
	}
	if o := w.overlap(); w.lbrPairs > 0 && o > 0 && o < 1 {
		// Overlap falls linearly with the period: o = 1 - P/span.
		if v := P / (1 - o) * (1 - c.p.MaxLBROverlap); v > lo {
			lo, loWhy = v, "the LBR overlap"
		}
	}
	if hi < lo {
		hi, hiWhy = lo, loWhy
	}
	return lo, hi, loWhy, hiWhy
}
