package tuning

import (
	"strings"
	"testing"
	"time"
)

// clock is 100ms of a Time event on n samples with rep repeats; hwprof
// spends 1µs per sample. The program's CPU time is derived from the
// samples (n periods).
func clock(n, rep uint64) Observation {
	return Observation{Duration: 100 * time.Millisecond, CPUs: 4, Samples: n, Repeats: rep, SelfCPU: time.Duration(n) * time.Microsecond}
}

// counted is 100ms of a Count event on one busy CPU whose CPU time the
// caller knows, with n samples and rep repeats; hwprof spends 1µs per
// sample.
func counted(n, rep uint64) Observation {
	o := clock(n, rep)
	o.ProgramCPU = 100 * time.Millisecond
	return o
}

// drained is a clock interval of n samples whose hwprof CPU is 8µs a
// sample, its drains 0.5µs of it.
func drained(n uint64) Observation {
	o := clock(n, n/25)
	o.SelfCPU, o.SampleCPU = time.Duration(n)*8*time.Microsecond, time.Duration(n)*500*time.Nanosecond
	return o
}

// times repeats an observation.
func times(n int, o Observation) []Observation {
	s := make([]Observation, n)
	for i := range s {
		s[i] = o
	}
	return s
}

func with(o Observation, f func(*Observation)) Observation {
	f(&o)
	return o
}

