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
	top    uint64 // the largest Count period: the largest prime within bounds
	period uint64

	win    window // observations since the last change or evaluation
	recent recent // observations since the last change, for the cost rules

	rateCap float64   // samples/s per CPU learned from loss; 0: none
	self    selfFit   // hwprof's CPU time: fixed and per sample
	drain   drainCost // hwprof's CPU time on its drains, per sample

	lastDir     int // direction of the last change: +1 grow, -1 shrink, 0 none
	sinceChange int // accuracy evaluations since the last change
	// above and below are the latest repetition measurements of the
	// current run of changes with the share too high (period too fine)
	// and too low (period too coarse); settle forgets them.
	above, below point
	settled      bool // no run of changes under way; see triggers
	pinned       int  // direction in which a limit holds the period, 0: none
	changes      int
	// the latest change's rule and, for the summary, why the rate is
	// where it is (Trade)
	lastRule Rule
	tradeWhy string
	rateNow  float64 // samples/s per CPU of the latest second, 0: not yet known
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
	if k == Count {
		c.top = prevPrime(c.bounds.Max)
	}
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
	ow := observed(o, c.period, c.kind)
	c.win.merge(ow)
	c.recent.push(ow)
	c.self.add(o)
	c.drain.add(o, 10*float64(c.p.MinSamples))
	if o.Lost > 0 || o.Throttled > 0 {
		return c.backOff(o)
	}
	if w, ok := c.recent.last(floorWindows * c.p.MinWindow); ok && w.cpu >= minCPU {
		c.rateNow = w.rate()
	}
	if c.p.Parity() {
		if d, ok := c.parity(); ok {
			return d
		}
	} else if d, ok := c.budget(); ok {
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
		s = "lost " + plural(o.Lost, "sample")
	}
	if o.Throttled > 0 {
		if s != "" {
			s += ", "
		}
		s += "throttled " + plural(o.Throttled, "time")
	}
	return s
}

func plural(n uint64, what string) string {
	s := strconv.FormatUint(n, 10) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
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
	if v == 0 || v > c.top {
		v = c.top
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
	c.lastRule = r
	if r != RuleBudget || !c.p.Parity() {
		c.tradeWhy = why
	}
	c.rateNow = 0
	c.lastDir = dir
	c.sinceChange = 0
	c.settled = false
	c.pinned = 0
	c.win = window{}
	c.recent = recent{}
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

// Trade says in one short line how the rate compares with perf's default
// (PerfRate) and why it is where it is, for the summary of a recording:
// "at perf's rate", "above perf's rate: …", "below perf's rate: …" (the
// cost of hwprof's bigger samples, a budget, or accuracy under a budget)
// or "below perf's rate because …" (hwprof's own cost, or loss). A Time
// event's rate is its period's; a Count event's that of its latest
// second of recording.
func (c *Controller) Trade() string {
	perf := c.p.PerfRate
	rate := c.rateNow
	if c.kind == Time {
		rate = 1e9 / float64(c.period)
	}
	if perf <= 0 || rate <= 0 {
		return "period " + c.format(c.period) + ", its rate against perf's not yet known"
	}
	r := fmt.Sprintf("%.0f samples/s per CPU against perf's %g", rate, perf)
	switch {
	case math.Abs(rate-perf) <= 0.02*perf:
		return "at perf's rate (" + r + ")"
	case rate > perf && c.changes > 0:
		return "above perf's rate: " + r + ", " + c.tradeWhy
	case rate > perf:
		return "above perf's rate: " + r
	case c.lastRule == RuleBackOff:
		return "below perf's rate because the kernel lost or throttled samples (" + c.tradeWhy + "): " + r
	case rate >= c.p.RateCap()*0.98 || c.changes == 0:
		return "below perf's rate: " + r + ", where its bigger samples (leaf copy, key registers) cost what perf's do"
	case c.lastRule == RuleBudget && c.p.Parity():
		return "below perf's rate " + c.tradeWhy + ": " + r
	case c.lastRule == RuleBudget:
		return "below perf's rate: " + r + ", to keep the cost within the budget " + pct(c.p.Budget)
	}
	return "below perf's rate: " + r + ", " + c.tradeWhy
}
