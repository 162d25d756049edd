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
// least squares over every observation, for a caller that does not
// measure the CPU of its drains (Observation.SampleCPU). It answers only
// once the observations span a range of rates and the fit is sound (a
// fixed part of at least 0); until then the controller assumes
// Policy.SelfSampleCost per sample, never all of hwprof's CPU.
type selfFit struct {
	dd, dn, nn, ds, ns float64 // sums of products: duration, samples, self
	minRate, maxRate   float64
	n                  int
}

// minFit is how many observations the fit needs.
const minFit = 5

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
	if f.n == 0 {
		f.minRate, f.maxRate = r, r
	}
	f.n++
	f.minRate, f.maxRate = min(f.minRate, r), max(f.maxRate, r)
}

// solve returns hwprof's fixed CPU time per second and CPU time per
// sample, if the observations determine them.
func (f *selfFit) solve() (fixed, perSample float64, ok bool) {
	if f.n < minFit || f.maxRate < 1.5*f.minRate {
		return 0, 0, false
	}
	det := f.dd*f.nn - f.dn*f.dn
	if det <= 1e-9*f.dd*f.nn {
		return 0, 0, false
	}
	fixed = (f.ds*f.nn - f.dn*f.ns) / det
	perSample = (f.dd*f.ns - f.dn*f.ds) / det
	return fixed, perSample, fixed >= 0 && perSample >= 0
}

// drainCost accumulates hwprof's CPU time on its drains and the samples
// they held, the newest 5 to 10 × MinSamples of them (older halves are
// forgotten), so the estimate per sample rests on many drains: a single
// window's is noisy (a garbage collection, the first touch of the
// buffers) and hwprof's work per sample does not depend on the period.
type drainCost struct {
	cpu, n float64 // seconds, samples
	seen   bool    // the caller measures its drains
}

func (d *drainCost) add(o Observation, limit float64) {
	if o.SampleCPU <= 0 || o.Samples+o.Lost == 0 {
		return
	}
	d.seen = true
	d.cpu += min(o.SampleCPU, o.SelfCPU).Seconds()
	d.n += float64(o.Samples + o.Lost)
	if d.n > limit {
		d.cpu, d.n = d.cpu/2, d.n/2
	}
}

// selfPerSample is hwprof's CPU time per sample: measured over its
// drains once they held MinSamples samples, else the policy's prior; for
// a caller that does not measure its drains, fitted once the fit is
// sound. (A fit of all of hwprof's CPU on a loaded machine, where the
// program's share of a CPU and so the rate per second swing while the
// fixed part spikes, is too noisy to beat a measure.)
func (c *Controller) selfPerSample() float64 {
	if c.drain.n >= float64(c.p.MinSamples) {
		return c.drain.cpu / c.drain.n
	}
	if c.drain.seen {
		return c.p.SelfSampleCost.Seconds()
	}
	if _, per, ok := c.self.solve(); ok {
		return per
	}
	return c.p.SelfSampleCost.Seconds()
}

// costParts splits the window's cost into what the period controls, the
// kernel's and hwprof's work per sample, as a share of the program's CPU
// time, and hwprof's fixed CPU share, which no period changes: the budget
// judges only the first. hwprof's part per sample never exceeds what it
// spent in all.
func (c *Controller) costParts(w *window) (kernel, perSample, fixed float64) {
	if w.cpu <= 0 {
		return 0, 0, 0
	}
	n, self := float64(w.samples+w.lost), w.selfShare()
	kernel = w.rate() * c.p.SampleCost.Seconds()
	perSample = min(c.selfPerSample()*n/w.cpu, self)
	return kernel, perSample, self - perSample
}

// cost is the window's cost the budget judges: the work per sample as a
// share of the program's CPU time.
func (c *Controller) cost(w *window) float64 {
	k, s, _ := c.costParts(w)
	return k + s
}

// costBound is the window's budgeted cost with its sample count moved by
// z standard deviations (Poisson). When the program's CPU time was
// derived from the samples (a Time event), the rate is exact and so is
// the cost per CPU-second.
func (c *Controller) costBound(w *window, z float64) float64 {
	n := float64(w.samples + w.lost)
	cost := c.cost(w)
	if w.cpu <= 0 || n == 0 || w.rateExact {
		return cost
	}
	return cost * max(n+z*math.Sqrt(n), 0) / n
}