func seq(parts ...[]Observation) []Observation {
	var s []Observation
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

type ruleRow struct {
	name   string
	policy func(*Policy)
	kind   Kind
	start  uint64
	setup  []Observation // fed first; their decisions are not checked
	feed   []Observation // fed next; the last decision is checked

	rule    Rule
	changed bool
	period  uint64 // expected period after the last decision; 0: unchecked
	reason  string // substring of the last decision's reason
}

func (row ruleRow) run(t *testing.T) (*Controller, Decision) {
	t.Helper()
	p := budgeted()
	if row.policy != nil {
		row.policy(&p)
	}
	c, err := New(p, row.kind, row.start)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range row.setup {
		c.Observe(o)
	}
	var d Decision
	for _, o := range row.feed {
		prev := c.Period()
		d = c.Observe(o)
		if d.Changed != (d.Period != prev) || d.Period != c.Period() {
			t.Fatalf("decision %+v inconsistent with periods %d → %d", d, prev, c.Period())
		}
	}
	return c, d
}

func TestRules(t *testing.T) {
	rows := []ruleRow{
		{
			name: "wait for MinSamples",
			kind: Time, start: 1_000_000,
			feed: []Observation{clock(500, 20)},
			rule: RuleWait, period: 1_000_000, reason: "collecting: 500 of 1000 samples",
		},
		{
			name: "repetition inside the band keeps the period",
			kind: Time, start: 1_000_000,
			feed: times(10, clock(100, 4)),
			rule: RuleStable, period: 1_000_000, reason: "repetition 4% in 1%–15%",
		},
		{
			// r = 0.5%: the model puts the period at log(7.6%)/log(0.5%)
			// = 0.486 of itself (the budget, 5% here, allows it).
			name:   "repetition under the band shrinks by the exponential model",
			policy: func(p *Policy) { p.Budget = 0.05 },
			kind:   Time, start: 1_000_000,
			feed: seq(times(5, clock(100, 1)), times(5, clock(100, 0))),
			rule: RuleRepetition, changed: true, period: 486_000,
			reason: "repetition 0.5% < 1%: shrink period 1ms → 486µs",
		},
		{
			// r = 50%: log(1.97%)/log(50%) = 5.67 times the period.
			name: "repetition over the band grows by the exponential model",
			kind: Time, start: 1_000_000,
			feed: times(10, clock(100, 50)),
			rule: RuleRepetition, changed: true, period: 5_667_000,
			reason: "repetition 50% > 15%: grow period 1ms → 5.667ms",
		},
		{
			name: "growth stops at the maximum period",
			kind: Time, start: 7_000_000,
			feed: times(10, clock(100, 50)),
			rule: RuleRepetition, period: 7_000_000,
			reason: "the maximum period allows no longer period",
		},
		{
			// 0.7% cost at 500µs: a budget of 1% at 80% leaves 437.5µs, a
			// step under MinChange.
			name:   "the budget holds a shrink back",
			policy: func(p *Policy) { p.Budget = 0.01 },
			kind:   Time, start: 500_000,
			feed: times(5, clock(200, 0)),
			rule: RuleRepetition, period: 500_000,
			reason: "repetition 0% < 1%, but the budget allows no shorter period",
		},
		{
			// 4000 samples/s: 1% in the kernel, 0.4% in hwprof; 1.4/0.8.
			name:   "cost over the budget grows the period",
			policy: func(p *Policy) { p.Budget = 0.01 },
			kind:   Time, start: 250_000,
			feed: []Observation{clock(400, 16)},
			rule: RuleBudget, changed: true, period: 438_000,
			reason: "cost 1.4% > budget 1% (4000 samples/s per CPU: kernel 1%, hwprof 0.4% per sample; hwprof's fixed 0% not budgeted): grow period 250µs → 438µs",
		},
		{
			// hwprof spends 5ms in 100ms of the program's CPU, all but
			// 0.4ms of it fixed (its drains measured): the budgeted cost is
			// 1.4%, inside 2%, and no period would cut the rest.
			name:   "hwprof's fixed CPU is not budgeted",
			policy: atPerfRate,
			kind:   Time, start: 250_000,
			feed: times(5, with(clock(400, 16), func(o *Observation) {
				o.SelfCPU, o.SampleCPU = 5*time.Millisecond, 400*time.Microsecond
			})),
			rule: RuleWait, period: 250_000,
		},
		{
			// The same without the drains measured: the prior, 2µs per
			// sample, puts 0.8ms of the 5ms on the samples, 1.8% in all.
			name:   "without measured drains, the prior bounds the part per sample",
			policy: atPerfRate,
			kind:   Time, start: 250_000,
			feed: times(5, with(clock(400, 16), func(o *Observation) { o.SelfCPU = 5 * time.Millisecond })),
			rule: RuleWait, period: 250_000,
		},
		{
			// hwprof's drains take 6µs a sample: 1% in the kernel and
			// 2.4% in hwprof, over 2%; 3.4/1.6 times the period. The
			// measure is trusted once the drains held 1000 samples.
			name:   "hwprof's work per sample over the budget grows the period",
			policy: atPerfRate,
			kind:   Time, start: 250_000,
			feed: times(3, with(clock(400, 16), func(o *Observation) {
				o.SampleCPU = 2400 * time.Microsecond
				o.SelfCPU = o.SampleCPU + time.Millisecond
			})),
			rule: RuleBudget, changed: true, period: 531_000,
			reason: "cost 3.4% > budget 2% (4000 samples/s per CPU: kernel 1%, hwprof 2.4% per sample; hwprof's fixed 1% not budgeted): grow period 250µs → 531µs",
		},
		{
			// One window's drains at 6µs a sample (a garbage collection,
			// the buffers' first touch) are not yet a measure: the prior
			// holds until the drains held 1000 samples.
			name:   "one expensive drain is not a measure",
			policy: atPerfRate,
			kind:   Time, start: 250_000,
			feed: []Observation{with(clock(400, 16), func(o *Observation) {
				o.SampleCPU = 2400 * time.Microsecond
				o.SelfCPU = o.SampleCPU + time.Millisecond
			})},
			rule: RuleWait, period: 250_000,
		},
		{
			// hwprof's CPU rises with the samples per second (8µs a
			// sample, by a fit over rates that swing with the program's
			// share of a CPU), but its measured drains take 0.5µs: a
			// caller that measures is not second-guessed by the fit.
			name:   "measured drains are not overruled by the fit",
			policy: atPerfRate,
			kind:   Time, start: 250_000,
			feed: []Observation{drained(100), drained(300), drained(100), drained(300), drained(100)},
			rule: RuleWait, period: 250_000,
		},
		{
			// At the rate cap, 3600 samples/s, with too few repeats: the
			// cap keeps the period.
			name: "the start at the rate cap does not shrink",
			kind: Time,
			feed: times(9, clock(360, 0)),
			rule: RuleRepetition, period: 278_000,
			reason: "repetition 0% < 1%, but the rate cap allows no shorter period",
		},
		{
			name:   "rate over MaxRate grows the period",
			policy: func(p *Policy) { p.MaxRate = 2000 },
			kind:   Time, start: 250_000,
			feed: []Observation{clock(400, 16)},
			rule: RuleBudget, changed: true, period: 625_000,
			reason: "rate 4000 > 2000 samples/s per CPU",
		},
		{
			// 420 samples in 100ms of CPU: 1.05% (with hwprof 1.47%), but
			// 420 could be 359 (three standard deviations): no change.
			name: "a cost within noise of the budget does not trip it",
			kind: Count, start: 100_003,
			feed: []Observation{with(counted(420, 10), func(o *Observation) { o.SelfCPU = 0 })},
			rule: RuleWait, period: 100_003,
		},
		{
			name: "lost samples back off",
			kind: Time, start: 250_000,
			feed: []Observation{with(clock(400, 16), func(o *Observation) { o.Lost = 10; o.SelfCPU = 0 })},
			rule: RuleBackOff, changed: true, period: 500_000,
			reason: "lost 10 samples: back off: grow period 250µs → 500µs",
		},
		{
			name: "throttling backs off",
			kind: Count, start: 100_003,
			feed: []Observation{with(counted(100, 4), func(o *Observation) { o.Throttled = 2 })},
			rule: RuleBackOff, changed: true, period: 200_009,
			reason: "throttled 2 times: back off",
		},
		{
			name: "back-off at the maximum period",
			kind: Time, start: 8_000_000,
			feed: []Observation{with(clock(10, 0), func(o *Observation) { o.Lost = 1 })},
			rule: RuleBackOff, period: 8_000_000,
			reason: "lost 1 sample, but the period is at its maximum",
		},
		{
			// Loss at 2000 samples/s caps the rate at 1000/s: at 1ms (1000/s)
			// accuracy may not shrink at all.
			name: "accuracy does not return to a rate that lost samples",
			kind: Time, start: 500_000,
			setup: []Observation{with(clock(200, 8), func(o *Observation) { o.Lost = 5 })},
			feed:  times(20, clock(100, 0)),
			rule:  RuleRepetition, period: 1_000_000,
			reason: "the rate cap allows no shorter period",
		},
		{
			// One busy CPU, 10 samples/s over a second: 3.7/s at least,
			// aim at 120/s.
			name: "a starving count event shrinks to the rate floor",
			kind: Count, start: 100_003,
			feed: times(10, counted(1, 0)),
			rule: RuleFloor, changed: true, period: 3067,
			reason: "rate 10 < floor 100 samples/s per CPU: shrink period 100003 → 3067",
		},
		{
			name: "no floor without the program's CPU time",
			kind: Count, start: 100_003,
			feed: times(10, with(counted(1, 0), func(o *Observation) { o.ProgramCPU = 0 })),
			rule: RuleWait, period: 100_003,
		},
		{
			name: "no samples at all shrink by MaxStep",
			kind: Count, start: 100_003,
			feed: times(10, counted(0, 0)),
			rule: RuleFloor, changed: true, period: 12_503,
		},
		{
			// Overlap 60%: (1 - 12.5%)/(1 - 60%) = 2.19 times the period.
			name: "overlapping LBR windows grow the period",
			kind: Count, start: 100_003,
			feed: times(10, with(counted(100, 4), func(o *Observation) {
				o.LBRPairs, o.LBROverlap = 100, 0.6
			})),
			rule: RuleOverlap, changed: true, period: 218_761,
			reason: "LBR overlap 60% > 25%: grow period 100003 → 218761",
		},
		{
			// Overlap 20%: the window spans 1.25 periods, and 25% overlap
			// comes at 0.94 of the period: a shrink under MinChange.
			name: "LBR overlap limits a shrink",
			kind: Count, start: 100_003,
			feed: times(10, with(counted(100, 0), func(o *Observation) {
				o.LBRPairs, o.LBROverlap = 100, 0.2
			})),
			rule: RuleRepetition, period: 100_003,
			reason: "the LBR overlap allows no shorter period",
		},
		{
			// 9 of 1000 is under 1% but inside the settled trigger 0.75%.
			name: "dead band once settled",
			kind: Time, start: 1_000_000,
			setup: times(10, clock(100, 4)),
			feed:  seq(times(9, clock(100, 1)), times(1, clock(100, 0))),
			rule:  RuleStable, period: 1_000_000,
			reason: "repetition 0.9% within the dead band of 1%–15%",
		},
		{
			// 11 of 1000: under 1.25%, where a run ends, but not beyond
			// doubt: the window extends to 4000 samples.
			name: "an uncertain share extends the window",
			kind: Time, start: 1_000_000,
			feed: seq(times(9, clock(100, 1)), times(1, clock(100, 2))),
			rule: RuleWait, period: 1_000_000,
			reason: "repetition 1.1% outside 1%–15% is not yet certain: collecting 4000 samples",
		},
		{
			// At the second look a run under way goes by the estimate.
			name: "a run under way goes by the estimate at the second look",
			kind: Time, start: 1_000_000,
			policy: func(p *Policy) { p.Budget = 0.05 },
			feed:   seq(times(36, clock(100, 1)), times(4, clock(100, 2))),
			rule:   RuleRepetition, changed: true, period: 571_000,
			reason: "repetition 1.1% < 1.25%, where a run of changes ends: shrink period 1ms → 571µs",
		},
		{
			// Settled; then 24 of 4000 (0.6%) is under the settled trigger
			// 0.75% but not beyond doubt at either look: it stays.
			name: "a settled period stays when the second look is uncertain",
			kind: Time, start: 1_000_000,
			setup: times(10, clock(100, 4)),
			feed:  times(8, clock(500, 3)),
			rule:  RuleStable, period: 1_000_000,
			reason: "repetition 0.6% within noise of 1%–15%",
		},
		{
			// Settled; no repeats in 1000 is beyond doubt (P = 0.06%).
			name:   "a share out beyond doubt moves a settled period at once",
			policy: func(p *Policy) { p.Budget = 0.05 },
			kind:   Time, start: 1_000_000,
			setup: times(10, clock(100, 4)),
			feed:  times(10, clock(100, 0)),
			rule:  RuleRepetition, changed: true,
			reason: "repetition 0% < 1%: shrink period 1ms →",
		},
		{
			name:   "the first evaluation after a change does not reverse it",
			policy: func(p *Policy) { p.Budget = 0.05 },
			kind:   Time, start: 2_000_000,
			setup:  times(20, clock(50, 0)),
			feed:   times(10, clock(100, 50)),
			rule:   RuleHold,
			reason: "repetition 50% > 15%, but a reversal waits 1 evaluation(s) after a change",
		},
		{
			// Settled; 20% over 1000 samples is within three standard
			// deviations of 18.75%, so the window extends; 60% of the next
			// 100 makes 23.6% of 1100, four standard deviations out.
			name: "overwhelming evidence acts before the second look",
			kind: Time, start: 1_000_000,
			setup: times(10, clock(100, 4)),
			feed:  seq(times(10, clock(100, 20)), times(1, clock(100, 60))),
			rule:  RuleRepetition, changed: true,
			reason: "repetition 23.6% > 15%: grow period 1ms →",
		},
		{
			name:   "changes under MinChange are not made",
			policy: func(p *Policy) { p.MinChange = 0.5 },
			kind:   Count, start: 100_003,
			feed: times(10, with(counted(100, 4), func(o *Observation) {
				o.LBRPairs, o.LBROverlap = 100, 0.35
			})),
			rule: RuleOverlap, period: 100_003,
			reason: "but the change would be under 50%",
		},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			c, d := row.run(t)
			if d.Rule != row.rule || d.Changed != row.changed {
				t.Errorf("decision %v changed %v, want %v changed %v: %s", d.Rule, d.Changed, row.rule, row.changed, d.Reason)
			}
			if row.period != 0 && c.Period() != row.period {
				t.Errorf("period %d, want %d: %s", c.Period(), row.period, d.Reason)
			}
			if !strings.Contains(d.Reason, row.reason) {
				t.Errorf("reason %q, want it to contain %q", d.Reason, row.reason)
			}
		})
	}
}

