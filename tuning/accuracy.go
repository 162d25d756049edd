package tuning

import (
	"fmt"
	"math"
)

// Statistics of an evaluation. A share outside the band must be outside
// its trigger by confidence standard deviations (binomial, at the
// trigger) before it moves the period; an evaluation that is not yet
// certain extends its window up to extendSamples × MinSamples samples,
// and one still uncertain then counts as inside the band.
const (
	confidence    = 2.0
	extendSamples = 4
)

// point is one measurement of the repetition share at a period; the share
// is kept strictly between 0 and 1 so its logarithm exists.
type point struct {
	period, share float64
	n             float64 // samples it was measured over
	ok            bool
}

// lnVar is the variance of log(share) (delta method, binomial).
func (p point) lnVar() float64 { return (1 - p.share) / (p.n * p.share) }

// accuracy evaluates a full window: the repetition share against the
// band and, for LBR, the overlap of consecutive windows.
func (c *Controller) accuracy() Decision {
	w := &c.win
	r := float64(w.repeats) / float64(w.samples)
	dRep := c.side(r)
	if dRep != 0 && !c.certain(r, w.samples, dRep) {
		if w.samples < extendSamples*c.p.MinSamples {
			return c.keep(RuleWait, fmt.Sprintf("repetition %s outside %s–%s is not yet certain: collecting %d samples",
				pct(r), pct(c.p.MinRepeat), pct(c.p.MaxRepeat), extendSamples*c.p.MinSamples))
		}
		dRep = 0 // within noise of the band
	}
	win := *w
	c.win = window{}
	c.sinceChange++
	return c.evaluate(r, dRep, &win)
}

// side returns -1 when the share is under the band's trigger (the period
// is too coarse), +1 when over it (too fine), 0 inside.
func (c *Controller) side(r float64) int {
	switch {
	case r < c.p.MinRepeat*(1-c.p.DeadBand):
		return -1
	case r > c.p.MaxRepeat*(1+c.p.DeadBand):
		return 1
	}
	return 0
}

// certain reports whether share r over n samples lies beyond the trigger
// it crossed by confidence standard deviations of a share at the trigger.
func (c *Controller) certain(r float64, n uint64, d int) bool {
	t := c.p.MinRepeat * (1 - c.p.DeadBand)
	if d > 0 {
		t = c.p.MaxRepeat * (1 + c.p.DeadBand)
	}
	sd := math.Sqrt(t * (1 - t) / float64(n))
	return math.Abs(r-t) > confidence*sd
}

// evaluate decides from a consumed window with repetition side dRep.
func (c *Controller) evaluate(r float64, dRep int, w *window) Decision {
	P := float64(c.period)
	kRep := 1.0
	if dRep != 0 {
		kRep = c.repetitionStep(P, w, dRep)
	}
	o := w.overlap()
	dLBR := w.lbrPairs > 0 && o > c.p.MaxLBROverlap*(1+c.p.DeadBand)

	var (
		d    int
		k    float64
		rule Rule
		why  string
	)
	switch {
	case dLBR && (dRep <= 0 || c.overlapStep(o) > kRep):
		d, k, rule = 1, c.overlapStep(o), RuleOverlap
		why = fmt.Sprintf("LBR overlap %s > %s", pct(o), pct(c.p.MaxLBROverlap))
	case dRep < 0:
		d, k, rule = -1, kRep, RuleRepetition
		why = fmt.Sprintf("repetition %s < %s", pct(r), pct(c.p.MinRepeat))
	case dRep > 0:
		d, k, rule = 1, kRep, RuleRepetition
		why = fmt.Sprintf("repetition %s > %s", pct(r), pct(c.p.MaxRepeat))
	default:
		c.settle()
		return c.keep(RuleStable, c.stableWhy(r, w))
	}

	if d == -c.lastDir && c.sinceChange <= c.p.Hold {
		return c.keep(RuleHold, fmt.Sprintf("%s, but a reversal waits %d evaluation(s) after a change", why, c.p.Hold))
	}
	lo, hi, loWhy, hiWhy := c.limits(w)
	to := c.round(min(max(P*k, lo), hi))
	ratio := float64(to) / P
	switch {
	case d > 0 && ratio < 1+c.p.MinChange:
		c.settle()
		if P*k > hi {
			return c.keep(rule, why+", but "+hiWhy+" allows no longer period")
		}
		return c.keep(rule, why+", but the change would be under "+pct(c.p.MinChange))
	case d < 0 && ratio > 1/(1+c.p.MinChange):
		c.settle()
		if P*k < lo {
			return c.keep(rule, why+", but "+loWhy+" allows no shorter period")
		}
		return c.keep(rule, why+", but the change would be under "+pct(c.p.MinChange))
	}
	return c.change(to, rule, why)
}

