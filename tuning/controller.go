package tuning

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Controller chooses the sampling period of one event. It is fed one
// Observation per interval and answers with a Decision; it never touches
// the kernel. A Controller is not safe for concurrent use.
type Controller struct {
	p      Policy
	kind   Kind
	bounds Bounds
	period uint64

	win window // observations since the last change or evaluation

	rateCap float64 // samples/s per CPU learned from loss; 0: none

	lastDir     int // direction of the last change: +1 grow, -1 shrink, 0 none
	sinceChange int // accuracy evaluations since the last change
	// above and below are the latest repetition measurements of the
	// current run of changes with the share too high (period too fine)
	// and too low (period too coarse); settle forgets them.
	above, below point
	changes      int
}

// New returns a controller for an event of kind k under policy p,
// starting at period start (0: the policy's start for k). The start is
// clamped to the bounds and, for Count events, moved to the next prime;
// open the event with Period().
func New(p Policy, k Kind, start uint64) (*Controller, error) {
	if k != Time && k != Count {
		return nil, fmt.Errorf("tuning: unknown event kind %v", k)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("tuning: %w", err)
	}
	c := &Controller{p: p, kind: k, bounds: p.Bounds(k)}
	if start == 0 {
		start = c.bounds.Start
	}
	if start == 0 {
		start = uint64(math.Sqrt(float64(c.bounds.Min) * float64(c.bounds.Max)))
	}
	c.period = c.round(float64(start))
	return c, nil
}

// Period returns the current period.
func (c *Controller) Period() uint64 { return c.period }

// Kind returns the kind of event the controller tunes.
func (c *Controller) Kind() Kind { return c.kind }

// Changes returns how many times the period has changed.
func (c *Controller) Changes() int { return c.changes }

// Observe takes one interval's observation and decides the period for
// the next. The rules run in this order and the first that changes the
// period decides: back-off on loss or throttling, the budget, the rate
// floor, then accuracy (repetition share and LBR overlap, every
// MinSamples samples, bounded by the earlier rules and held by
// hysteresis).
func (c *Controller) Observe(o Observation) Decision {
	c.win.add(o, c.period, c.kind)
	if o.Lost > 0 || o.Throttled > 0 {
		return c.backOff(o)
	}
	if d, ok := c.budget(); ok {
		return d
	}
	if d, ok := c.floor(); ok {
		return d
	}
	if c.win.samples >= c.p.MinSamples {
		return c.accuracy()
	}
	return c.keep(RuleWait, fmt.Sprintf("collecting: %d of %d samples", c.win.samples, c.p.MinSamples))
}

// backOff grows the period by BackOff and caps the sample rate below the
// one at which the kernel throttled or lost samples.
func (c *Controller) backOff(o Observation) Decision {
	why := lossWhy(o)
	if c.win.cpu > 0 && c.win.samples+c.win.lost > 0 {
		if r := c.win.rate() / c.p.BackOff; c.rateCap == 0 || r < c.rateCap {
			c.rateCap = r
		}
	}
	to := c.round(float64(c.period) * c.p.BackOff)
	if to <= c.period {
		c.win = window{}
		return c.keep(RuleBackOff, why+", but the period is at its maximum")
	}
	return c.change(to, RuleBackOff, why+": back off")
}

func lossWhy(o Observation) string {
	var s string
	if o.Lost > 0 {
		s = "lost " + strconv.FormatUint(o.Lost, 10) + " samples"
	}
	if o.Throttled > 0 {
		if s != "" {
			s += ", "
		}
		s += "throttled " + strconv.FormatUint(o.Throttled, 10) + " times"
	}
	return s
}

// budget grows the period when the window's cost or rate is over the
// budget, aiming Headroom inside it. At the maximum period it leaves the
// decision to the later rules.
func (c *Controller) budget() (Decision, bool) {
	w := &c.win
	if w.dur < c.p.MinWindow || w.cpu < minCPU {
		return Decision{}, false
	}
	rate, cost, maxRate := w.rate(), w.cost(c.p.SampleCost), c.maxRate()
	k, why := 1.0, ""
	if cost > c.p.Budget {
		k = cost / (c.p.Budget * (1 - c.p.Headroom))
		why = fmt.Sprintf("cost %s > budget %s (%.0f samples/s per CPU, hwprof %s)", pct(cost), pct(c.p.Budget), rate, pct(w.selfShare()))
	}
	if rate > maxRate {
		if kr := rate / (maxRate * (1 - c.p.Headroom)); kr > k {
			k, why = kr, fmt.Sprintf("rate %.0f > %.0f samples/s per CPU", rate, maxRate)
		}
	}
	if k == 1 {
		return Decision{}, false
	}
	to := c.round(float64(c.period) * k)
	if to <= c.period {
		return Decision{}, false
	}
	return c.change(to, RuleBudget, why), true
}