// TestReversalInterpolates: a shrink that overshoots is undone inside the
// bracket the run measured, never back to where it started (no A→B→A).
func TestReversalInterpolates(t *testing.T) {
	p := DefaultPolicy()
	p.Budget = 0.05
	c, err := New(p, Time, 4_000_000)
	if err != nil {
		t.Fatal(err)
	}
	start := c.Period()
	d := feed(c, seq(times(1, clock(100, 1)), times(9, clock(100, 0)))) // 0.1%: shrink
	if !d.Changed || d.Period >= start {
		t.Fatalf("want a shrink, got %s", d.Reason)
	}
	low := d.Period
	d = feed(c, times(10, clock(100, 50))) // 50%: the first evaluation holds
	if d.Rule != RuleHold {
		t.Fatalf("want a hold, got %s", d.Reason)
	}
	d = feed(c, times(10, clock(100, 50)))
	if !d.Changed || d.Period <= low || d.Period >= start {
		t.Fatalf("reversal to %d, want strictly between %d and %d: %s", d.Period, low, start, d.Reason)
	}
}

// TestPinnedLimit: a period held at the rate floor does not creep towards
// it on a limit that moved by less than twice MinChange.
func TestPinnedLimit(t *testing.T) {
	c, err := New(budgeted(), Count, 100_003)
	if err != nil {
		t.Fatal(err)
	}
	// 138 samples/s (lower bound about 131), too many repeats: the floor
	// lets the period grow by about 9%, under MinChange.
	d := feed(c, times(72, with(counted(14, 7), func(o *Observation) { o.ProgramCPU = 101 * time.Millisecond })))
	if d.Changed || !strings.Contains(d.Reason, "the rate floor allows no longer period") {
		t.Fatalf("want the floor to hold the period: %s", d.Reason)
	}
	// Now 30% more samples per CPU-second: the floor would allow about
	// 40%, over MinChange but under twice it.
	d = feed(c, times(56, with(counted(18, 9), func(o *Observation) { o.ProgramCPU = 100 * time.Millisecond })))
	if d.Changed || !strings.Contains(d.Reason, "the rate floor allows no longer period") {
		t.Fatalf("want the pinned period to stay: %s", d.Reason)
	}
	// Twice the rate: the limit has moved, the period follows.
	d = feed(c, times(36, with(counted(28, 14), func(o *Observation) { o.ProgramCPU = 100 * time.Millisecond })))
	if !d.Changed || d.Period <= 100_003 {
		t.Fatalf("want growth once the limit moved: %s", d.Reason)
	}
}

