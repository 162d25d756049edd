package uprobe

import (
	"strings"
	"testing"
	"time"
)

// Measure takes the system time as the probes' cost up to MaxHitCost a
// hit; Slowdown is CPU over the time left, a lower bound below the times'
// resolution.
func TestCostSlowdown(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name         string
		hits         uint64
		user, system time.Duration
		x            float64
		atLeast      bool
		perHit       time.Duration
	}{
		{"traps are the system time", 100_000, 100 * ms, 900 * ms, 10, false, 9 * time.Microsecond},
		{"own system calls are not traps", 1000, 500 * ms, 500 * ms, 1000.0 / 975, false, 25 * time.Microsecond},
		{"no own time measured", 50_000, 0, 700 * ms, 70, true, 14 * time.Microsecond},
		{"no hits", 0, 300 * ms, 200 * ms, 1, false, 0},
	} {
		c := Measure(tc.hits, tc.user, tc.system)
		x, atLeast := c.Slowdown()
		if d := x - tc.x; d > 1e-9 || d < -1e-9 || atLeast != tc.atLeast || c.PerHit() != tc.perHit {
			t.Errorf("%s: slowdown %v (at least %v), %v a hit; want %v (%v), %v", tc.name, x, atLeast, c.PerHit(), tc.x, tc.atLeast, tc.perHit)
		}
	}
}

// A Meter says nothing before the short measurement, then tells the
// slowdown once; beyond its limit it asks to stop, saying why.
func TestMeter(t *testing.T) {
	ms := time.Millisecond
	m := &Meter{Limit: 20}
	if note, stop := m.Observe(Measure(1000, 10*ms, 100*ms)); note != "" || stop {
		t.Errorf("before %v of CPU: %q, %v", MeasureCPU, note, stop)
	}
	note, stop := m.Observe(Measure(50_000, 100*ms, 900*ms)) // 10x
	if stop || !strings.Contains(note, "expected slowdown about 10x") || !strings.Contains(note, "--probe-filter") ||
		!strings.Contains(note, "--max-slowdown 20") {
		t.Errorf("10x under a limit of 20: %q, %v", note, stop)
	}
	if note, stop := m.Observe(Measure(60_000, 110*ms, 1000*ms)); note != "" || stop {
		t.Errorf("told twice: %q, %v", note, stop)
	}
	note, stop = m.Observe(Measure(200_000, 110*ms, 3000*ms)) // 28x
	if !stop || !strings.Contains(note, "slow the program down about 28x, beyond --max-slowdown 20") {
		t.Errorf("28x beyond 20: %q, %v", note, stop)
	}
	free := &Meter{}
	if note, stop := free.Observe(Measure(200_000, 0, 3000*ms)); stop || !strings.Contains(note, "expected slowdown over 300x") {
		t.Errorf("no limit: %q, %v", note, stop)
	}
	if note, stop := free.Observe(Measure(900_000, 0, 9000*ms)); stop || note != "" {
		t.Errorf("no limit, told: %q, %v", note, stop)
	}
}