// settle forgets the measurements of the current run: the period is
// where it should be, or cannot move, so the next change starts afresh.
func (c *Controller) settle() {
	c.above.ok, c.below.ok = false, false
}

func (c *Controller) stableWhy(r float64, w *window) string {
	s := fmt.Sprintf("repetition %s in %s–%s", pct(r), pct(c.p.MinRepeat), pct(c.p.MaxRepeat))
	if r < c.p.MinRepeat || r > c.p.MaxRepeat {
		s = fmt.Sprintf("repetition %s within the dead band of %s–%s", pct(r), pct(c.p.MinRepeat), pct(c.p.MaxRepeat))
	}
	if w.lbrPairs > 0 {
		s += ", LBR overlap " + pct(w.overlap())
	}
	return s
}

// repetitionStep returns the factor that should bring the repetition
// share to the band's geometric middle, from the best information at
// hand, and records the measurement:
//
//   - a bracket (a measurement on the other side of the band in this run,
//     at a period on the right side): interpolate between the two in
//     log(share) over log(period), staying inside the bracket;
//   - an earlier measurement on the same side at another period whose
//     share differs from this one's beyond noise, in the direction a
//     share falls with the period: the secant through both;
//   - otherwise the model share = exp(-period/dwell), a top frame that
//     stays on top for an exponentially distributed time (the target is
//     then log(target)/log(share) times the period).
//
// No repeats at all (or only repeats) says nothing about the distance and
// takes MaxStep. The factor is limited to [1/MaxStep, MaxStep].
func (c *Controller) repetitionStep(P float64, w *window, d int) float64 {
	n := float64(w.samples)
	cur := point{period: P, share: min(max(float64(w.repeats), 0.5), n-0.5) / n, n: n, ok: true}
	target := math.Sqrt(c.p.MinRepeat * c.p.MaxRepeat)
	same, opp := &c.above, &c.below
	if d < 0 {
		same, opp = &c.below, &c.above
	}
	prev := *same
	*same = cur
	// Too fine must lie below too coarse; otherwise the workload changed.
	if opp.ok && (opp.period-P)*float64(d) <= 0 {
		opp.ok = false
	}
	if opp.ok {
		k := interpolate(cur, *opp, target)
		if math.Abs(math.Log(k)) >= math.Log1p(c.p.MinChange) {
			return k
		}
		opp.ok = false // a bracket this narrow is stale
	}
	if k, ok := c.secant(prev, cur, target); ok {
		return k
	}
	switch {
	case w.repeats == 0 && d < 0:
		return 1 / c.p.MaxStep
	case w.repeats >= w.samples && d > 0:
		return c.p.MaxStep
	}
	return c.clampStep(math.Log(target) / math.Log(cur.share))
}

// interpolate returns the factor from a's period to where the straight
// line through a and b in (log period, log share) meets the target,
// kept within the inner 80% of the bracket.
func interpolate(a, b point, target float64) float64 {
	xa, ya := math.Log(a.period), math.Log(a.share)
	xb, yb := math.Log(b.period), math.Log(b.share)
	t := min(max((math.Log(target)-ya)/(yb-ya), 0.1), 0.9)
	return math.Exp(t * (xb - xa))
}

// secant steps along the line through two measurements on the same side
// in (log period, log share), when the share fell with the period by
// more than confidence standard deviations; otherwise the two say
// nothing reliable (noise, or a phase change between them).
func (c *Controller) secant(prev, cur point, target float64) (float64, bool) {
	if !prev.ok || prev.period == cur.period {
		return 0, false
	}
	dx := math.Log(cur.period) - math.Log(prev.period)
	dy := math.Log(cur.share) - math.Log(prev.share)
	if -dy*math.Copysign(1, dx) <= confidence*math.Sqrt(prev.lnVar()+cur.lnVar()) {
		return 0, false
	}
	return c.clampStep(math.Exp((math.Log(target) - math.Log(cur.share)) * dx / dy)), true
}

// overlapStep returns the factor that brings the LBR overlap to half its
// maximum, with overlap falling linearly in the period (o = 1 - P/span).
func (c *Controller) overlapStep(o float64) float64 {
	if o >= 1 {
		return c.p.MaxStep
	}
	return c.clampStep((1 - c.p.MaxLBROverlap/2) / (1 - o))
}

func (c *Controller) clampStep(k float64) float64 {
	return min(max(k, 1/c.p.MaxStep), c.p.MaxStep)
}