// feed observes each observation in turn and returns the last decision.
func feed(c *Controller, obs []Observation) Decision {
	var d Decision
	for _, o := range obs {
		d = c.Observe(o)
	}
	return d
}

// budgeted is the default policy with a budget of 2%, the former
// default: the rules the table tests and the simulations exercise, with
// accuracy free to lengthen the period (the default, without a budget,
// holds the rate to perf's: TestParity).
func budgeted() Policy {
	p := DefaultPolicy()
	p.Budget = 0.02
	return p
}

// atPerfRate raises the rate cap to perf's 4000 samples/s for the cases
// that work the budget's arithmetic at perf's rate (the default cap,
// 3600, would act first).
func atPerfRate(p *Policy) { p.MaxRate = 4000 }

func TestNewRoundsTheStart(t *testing.T) {
	rows := []struct {
		name  string
		kind  Kind
		start uint64
		want  uint64
	}{
		{"time default: 278µs, at the rate cap", Time, 0, 278_000},
		{"time to whole microseconds", Time, 1_234_567, 1_235_000},
		{"time under the minimum", Time, 1, 10_000},
		{"time over the maximum", Time, 1 << 40, 8_000_000},
		{"count default", Count, 0, 100_003},
		{"count to the next prime", Count, 1_000_000, 1_000_003},
		{"count prime already", Count, 4099, 4099},
		{"count over the maximum: the largest prime under it", Count, 1 << 40, 999_999_937},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			c, err := New(DefaultPolicy(), row.kind, row.start)
			if err != nil {
				t.Fatal(err)
			}
			if c.Period() != row.want || c.Kind() != row.kind || c.Changes() != 0 {
				t.Errorf("period %d kind %v changes %d, want %d %v 0", c.Period(), c.Kind(), c.Changes(), row.want, row.kind)
			}
		})
	}
	if _, err := New(DefaultPolicy(), Kind(9), 0); err == nil {
		t.Error("unknown kind accepted")
	}
	bad := DefaultPolicy()
	bad.MaxRepeat = 0.001
	if _, err := New(bad, Time, 0); err == nil {
		t.Error("invalid policy accepted")
	}
}