// costStep returns the factor on the period at which the window's
// budgeted cost would equal target: above 1 to cut the cost, below 1 when
// there is room. The cost is all per sample, so it falls in proportion to
// the period.
func (c *Controller) costStep(w *window, target float64) float64 {
	return c.cost(w) / target
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
	rate, maxRate := w.rate(), c.maxRate()
	// Judge by the lowest cost and rate the window's count plausibly
	// stands for.
	low := 1.0
	if rate > 0 {
		low = w.rateBound(-budgetConfidence) / rate
	}
	k, why := 1.0, ""
	if c.costBound(w, -budgetConfidence) > c.p.Budget {
		kernel, self, fixed := c.costParts(w)
		k = c.costStep(w, c.p.Budget*(1-c.p.Headroom))
		why = fmt.Sprintf("cost %s > budget %s (%.0f samples/s per CPU: kernel %s, hwprof %s per sample; hwprof's fixed %s not budgeted)",
			pct(kernel+self), pct(c.p.Budget), rate, pct(kernel), pct(self), pct(fixed))
	}
	// A rate exactly at the cap (a period of 1/cap) is not over it.
	if rate*low > maxRate*(1+1e-9) {
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

// parityRate is, without a budget, the rate (samples per second per CPU
// of program time) at which hwprof's samples cost the program what perf's
// default (PerfRate) would: MaxRate, where the kernel's work on hwprof's
// bigger samples matches perf's, lowered when hwprof's own work per
// sample, beyond perf's, displaces the program (window.busy), and by what
// loss taught. It also returns the busy share and hwprof's CPU per sample
// it used. The kernel's work grows with the callchain's depth and so does
// perf's: a deep stack alone never lowers the rate.
func (c *Controller) parityRate(w *window) (rate, busy, self float64) {
	busy, self = w.busy(), c.selfPerSample()
	k := c.p.InterruptCost.Seconds()
	perf := k + busy*c.p.PerfSelfCost.Seconds()
	ours := k*c.p.PerfRate/c.p.MaxRate + busy*self
	return min(c.p.PerfRate*perf/ours, c.maxRate()), busy, self
}

// parity moves the period, without a budget, to where hwprof's samples
// cost the program what perf's default would (parityRate), when the rate
// of the latest floorWindows × MinWindow of recording is beyond noise
// more than MinChange above it (grow) or below it (shrink: what made the
// period grow has gone). A loaded machine lowers the program's CPUs, and
// so the share of hwprof's work it pays, never raises it.
func (c *Controller) parity() (Decision, bool) {
	rw, ok := c.recent.last(floorWindows * c.p.MinWindow)
	w := &rw
	if !ok || w.cpu < minCPU {
		return Decision{}, false
	}
	target, busy, self := c.parityRate(w)
	rate, step := w.rate(), 1+c.p.MinChange
	if !(w.rateBound(-budgetConfidence) > target*step || w.rateBound(budgetConfidence)*step < target) {
		return Decision{}, false
	}
	to := c.round(float64(c.period) * rate / target)
	if to == c.period {
		return Decision{}, false
	}
	cmp := "more"
	if to < c.period {
		cmp = "less"
	}
	why := fmt.Sprintf("at %.0f samples/s per CPU hwprof's samples cost the program %s than perf's %g would "+
		"(its own work %s per sample against perf's %s, %.0f%% of it taken from the program)",
		rate, cmp, c.p.PerfRate, usec(self), usec(c.p.PerfSelfCost.Seconds()), 100*busy)
	c.tradeWhy = fmt.Sprintf("because hwprof's own cost %s per sample > perf's %s, %.0f%% of it taken from the program",
		usec(self), usec(c.p.PerfSelfCost.Seconds()), 100*busy)
	return c.change(to, RuleBudget, why), true
}

// usec formats seconds as microseconds: "18.2µs".
func usec(s float64) string { return fmt.Sprintf("%.1fµs", s*1e6) }

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
		if c.p.Parity() {
			// perf's cost, and at most perf's period
			target, _, _ := c.parityRate(w)
			if v := P * high / target; v > lo {
				lo, loWhy = v, "perf's cost"
			}
			if v := P * low / c.p.PerfRate; v < hi {
				hi, hiWhy = v, "perf's rate"
			}
		} else if v := P * c.costStep(w, c.p.Budget*(1-h)) * high / max(rate, 1e-300); v > lo {
			lo, loWhy = v, "the budget"
		}
		// (perf's cost holds the rate cap without a budget)
		if mr := c.maxRate(); !math.IsInf(mr, 1) && !c.p.Parity() {
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
