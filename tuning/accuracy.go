package tuning

import (
	"fmt"
	"math"
)

// Statistics of an evaluation. The share is tested against the
// triggers with the Poisson law below (repeats are a handful there) and
// the binomial standard deviation above, at confidence standard
// deviations' worth of certainty (settledConfidence once the period has
// settled: it is then tested every evaluation for as long as the phase
// lasts). An evaluation gets two looks, at MinSamples and at
// extendSamples × MinSamples samples; in between only peekConfidence
// moves the period. See accuracy for what each look decides.
const (
	confidence        = 2.0
	settledConfidence = 3.0
	peekConfidence    = 4.0
	extendSamples     = 4
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
//
// A share certainly outside the triggers acts at once. An uncertain one
// extends the window to the second look; testing after every observation
// in between would multiply the chances of a false alarm, so in between
// only a share certain at peekConfidence acts (a phase change while the
// window is extended). At the second look a settled period stays unless
// the share is certainly out, while a run of changes under way goes by
// the estimate: it is already moving, and a step from near an edge lands
// deeper in the band. A run also ends only on a share certainly inside
// the band, or on the estimate at the second look, so it does not stop on
// the band's fringe because one window was lucky.
func (c *Controller) accuracy() Decision {
	w := &c.win
	n := w.samples
	r := float64(w.repeats) / float64(n)
	d := c.side(r)
	final := n >= extendSamples*c.p.MinSamples
	z := c.confidence()
	if w.extended && !final {
		z = peekConfidence
	}
	switch {
	case d != 0 && c.certain(r, n, d, z):
	case d != 0 && final:
		if c.settled {
			d = 0 // within noise of the band: a settled period stays
		}
	case d != 0 && !w.extended:
		w.extended = true
		return c.keep(RuleWait, fmt.Sprintf("repetition %s outside %s–%s is not yet certain: collecting %d samples",
			pct(r), pct(c.p.MinRepeat), pct(c.p.MaxRepeat), extendSamples*c.p.MinSamples))
	case d != 0:
		return c.keep(RuleWait, fmt.Sprintf("repetition uncertain: collecting %d of %d samples", n, extendSamples*c.p.MinSamples))
	case c.settled || final || c.inside(r, n, confidence):
	case !w.extended:
		w.extended = true
		return c.keep(RuleWait, fmt.Sprintf("repetition %s near the edge of %s–%s: collecting %d samples to confirm",
			pct(r), pct(c.p.MinRepeat), pct(c.p.MaxRepeat), extendSamples*c.p.MinSamples))
	default:
		return c.keep(RuleWait, fmt.Sprintf("repetition near an edge: collecting %d of %d samples", n, extendSamples*c.p.MinSamples))
	}
	win := *w
	c.win = window{}
	c.sinceChange++
	return c.evaluate(r, d, &win)
}

// triggers returns the shares below and above which the period moves.
// Hysteresis: once the period has settled, the band widened by DeadBand;
// while a run of changes is under way, the band narrowed by it, so a run
// ends well inside the band rather than on its fringe, and a settled
// period needs a clear move of the share to leave.
func (c *Controller) triggers() (lo, hi float64) {
	if c.settled {
		return c.p.MinRepeat * (1 - c.p.DeadBand), c.p.MaxRepeat * (1 + c.p.DeadBand)
	}
	return c.p.MinRepeat * (1 + c.p.DeadBand), c.p.MaxRepeat * (1 - c.p.DeadBand)
}

// side returns -1 when the share is under the lower trigger (the period
// is too coarse), +1 when over the upper one (too fine), 0 between.
func (c *Controller) side(r float64) int {
	lo, hi := c.triggers()
	switch {
	case r < lo:
		return -1
	case r > hi:
		return 1
	}
	return 0
}

// certain reports whether share r over n samples lies beyond the trigger
// it crossed as surely as z standard deviations of a normal law would
// say: under the lower trigger by the Poisson tail (repeats are then a
// handful, where the normal law is far off), over the upper one by the
// binomial standard deviation at the trigger.
func (c *Controller) certain(r float64, n uint64, d int, z float64) bool {
	lo, hi := c.triggers()
	if d < 0 {
		k := math.Round(r * float64(n))
		return poissonCDF(k, lo*float64(n)) < 0.5*math.Erfc(z/math.Sqrt2)
	}
	return r-hi > z*math.Sqrt(hi*(1-hi)/float64(n))
}

// inside reports whether share r over n samples lies inside both
// triggers as surely as z standard deviations would say.
func (c *Controller) inside(r float64, n uint64, z float64) bool {
	lo, hi := c.triggers()
	k := math.Round(r * float64(n))
	above := k > 0 && 1-poissonCDF(k-1, lo*float64(n)) < 0.5*math.Erfc(z/math.Sqrt2)
	return above && hi-r > z*math.Sqrt(hi*(1-hi)/float64(n))
}

// poissonCDF returns P(X ≤ k) for X ~ Poisson(mean), summed in log
// space; past a mean of 1000 the normal law (with continuity correction)
// is as good and does not loop.
func poissonCDF(k, mean float64) float64 {
	if mean <= 0 {
		return 1
	}
	if mean > 1000 {
		return 0.5 * math.Erfc((mean-k-0.5)/math.Sqrt(2*mean))
	}
	sum, logMean := 0.0, math.Log(mean)
	for i := 0.0; i <= k; i++ {
		lg, _ := math.Lgamma(i + 1)
		sum += math.Exp(i*logMean - mean - lg)
	}
	return min(sum, 1)
}

// confidence is the z an evaluation needs: stricter once settled.
func (c *Controller) confidence() float64 {
	if c.settled {
		return settledConfidence
	}
	return confidence
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
	case dRep != 0:
		d, k, rule, why = dRep, kRep, RuleRepetition, c.outWhy(r, dRep)
	default:
		why := c.stableWhy(r, w)
		c.settle()
		c.pinned = 0
		return c.keep(RuleStable, why)
	}

	if d == -c.lastDir && c.sinceChange <= c.p.Hold {
		return c.keep(RuleHold, fmt.Sprintf("%s, but a reversal waits %d evaluation(s) after a change", why, c.p.Hold))
	}
	return c.move(d, k, rule, why, w)
}