// TestSelfFit: hwprof's CPU time is split into a fixed part and a part
// per sample once the observations span a range of rates.
func TestSelfFit(t *testing.T) {
	var f selfFit
	obs := func(n uint64) Observation {
		return Observation{Duration: 100 * time.Millisecond, Samples: n,
			SelfCPU: 100*time.Microsecond + time.Duration(n)*2*time.Microsecond}
	}
	f.add(obs(1000))
	f.add(obs(1100))
	if _, _, ok := f.solve(); ok {
		t.Error("solved from a narrow range of rates")
	}
	f.add(obs(100))
	f.add(obs(300))
	if _, _, ok := f.solve(); ok {
		t.Error("solved from four observations")
	}
	f.add(obs(500))
	fixed, per, ok := f.solve()
	if !ok || abs(fixed-0.001) > 1e-9 || abs(per-2e-6) > 1e-12 {
		t.Errorf("fixed %g per sample %g ok %v, want 0.001 and 2e-6", fixed, per, ok)
	}
}

// TestSelfFitNeverTakesFixedForPerSample: a fit whose fixed part comes
// out negative (noise) is not used, rather than putting all of hwprof's
// CPU on the samples.
func TestSelfFitNeverTakesFixedForPerSample(t *testing.T) {
	var f selfFit
	for _, o := range []struct {
		n    uint64
		self time.Duration
	}{{100, 100 * time.Microsecond}, {1000, 5 * time.Millisecond}, {200, 300 * time.Microsecond}, {900, 4 * time.Millisecond}, {150, 100 * time.Microsecond}} {
		f.add(Observation{Duration: 100 * time.Millisecond, Samples: o.n, SelfCPU: o.self})
	}
	if fixed, per, ok := f.solve(); ok {
		t.Errorf("fit with fixed %g, per sample %g accepted", fixed, per)
	}
}

