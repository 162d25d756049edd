package uprobe

import (
	"fmt"
	"time"
)

// MaxHitCost bounds what one probe hit may cost: a hit costs 1–19 µs on
// the machines measured (a 5-byte nop, an emulated push %rbp, an
// instruction stepped out of line), so a program's system time beyond
// its hits times this is its own (system calls), not the probes'.
const MaxHitCost = 25 * time.Microsecond

// Cost is what the probes have cost the processes recorded so far.
type Cost struct {
	Hits uint64        // probe hits: calls of the probed functions
	CPU  time.Duration // the processes' CPU time, user and system
	// Probes is the part of CPU spent in the probes: the system time, as
	// a trap is the kernel's work for the task, up to Hits × MaxHitCost.
	Probes time.Duration
}

// Measure is the cost of hits given the processes' user and system time.
func Measure(hits uint64, user, system time.Duration) Cost {
	probes := min(system, time.Duration(hits)*MaxHitCost)
	return Cost{Hits: hits, CPU: user + system, Probes: probes}
}

// PerHit is the mean cost of a hit (0 without hits).
func (c Cost) PerHit() time.Duration {
	if c.Hits == 0 {
		return 0
	}
	return c.Probes / time.Duration(c.Hits)
}

// resolution is the finest CPU time the processes' times tell apart
// (/proc/PID/stat counts clock ticks of 10 ms).
const resolution = 10 * time.Millisecond

// Slowdown is how many times the processes' CPU time is what it would be
// without the probes: CPU / (CPU − Probes). When the time left is below
// the times' resolution, it is a lower bound (atLeast), taking that
// resolution as the time left.
func (c Cost) Slowdown() (x float64, atLeast bool) {
	own := c.CPU - c.Probes
	if own < resolution {
		own, atLeast = resolution, true
	}
	return float64(c.CPU) / float64(own), atLeast
}

// DefaultMaxSlowdown is the default of hwprof record's --max-slowdown:
// an exact recording that slows its program down more than this many
// times stops (a program calling tiny functions in a hot loop can run
// hundreds of times slower, and the user learns it only when it ends).
const DefaultMaxSlowdown = 50

// MeasureCPU is the short measurement: the processes' CPU time before
// the Meter tells the expected slowdown (and may stop the recording).
const MeasureCPU = 500 * time.Millisecond

// A Meter tells, from the costs a recording observes, the expected
// slowdown once the processes have run MeasureCPU, and when a recording
// is to stop: its slowdown is over Limit (0: no limit). The zero Meter
// tells the slowdown and never stops.
type Meter struct {
	Limit float64
	told  bool
}

// LimitAdvice ends the note of a stop beyond the limit: the way out, in
// hwprof record's flags (a command that runs the recording with other
// flags replaces it).
const LimitAdvice = "probe fewer functions (--probe-filter REGEX) or raise the limit (--max-slowdown 0: none)"

// Observe takes the cost so far. It returns a note to show, once, with
// the expected slowdown; and stop true, with the reason as the note, when
// the slowdown is over the limit.
func (m *Meter) Observe(c Cost) (note string, stop bool) {
	if m.told && m.Limit == 0 || c.CPU < MeasureCPU || c.Hits == 0 {
		return "", false
	}
	x, atLeast := c.Slowdown()
	about := fmt.Sprintf("about %.0fx", x)
	if atLeast {
		about = fmt.Sprintf("over %.0fx", x)
	}
	if m.Limit > 0 && x > m.Limit {
		return fmt.Sprintf("the exact source's probes slow the program down %s, beyond --max-slowdown %g "+
			"(%d calls probed in %.1f s of its CPU time, about %.1f µs each); "+LimitAdvice,
			about, m.Limit, c.Hits, c.CPU.Seconds(), float64(c.PerHit().Nanoseconds())/1e3), true
	}
	if m.told {
		return "", false
	}
	m.told = true
	limit := ""
	if m.Limit > 0 {
		limit = fmt.Sprintf(" (the recording stops beyond --max-slowdown %g)", m.Limit)
	}
	return fmt.Sprintf("exact: expected slowdown %s: %d calls probed in %.1f s of the program's CPU time, about %.1f µs each%s; "+
		"--probe-filter REGEX probes fewer functions", about, c.Hits, c.CPU.Seconds(), float64(c.PerHit().Nanoseconds())/1e3, limit), false
}
