package ccmap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestMeasureString(t *testing.T) {
	for m, want := range map[Measure]string{Self: "self", Total: "total", Calls: "calls", 9: "Measure(9)"} {
		if got := m.String(); got != want {
			t.Errorf("%d: %q, want %q", uint8(m), got, want)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  fmt.Stringer
		want string
	}{
		{"call site", CallSite{Caller: 3, Addr: 0x2010}, "3@0x2010"},
		{"frame with a call", Frame{Func: 3, Site: 0x2010}, "3@0x2010"},
		{"leaf frame", Frame{Func: 4}, "4"},
	} {
		if s := tc.got.String(); s != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, s, tc.want)
		}
	}
}

// TestCompensate: over a uniform grid of u the mean is weight/ratio to
// within the grid's step, and ratios outside (0, 1) change nothing.
func TestCompensate(t *testing.T) {
	tests := []struct {
		name   string
		weight uint64
		ratio  float64
	}{
		{"RR 1/3", 7, 1.0 / 3},
		{"RR 0.3", 1000, 0.3},
		{"RR 0.25 is exact", 250000, 0.25},
		{"small weight", 1, 0.9},
	}
	const n = 10000
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sum float64
			for i := range n {
				sum += float64(Compensate(tc.weight, tc.ratio, (float64(i)+0.5)/n))
			}
			want := float64(tc.weight) / tc.ratio
			if got := sum / n; math.Abs(got-want) > 1.0/n+1e-9 {
				t.Errorf("mean %v, want %v", got, want)
			}
		})
	}
	for _, r := range []float64{0, 1, -1, 2, math.NaN()} {
		if got := Compensate(5, r, 0.5); got != 5 {
			t.Errorf("ratio %v: %d, want 5", r, got)
		}
	}
}

// TestCompensatedFoldUnbiased folds a stream in which repeated stacks are
// kept with probability RR and weighted by Compensate, as redundancy
// skipping does, and checks every function's Total against the exact
// fold: each must lie within 5 standard errors.
func TestCompensatedFoldUnbiased(t *testing.T) {
	const rr = 0.2
	stacks, seq := zipfStacks(4, 200, 500, 8, 200000)
	r := rand.New(rand.NewPCG(1, 1))
	exact, skipped := New(), New()
	seen := make(map[int]bool)
	var variance = make(map[FuncID]float64)
	for _, i := range seq {
		const w = 100
		exact.AddStack(stacks[i], w)
		if !seen[i] {
			seen[i] = true
			skipped.AddStack(stacks[i], w)
			continue
		}
		if r.Float64() < rr {
			skipped.AddStack(stacks[i], Compensate(w, rr, r.Float64()))
		}
		// a kept sample adds w/rr with probability rr: variance
		// w²(1-rr)/rr per repeated sample, for every function on it
		done := map[FuncID]bool{}
		for _, f := range stacks[i] {
			if !done[f.Func] {
				done[f.Func] = true
				variance[f.Func] += w * w * (1 - rr) / rr
			}
		}
	}
	for _, f := range exact.Functions(Total) {
		g, _ := skipped.Function(f.Func)
		se := math.Sqrt(variance[f.Func])
		if d := math.Abs(float64(g.Total) - float64(f.Total)); d > 5*se+1 {
			t.Errorf("function %d: %d against exact %d (%.1f standard errors)", f.Func, g.Total, f.Total, d/se)
		}
	}
}