func abs(x float64) float64 { return max(x, -x) }

// TestDecisionInvariants feeds arbitrary observations: the period stays
// in bounds, Count periods are prime, Time periods whole microseconds, and
// Changed says exactly whether the period moved.
func TestDecisionInvariants(t *testing.T) {
	for _, kind := range []Kind{Time, Count} {
		c, err := New(DefaultPolicy(), kind, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := DefaultPolicy().Bounds(kind)
		x := uint64(88172645463325252)
		next := func(n uint64) uint64 { // xorshift
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			return x % n
		}
		for range 20000 {
			n := next(3000)
			o := Observation{
				Duration: time.Duration(next(300)) * time.Millisecond, CPUs: int(next(9)),
				Samples: n, Repeats: next(n + 1), SelfCPU: time.Duration(next(2000)) * time.Microsecond,
				LBRPairs: next(2) * n, LBROverlap: float64(next(101)) / 100,
			}
			if next(50) == 0 {
				o.Lost = next(100)
			}
			if next(60) == 0 {
				o.Throttled = 1
			}
			if next(2) == 0 {
				o.ProgramCPU = time.Duration(next(400)) * time.Millisecond
			}
			prev := c.Period()
			d := c.Observe(o)
			p := c.Period()
			switch {
			case d.Period != p || d.Changed != (p != prev):
				t.Fatalf("%v: decision %+v after %d", kind, d, prev)
			case p < b.Min || p > b.Max:
				t.Fatalf("%v: period %d outside %d–%d", kind, p, b.Min, b.Max)
			case kind == Count && !isPrime(p):
				t.Fatalf("count period %d is not prime", p)
			case kind == Time && p%1000 != 0:
				t.Fatalf("time period %d is not whole microseconds", p)
			case d.Reason == "":
				t.Fatalf("%v: decision without a reason", kind)
			}
		}
	}
}