// floor shrinks the period when the program's known CPU time yields
// fewer than MinRate samples per second per CPU, as far as the budget
// allows.
func (c *Controller) floor() (Decision, bool) {
	w := &c.win
	if c.p.MinRate == 0 || !w.cpuKnown || w.dur < c.p.MinWindow || w.cpu < minCPU {
		return Decision{}, false
	}
	rate := w.rate()
	if rate >= c.p.MinRate {
		return Decision{}, false
	}
	k := 1 / c.p.MaxStep
	if rate > 0 {
		k = rate / (c.p.MinRate * (1 + c.p.Headroom))
	}
	lo, _, _, _ := c.limits(w)
	to := c.round(max(float64(c.period)*k, lo))
	if to >= c.period {
		return Decision{}, false
	}
	return c.change(to, RuleFloor, fmt.Sprintf("rate %.3g < floor %g samples/s per CPU", rate, c.p.MinRate)), true
}

// maxRate is the policy's rate cap, lowered by what loss taught.
func (c *Controller) maxRate() float64 {
	r := c.p.Rate()
	if c.rateCap > 0 && c.rateCap < r {
		r = c.rateCap
	}
	return r
}

// limits returns the periods the other rules leave to accuracy: lo from
// the bounds, the budget, the rate cap and the LBR overlap; hi from the
// bounds and the rate floor. Where they conflict the cost wins.
func (c *Controller) limits(w *window) (lo, hi float64, loWhy, hiWhy string) {
	P, h := float64(c.period), c.p.Headroom
	lo, hi = float64(c.bounds.Min), float64(c.bounds.Max)
	loWhy, hiWhy = "the minimum period", "the maximum period"
	if w.cpu >= minCPU {
		rate := w.rate()
		if v := P * w.cost(c.p.SampleCost) / (c.p.Budget * (1 - h)); v > lo {
			lo, loWhy = v, "the budget"
		}
		if mr := c.maxRate(); !math.IsInf(mr, 1) {
			if v := P * rate / (mr * (1 - h)); v > lo {
				lo, loWhy = v, "the rate cap"
			}
		}
		if c.p.MinRate > 0 && w.cpuKnown && rate > 0 {
			if v := P * rate / (c.p.MinRate * (1 + h)); v < hi {
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

// round clamps a target period to the bounds and makes it a period the
// kind uses: whole microseconds for Time, a prime for Count.
func (c *Controller) round(target float64) uint64 {
	b := c.bounds
	t := min(max(target, float64(b.Min)), float64(b.Max))
	if c.kind == Time {
		v := uint64(math.Round(t/1000)) * 1000
		return min(max(v, b.Min), b.Max)
	}
	v := nextPrime(uint64(t))
	if v == 0 || v > b.Max {
		v = prevPrime(b.Max)
	}
	return v
}

// change moves to period to and starts a new window.
func (c *Controller) change(to uint64, r Rule, why string) Decision {
	dir, verb := 1, "grow"
	if to < c.period {
		dir, verb = -1, "shrink"
	}
	reason := fmt.Sprintf("%s: %s period %s → %s", why, verb, c.format(c.period), c.format(to))
	c.period = to
	c.changes++
	c.lastDir = dir
	c.sinceChange = 0
	c.win = window{}
	return Decision{Period: to, Changed: true, Rule: r, Reason: reason}
}

func (c *Controller) keep(r Rule, why string) Decision {
	return Decision{Period: c.period, Rule: r, Reason: why + ": keep period " + c.format(c.period)}
}

// format prints a period: a duration for Time, a count otherwise.
func (c *Controller) format(p uint64) string {
	if c.kind == Time {
		return time.Duration(p).String()
	}
	return strconv.FormatUint(p, 10)
}
