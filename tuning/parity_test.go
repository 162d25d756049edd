package tuning

import (
	"strings"
	"testing"
	"time"
)

// program is 100ms of the program's CPU time on a cpu-clock event at the
// default start (278µs: 360 samples) seen on a 2-CPU machine over wall
// time wall, so the program ran on 0.1s/wall CPUs; hwprof's drains spend
// perSample on each sample (and its fixed CPU 1ms), and rep of the
// samples repeat their thread's previous top activation.
func program(wall, perSample time.Duration, rep uint64) Observation {
	const n = 360
	return Observation{
		Duration: wall, CPUs: 2, Samples: n, Repeats: rep,
		SelfCPU:   n*perSample + time.Millisecond,
		SampleCPU: n * perSample,
	}
}

// The default (no budget) against perf's: what a sample costs the program
// is weighed as perf's would be, and neither a deep stack's costly
// samples (perf pays for them too), nor a busy machine, nor accuracy
// lengthens the period past perf's rate.
func TestParity(t *testing.T) {
	const (
		start = 278_000
		cheap = 2 * time.Microsecond  // hwprof's drain on a small program
		dear  = 20 * time.Microsecond // on SQLite: each new instruction's code read for the activation key
	)
	rows := []struct {
		name   string
		feed   []Observation
		period uint64 // the period after the feed: start, or the range [period, max]
		max    uint64
		reason string // substring of a decision's reason
		trade  string // substring of Trade after the feed
	}{
		{
			// One thread on two CPUs: hwprof drains on the idle one,
			// taking nothing from the program, however dear its work.
			name:   "costly hwprof beside a single-threaded program",
			feed:   times(40, program(100*time.Millisecond, dear, 14)),
			period: start,
			trade:  "below perf's rate: 3597 samples/s per CPU against perf's 4000, where its bigger samples (leaf copy, key registers) cost what perf's do",
		},
		{
			// A CPU-bound process beside it halves the program's CPUs:
			// load, not cost.
			name:   "a hog beside the program",
			feed:   times(40, program(200*time.Millisecond, dear, 14)),
			period: start,
		},
		{
			// The program keeps both CPUs busy, so hwprof's 20µs a sample
			// take from it, where perf's 0.5µs would: at perf's cost the
			// rate is 4000 × (15 + 0.5) / (16.7 + 20) = 1690 samples/s.
			name:   "costly hwprof beside a program that keeps every CPU busy",
			feed:   times(40, program(50*time.Millisecond, dear, 14)),
			period: 560_000, max: 620_000,
			reason: "cost the program more than perf's 4000 would (its own work 20.0µs per sample against perf's 0.5µs, 100% of it taken from the program)",
			trade:  "below perf's rate because hwprof's own cost 20.0µs per sample > perf's 0.5µs, 100% of it taken from the program",
		},
		{
			// As cheap as on the benchmark's programs: within MinChange
			// of the start, which stays.
			name:   "cheap hwprof beside a program that keeps every CPU busy",
			feed:   times(40, program(50*time.Millisecond, cheap, 14)),
			period: start,
		},
		{
			// Half the samples repeat: under a budget the period would
			// grow (TestRules); here no further than perf's rate, and the
			// start is already past it.
			name:   "repetition over the band",
			feed:   times(40, program(100*time.Millisecond, cheap, 180)),
			period: start,
			reason: "repetition 50% > 15%, but perf's cost allows no longer period",
		},
		{
			// Too few repeats: the period would shrink, but the cost is
			// perf's already.
			name:   "repetition under the band",
			feed:   times(40, program(100*time.Millisecond, cheap, 0)),
			period: start,
			reason: "perf's cost allows no shorter period",
		},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			c, err := New(DefaultPolicy(), Time, 0)
			if err != nil {
				t.Fatal(err)
			}
			var d Decision
			var reasons []string
			for _, o := range row.feed {
				d = c.Observe(o)
				reasons = append(reasons, d.Reason)
			}
			hi := max(row.max, row.period)
			if got := c.Period(); got < row.period || got > hi {
				t.Errorf("period %d, want %d–%d (last: %s)", got, row.period, hi, d.Reason)
			}
			if row.reason != "" && !strings.Contains(strings.Join(reasons, "\n"), row.reason) {
				t.Errorf("no decision's reason contains %q; the last: %s", row.reason, d.Reason)
			}
			if tr := c.Trade(); !strings.Contains(tr, row.trade) {
				t.Errorf("Trade() = %q, want it to contain %q", tr, row.trade)
			}
		})
	}
}