// move changes the period by factor k in direction d as far as the limits
// allow, unless that is under MinChange.
func (c *Controller) move(d int, k float64, rule Rule, why string, w *window) Decision {
	P := float64(c.period)
	lo, hi, loWhy, hiWhy := c.limits(w)
	to := c.round(min(max(P*k, lo), hi))
	ratio := float64(to) / P
	// A period held at a limit moves towards it again only when the limit
	// has moved by twice MinChange, so noise in the limit (it is computed
	// from measured rates) does not creep the period along it.
	minStep := 1 + c.p.MinChange
	if d == c.pinned {
		minStep *= minStep
	}
	switch {
	case d > 0 && ratio < minStep:
		c.settle()
		if P*k > hi {
			c.pinned = 1
			return c.keep(rule, why+", but "+hiWhy+" allows no longer period")
		}
		return c.keep(rule, why+", but the change would be under "+pct(c.p.MinChange))
	case d < 0 && ratio > 1/minStep:
		c.settle()
		if P*k < lo {
			c.pinned = -1
			return c.keep(rule, why+", but "+loWhy+" allows no shorter period")
		}
		return c.keep(rule, why+", but the change would be under "+pct(c.p.MinChange))
	}
	return c.change(to, rule, why)
}

// outWhy says how share r is out of the band on side d: past the band's
// edge, or only past the narrower trigger of a run under way.
func (c *Controller) outWhy(r float64, d int) string {
	lo, hi := c.triggers()
	switch {
	case d < 0 && r < c.p.MinRepeat:
		return fmt.Sprintf("repetition %s < %s", pct(r), pct(c.p.MinRepeat))
	case d < 0:
		return fmt.Sprintf("repetition %s < %s, where a run of changes ends", pct(r), pct(lo))
	case r > c.p.MaxRepeat:
		return fmt.Sprintf("repetition %s > %s", pct(r), pct(c.p.MaxRepeat))
	}
	return fmt.Sprintf("repetition %s > %s, where a run of changes ends", pct(r), pct(hi))
}

