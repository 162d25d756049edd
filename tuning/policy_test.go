package tuning

import (
	"strings"
	"testing"
	"time"
)

func TestParsePolicy(t *testing.T) {
	rows := []struct {
		name          string
		in            string
		min, max, bud float64
		err           string
	}{
		{name: "empty keeps the defaults: no budget", in: "", min: 0.01, max: 0.15, bud: 0},
		{name: "the paper's band and 1%", in: "1%,15%,1%", min: 0.01, max: 0.15, bud: 0.01},
		{name: "percentages", in: "0.5%,10%,2%", min: 0.005, max: 0.10, bud: 0.02},
		{name: "fractions", in: "0.02,0.1,0.005", min: 0.02, max: 0.1, bud: 0.005},
		{name: "only max", in: ",20%", min: 0.01, max: 0.20, bud: 0},
		{name: "only budget", in: ",,3%", min: 0.01, max: 0.15, bud: 0.03},
		{name: "spaces", in: " 2% , 12% , 0.5% ", min: 0.02, max: 0.12, bud: 0.005},
		{name: "whole numbers without %", in: "1,15,1", err: `"1" is not a share between 0 and 100% (write percentages with %)`},
		{name: "min over max", in: "15%,1%", err: "0 < min < max < 100%"},
		{name: "not a number", in: "a,15%,1%", err: `min: "a" is not a number`},
		{name: "too many fields", in: "1%,2%,3%,4%", err: "want min,max,budget, have 4 fields"},
		{name: "zero", in: "0%", err: "is not a share"},
		{name: "all of it", in: ",,100%", err: "budget"},
		{name: "NaN", in: "NaN", err: "is not a number"},
		{name: "a budget too small for the rate floor", in: ",,0.01%", err: "rate floor"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			p, err := ParsePolicy(row.in)
			if row.err != "" {
				if err == nil || !strings.Contains(err.Error(), row.err) {
					t.Fatalf("error %v, want one containing %q", err, row.err)
				}
				if !strings.HasPrefix(err.Error(), "adaptive policy ") {
					t.Errorf("error %q lacks the operation prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(p.MinRepeat, row.min) || !near(p.MaxRepeat, row.max) || !near(p.Budget, row.bud) {
				t.Errorf("got %v, want %g,%g,%g", p, row.min, row.max, row.bud)
			}
			again, err := ParsePolicy(p.String())
			if err != nil || again.String() != p.String() {
				t.Errorf("String %q does not parse back: %v", p.String(), err)
			}
		})
	}
}

func near(a, b float64) bool { return abs(a-b) < 1e-12 }

func TestPolicyDefaults(t *testing.T) {
	p := DefaultPolicy()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "1%,15%" {
		t.Errorf("String() = %q", got)
	}
	if !p.Parity() || p.PerfRate != 4000 {
		t.Errorf("the default holds the cost to perf's default's (Parity %v, PerfRate %g)", p.Parity(), p.PerfRate)
	}
	if got := p.RateCap(); abs(got-3600) > 1e-9 {
		t.Errorf("RateCap() = %g, want 3600 (where hwprof's samples cost what perf's 4000 Hz do)", got)
	}
	if start := float64(time.Second) / float64(p.Time.Start); start > p.RateCap()*1.001 {
		t.Errorf("Time.Start %d ns is %.0f samples/s, over the rate cap", p.Time.Start, start)
	}
	p.MaxRate = 1500
	if got := p.RateCap(); got != 1500 {
		t.Errorf("RateCap() with MaxRate = %g", got)
	}
	p.Budget = 0.0025 // pays for 1000 samples/s in the kernel
	if got := p.RateCap(); abs(got-1000) > 1e-9 {
		t.Errorf("RateCap() with a budget of 0.25%% = %g, want 1000", got)
	}
	if p.Bounds(Time) != p.Time || p.Bounds(Count) != p.Count {
		t.Error("Bounds does not pick the kind's bounds")
	}
}

func TestPolicyValidate(t *testing.T) {
	rows := []struct {
		name string
		edit func(*Policy)
		err  string
	}{
		{"band upside down", func(p *Policy) { p.MinRepeat = 0.2 }, "0 < min < max < 100%"},
		{"no samples per evaluation", func(p *Policy) { p.MinSamples = 0 }, "MinSamples"},
		{"overlap of 100%", func(p *Policy) { p.MaxLBROverlap = 1 }, "MaxLBROverlap"},
		{"negative budget", func(p *Policy) { p.Budget = -0.01 }, "budget"},
		{"no perf rate to hold to", func(p *Policy) { p.PerfRate = 0 }, "PerfRate"},
		{"no interrupt cost", func(p *Policy) { p.InterruptCost = 0 }, "InterruptCost"},
		{"negative rate", func(p *Policy) { p.MinRate = -1 }, "must not be negative"},
		{"step of one", func(p *Policy) { p.MaxStep = 1 }, "greater than 1"},
		{"no back-off", func(p *Policy) { p.BackOff = 1 }, "greater than 1"},
		{"headroom of 100%", func(p *Policy) { p.Headroom = 1 }, "Headroom"},
		{"negative hold", func(p *Policy) { p.Hold = -1 }, "must not be negative"},
		{"floor over the cap", func(p *Policy) { p.MinRate = 4000 }, "rate floor"},
		{"time bounds upside down", func(p *Policy) { p.Time.Min = p.Time.Max }, "time bounds"},
		{"start outside", func(p *Policy) { p.Count.Start = 10 }, "count bounds"},
		{"no prime in the count bounds", func(p *Policy) { p.Count = Bounds{Min: 24, Max: 28} }, "hold no prime"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			p := DefaultPolicy()
			row.edit(&p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), row.err) {
				t.Errorf("error %v, want one containing %q", err, row.err)
			}
		})
	}
}

func TestStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Time.String(), "time"},
		{Count.String(), "count"},
		{Kind(7).String(), "Kind(7)"},
		{RuleWait.String(), "wait"},
		{RuleBackOff.String(), "back-off"},
		{RuleOverlap.String(), "lbr-overlap"},
		{Rule(99).String(), "Rule(99)"},
		{pct(0.004), "0.4%"},
		{pct(0.15), "15%"},
		{pct(0.038729833), "3.87%"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