// A period that grew because hwprof's work took CPU from the program comes
// back to the start once it no longer does (here a CPU-bound process
// beside the program: with it, hwprof's work is no longer the program's
// loss), and a period grown for loss stays grown.
func TestParityReturns(t *testing.T) {
	c, err := New(DefaultPolicy(), Time, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := feed(c, times(20, program(50*time.Millisecond, 20*time.Microsecond, 14)))
	if c.Period() <= 278_000 {
		t.Fatalf("want growth on a program that keeps every CPU busy: %s", d.Reason)
	}
	grown := c.Period()
	// At the longer period: 100ms of program CPU in fewer samples.
	n := uint64(100_000_000 / grown)
	slow := Observation{Duration: 200 * time.Millisecond, CPUs: 2, Samples: n, Repeats: n / 25,
		SelfCPU: time.Duration(n) * 21 * time.Microsecond, SampleCPU: time.Duration(n) * 20 * time.Microsecond}
	d = feed(c, times(20, slow))
	if c.Period() != 278_000 {
		t.Fatalf("period %d, want the start back: %s", c.Period(), d.Reason)
	}
	if c.Changes() != 2 {
		t.Errorf("%d changes, want the growth and the return: %s", c.Changes(), d.Reason)
	}
	if tr := c.Trade(); !strings.Contains(tr, "where its bigger samples") {
		t.Errorf("Trade() = %q after the return, want the start's reason", tr)
	}

	c, err = New(DefaultPolicy(), Time, 0)
	if err != nil {
		t.Fatal(err)
	}
	feed(c, []Observation{with(program(100*time.Millisecond, 2*time.Microsecond, 14), func(o *Observation) { o.Throttled = 1 })})
	if c.Period() != 556_000 {
		t.Fatalf("period %d after throttling, want 556µs", c.Period())
	}
	n = 100_000_000 / 556_000
	after := Observation{Duration: 100 * time.Millisecond, CPUs: 2, Samples: n, Repeats: n / 25,
		SelfCPU: time.Duration(n) * 3 * time.Microsecond, SampleCPU: time.Duration(n) * 2 * time.Microsecond}
	feed(c, times(40, after))
	if c.Period() != 556_000 {
		t.Errorf("period %d, want the back-off kept", c.Period())
	}
	if tr := c.Trade(); !strings.Contains(tr, "below perf's rate because the kernel lost or throttled samples (throttled 1 time") {
		t.Errorf("Trade() = %q", tr)
	}
}

// Under a budget the line names the budget, not perf's cost.
func TestTradeBudget(t *testing.T) {
	p := budgeted()
	c, err := New(p, Time, 0)
	if err != nil {
		t.Fatal(err)
	}
	// hwprof's drains at 20µs a sample: 3600 × 22.5µs is over 2%
	feed(c, times(20, program(100*time.Millisecond, 20*time.Microsecond, 14)))
	if c.Period() <= 278_000 {
		t.Fatalf("period %d, want the budget to grow it", c.Period())
	}
	if tr := c.Trade(); !strings.Contains(tr, "below perf's rate: ") || !strings.HasSuffix(tr, "to keep the cost within the budget 2%") {
		t.Errorf("Trade() = %q", tr)
	}
}