// settle ends the current run of changes: the period is where it should
// be, or cannot move. The run's measurements are forgotten, so the next
// change starts afresh, and the wider triggers apply.
func (c *Controller) settle() {
	c.settled = true
	c.above.ok, c.below.ok = false, false
}

func (c *Controller) stableWhy(r float64, w *window) string {
	s := fmt.Sprintf("repetition %s in %s–%s", pct(r), pct(c.p.MinRepeat), pct(c.p.MaxRepeat))
	lo, hi := c.triggers()
	switch {
	case r < lo || r > hi:
		s = fmt.Sprintf("repetition %s within noise of %s–%s", pct(r), pct(c.p.MinRepeat), pct(c.p.MaxRepeat))
	case r < c.p.MinRepeat || r > c.p.MaxRepeat:
		s = fmt.Sprintf("repetition %s within the dead band of %s–%s", pct(r), pct(c.p.MinRepeat), pct(c.p.MaxRepeat))
	}
	if w.lbrPairs > 0 {
		s += ", LBR overlap " + pct(w.overlap())
	}
	return s
}

// repetitionStep returns the factor that should bring the repetition
// share into the band, from the best information at hand, and records
// the measurement. The information, best first:
//
//   - a bracket (a measurement on the other side of the band in this run,
//     at a period on the right side): interpolate between the two in
//     log(share) over log(period) to the band's geometric middle, staying
//     inside the bracket;
//   - an earlier measurement on the same side at another period whose
//     share differs from this one's beyond noise, in the direction a
//     share falls with the period: the secant through both, to the
//     middle;
//   - otherwise the model share = exp(-period/dwell), a top frame that
//     stays on top for an exponentially distributed time (the target is
//     then log(target)/log(share) times the period). This step aims past
//     the middle, halfway (in log share) to the far edge: a share that
//     also holds a floor of chance repeats responds to the period less
//     than the model says, and the aim makes up for the step falling
//     short.
//
// No repeats at all counts as half a repeat, so the step stays finite: a
// longer jump could leap over the band, which spans a factor of about 2.4
// in period when the share falls exponentially. The factor is limited to
// [1/MaxStep, MaxStep].
func (c *Controller) repetitionStep(P float64, w *window, d int) float64 {
	n := float64(w.samples)
	cur := point{period: P, share: min(max(float64(w.repeats), 0.5), n-0.5) / n, n: n, ok: true}
	mid := math.Sqrt(c.p.MinRepeat * c.p.MaxRepeat)
	target := math.Sqrt(mid * c.p.MinRepeat) // growing: aim low
	same, opp := &c.above, &c.below
	if d < 0 {
		same, opp = &c.below, &c.above
		target = math.Sqrt(mid * c.p.MaxRepeat) // shrinking: aim high
	}
	prev := *same
	*same = cur
	// Too fine must lie below too coarse; otherwise the workload changed.
	if opp.ok && (opp.period-P)*float64(d) <= 0 {
		opp.ok = false
	}
	if opp.ok {
		k := interpolate(cur, *opp, mid)
		if math.Abs(math.Log(k)) >= math.Log1p(c.p.MinChange) {
			return k
		}
		opp.ok = false // a bracket this narrow is stale
	}
	if k, ok := c.secant(prev, cur, mid); ok {
		return k
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
	if -dy*math.Copysign(1, dx) <= settledConfidence*math.Sqrt(prev.lnVar()+cur.lnVar()) {
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
