package tuning

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind says what an event's sampling period counts.
type Kind uint8

const (
	// Time is a clock event (software cpu-clock or task-clock): the period is
	// nanoseconds of the program's CPU time.
	Time Kind = iota + 1
	// Count is any other event (hardware cycles, calls retired, raw codes):
	// the period is a number of occurrences.
	Count
)

func (k Kind) String() string {
	switch k {
	case Time:
		return "time"
	case Count:
		return "count"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Bounds are the periods a controller may choose for one kind of event,
// and where it starts when the caller names no period.
type Bounds struct {
	Min, Max uint64 // inclusive
	Start    uint64 // used by New when its start is 0
}

// Policy configures a Controller. DefaultPolicy gives the documented
// defaults; ParsePolicy changes the three a user is expected to change.
// Every share is a fraction (0.01 is 1%).
type Policy struct {
	// MinRepeat and MaxRepeat bound the share of samples whose top frame
	// repeats the previous sample's top frame on the same thread: below
	// MinRepeat the period shrinks, above MaxRepeat it grows (the CC-Map
	// paper's 1% and 15%). Steps aim at their geometric mean (3.9%), or
	// past it when they have only one measurement to go by.
	MinRepeat, MaxRepeat float64
	// MinSamples is how many samples an accuracy evaluation needs (the
	// paper evaluates "every 1000 samples"). 1000 samples put a share of
	// 4% within about ±1.2% (two standard deviations).
	MinSamples uint64
	// MaxLBROverlap is the largest share of a thread's LBR window that may
	// repeat entries of its previous window; above it samples are
	// redundant and the period grows. Only for observations with LBRPairs.
	MaxLBROverlap float64

	// Budget, when set, is a hard limit on what the profile's samples
	// may cost the program, as a share of its CPU time: the kernel's work
	// per sample (SampleCost each) plus hwprof's own work per sample
	// (draining, decoding and writing the records; Observation.SampleCPU).
	// hwprof's fixed CPU time (wakeups, timers, the runtime) is reported
	// but not budgeted: no period reduces it. --adaptive=MIN,MAX,BUDGET
	// sets it; see docs/adaptive-period.md.
	//
	// 0, the default, sets no budget: the samples may cost the program
	// what perf's default (PerfRate) would cost it, and no more. The
	// period is then never longer than perf's default period for a cost
	// perf's default would pay too, nor for accuracy (see Parity).
	Budget float64
	// PerfRate is perf's default rate, samples per second of CPU (4000,
	// `perf record -F 4000`), which the default (no Budget) compares
	// itself with: accuracy lengthens the period only down to this rate,
	// and the cost rule holds the samples to what this rate of perf's
	// costs the program.
	PerfRate float64
	// InterruptCost is what one sample costs the program in the kernel,
	// perf's and hwprof's alike (the interrupt, the callchain walk, the
	// copy into the ring), the common part against which hwprof's extra
	// work per sample is weighed. 15µs, measured on the 2-core VM hwprof
	// is developed on (docs/adaptive-period.md); where it is cheaper,
	// hwprof's extra weighs more than the default assumes.
	InterruptCost time.Duration
	// PerfSelfCost is perf record's own CPU time per sample (copying it
	// from the ring to the file): 0.5µs, within the noise of a
	// measurement that found 18,000 more samples changed perf's CPU time
	// by less than 40 ms.
	PerfSelfCost time.Duration
	// SampleCost is the program-side cost of one sample that a Budget
	// counts: interrupt, frame-pointer callchain and the copy into the
	// ring. 2.5µs.
	SampleCost time.Duration
	// SelfSampleCost is hwprof's CPU time per sample assumed until it is
	// known: from Observation.SampleCPU, or from a fit of SelfCPU once the
	// observations span a range of rates. 2µs, above the 1.2µs hwprof's
	// drain measures with a stack copy per sample, yet low enough that
	// the start at the rate cap stays inside the budget (3600 × 4.5µs =
	// 1.6%).
	SelfSampleCost time.Duration
	// MaxRate caps samples per second per CPU of program time, as does
	// Budget/SampleCost when a budget is set and lower (see RateCap).
	// Default 3600: the rate
	// at which hwprof's samples cost a program what perf's default 4000
	// do. hwprof's carry about 300 bytes more (the leaf frame's stack
	// copy and the activation key's registers), which cost a CPU-bound
	// program 1-1.5µs a sample more on the measured VM, where the
	// interrupt itself costs about 15µs; see docs/adaptive-period.md.
	MaxRate float64
	// MinRate is the fewest samples per second per CPU a profile should
	// have (100, a 10 ms timer); the period shrinks to keep it when the
	// program's CPU time is known. 0 turns the floor off.
	MinRate float64

	// Time and Count bound the period of each kind of event. Time
	// defaults to 10µs–8ms starting at 278µs, the rate cap (3597 Hz), so
	// a short program gets a profile that costs what perf's default does
	// (the rate cap makes 278µs the effective minimum too; 8ms keeps 125
	// samples/s, inside the rate floor's headroom); Count to 1000–10^9
	// starting at 100003.
	Time, Count Bounds

	// MaxStep caps one accuracy change: the period moves by at most this
	// factor either way (8).
	MaxStep float64
	// BackOff multiplies the period when the kernel throttles or loses
	// samples (2); the rate at which that happened, divided by BackOff,
	// becomes a cap for the rest of the recording.
	BackOff float64
	// Headroom is how far inside a cost limit a change aims (0.2: 80% of
	// the budget, 120% of the rate floor), so noise does not trip the
	// limit again.
	Headroom float64
	// MinChange is the smallest relative change worth making (0.2): the
	// band is a factor of 15 wide in share, and creeping towards a limit
	// in small steps buys nothing.
	MinChange float64

	// DeadBand (0.25) sets the hysteresis around the repetition band: a
	// settled period moves only when the share falls below
	// MinRepeat×(1−DeadBand) or rises above MaxRepeat×(1+DeadBand), while
	// a run of changes goes on until the share is inside
	// MinRepeat×(1+DeadBand)–MaxRepeat×(1−DeadBand). The LBR overlap
	// triggers above MaxLBROverlap×(1+DeadBand).
	DeadBand float64
	// Hold is how many accuracy evaluations after a change may not reverse
	// it (1: the first evaluation after a change cannot undo it, the
	// second can).
	Hold int
	// MinWindow is the shortest stretch of recording the cost rules judge
	// (100ms); they also need 10ms of the program's CPU time.
	MinWindow time.Duration
}

// DefaultPolicy returns the documented defaults (see the field comments
// and docs/adaptive-period.md for why): no hard budget, the cost held to
// perf's default's.
func DefaultPolicy() Policy {
	return Policy{
		MinRepeat:      0.01,
		MaxRepeat:      0.15,
		MinSamples:     1000,
		MaxLBROverlap:  0.25,
		PerfRate:       4000,
		InterruptCost:  15 * time.Microsecond,
		PerfSelfCost:   500 * time.Nanosecond,
		SampleCost:     2500 * time.Nanosecond,
		SelfSampleCost: 2000 * time.Nanosecond,
		MaxRate:        3600,
		MinRate:        100,
		Time:           Bounds{Min: 10_000, Max: 8_000_000, Start: 278_000},
		Count:          Bounds{Min: 1000, Max: 1_000_000_000, Start: 100_003},
		MaxStep:        8,
		BackOff:        2,
		Headroom:       0.2,
		MinChange:      0.2,
		DeadBand:       0.25,
		Hold:           1,
		MinWindow:      100 * time.Millisecond,
	}
}

// Bounds returns the bounds for events of kind k.
func (p Policy) Bounds(k Kind) Bounds {
	if k == Time {
		return p.Time
	}
	return p.Count
}

// Parity reports whether the policy holds the cost to perf's default's
// (no Budget) rather than to a budget.
func (p Policy) Parity() bool { return p.Budget == 0 }

// RateCap returns the samples per second per CPU the policy allows: the
// lower of MaxRate (when set) and, with a budget, what the budget pays
// for in the kernel alone, Budget/SampleCost (+Inf when neither limits).
// A budget lowered by the user lowers the cap; a raised one does not lift
// it over MaxRate.
func (p Policy) RateCap() float64 {
	r := math.Inf(1)
	if p.MaxRate > 0 {
		r = p.MaxRate
	}
	if p.SampleCost > 0 && !p.Parity() {
		r = min(r, p.Budget/p.SampleCost.Seconds())
	}
	return r
}

// Validate reports the first setting that makes no sense.
func (p Policy) Validate() error {
	switch {
	case !(p.MinRepeat > 0 && p.MinRepeat < p.MaxRepeat && p.MaxRepeat < 1):
		return fmt.Errorf("repetition shares must satisfy 0 < min < max < 100%%, have %s and %s", pct(p.MinRepeat), pct(p.MaxRepeat))
	case p.MinSamples == 0:
		return errors.New("MinSamples must be at least 1")
	case !(p.MaxLBROverlap > 0 && p.MaxLBROverlap < 1):
		return fmt.Errorf("MaxLBROverlap must be between 0 and 100%%, have %s", pct(p.MaxLBROverlap))
	case !(p.Budget >= 0 && p.Budget < 1):
		return fmt.Errorf("budget must be between 0 and 100%%, have %s", pct(p.Budget))
	case p.SampleCost < 0 || p.SelfSampleCost < 0 || p.MaxRate < 0 || p.MinRate < 0 || p.PerfSelfCost < 0:
		return errors.New("SampleCost, SelfSampleCost, PerfSelfCost, MaxRate and MinRate must not be negative")
	case p.Parity() && !(p.PerfRate > 0 && p.InterruptCost > 0 && p.MaxRate > 0):
		return errors.New("without a budget, PerfRate, InterruptCost and MaxRate must be positive")
	case !(p.MaxStep > 1 && p.BackOff > 1):
		return errors.New("MaxStep and BackOff must be greater than 1")
	case !(p.Headroom >= 0 && p.Headroom < 1 && p.DeadBand >= 0 && p.DeadBand < 1):
		return errors.New("Headroom and DeadBand must be in [0, 1)")
	case p.MinChange < 0 || p.Hold < 0 || p.MinWindow < 0:
		return errors.New("MinChange, Hold and MinWindow must not be negative")
	case p.MinRate > 0 && p.MinRate*(1+p.Headroom) >= p.RateCap()*(1-p.Headroom):
		return fmt.Errorf("rate floor %g samples/s per CPU leaves no room under the budget's %g", p.MinRate, p.RateCap())
	}
	for _, k := range []Kind{Time, Count} {
		b := p.Bounds(k)
		if b.Min == 0 || b.Min >= b.Max || (b.Start != 0 && (b.Start < b.Min || b.Start > b.Max)) {
			return fmt.Errorf("%s bounds need 0 < min < max and start within, have %d–%d start %d", k, b.Min, b.Max, b.Start)
		}
		if k == Count && nextPrime(b.Min) > prevPrime(b.Max) {
			return fmt.Errorf("count bounds %d–%d hold no prime", b.Min, b.Max)
		}
	}
	return nil
}

// String formats the policy's user-facing settings as ParsePolicy reads
// them: "min,max,budget", e.g. "1%,15%,2%", or "min,max" without a
// budget ("1%,15%").
func (p Policy) String() string {
	s := exactPct(p.MinRepeat) + "," + exactPct(p.MaxRepeat)
	if p.Parity() {
		return s
	}
	return s + "," + exactPct(p.Budget)
}

// exactPct writes a share as a percentage with the fewest digits (three at
// least) that parseShare reads back as the same share, so that a policy's
// String parses to the same policy: 1% stays "1%", and a share between two
// three-digit percentages (0.01001) is not rounded onto its neighbour.
func exactPct(v float64) string {
	for prec := 3; prec < 17; prec++ {
		s := strconv.FormatFloat(v*100, 'g', prec, 64) + "%"
		if back, err := parseShare(s); err == nil && back == v {
			return s
		}
	}
	return strconv.FormatFloat(v*100, 'g', -1, 64) + "%"
}

// ParsePolicy reads the value of --adaptive=min,max,budget: the repetition
// band and the cost budget, each a percentage ("1%") or a fraction
// ("0.01"). Empty or missing fields keep DefaultPolicy's value, so "",
// ",20%" and "0.5%,10%,2%" are all valid; without a budget the cost is
// held to perf's default's (Policy.Budget). The result is validated.
func ParsePolicy(s string) (Policy, error) {
	p := DefaultPolicy()
	fields := strings.Split(s, ",")
	if len(fields) > 3 {
		return p, fmt.Errorf("adaptive policy %q: want min,max,budget, have %d fields", s, len(fields))
	}
	dst := []*float64{&p.MinRepeat, &p.MaxRepeat, &p.Budget}
	names := []string{"min", "max", "budget"}
	for i, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := parseShare(f)
		if err != nil {
			return p, fmt.Errorf("adaptive policy %q: %s: %w", s, names[i], err)
		}
		*dst[i] = v
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("adaptive policy %q: %w", s, err)
	}
	return p, nil
}

// parseShare reads "1.5%" as 0.015 and "0.015" as 0.015.
func parseShare(f string) (float64, error) {
	num, percent := strings.CutSuffix(f, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", f)
	}
	if percent {
		v /= 100
	}
	if v <= 0 || v >= 1 {
		return 0, fmt.Errorf("%q is not a share between 0 and 100%% (write percentages with %%)", f)
	}
	return v, nil
}

// pct formats a share as a percentage with up to three significant digits.
func pct(v float64) string {
	return strconv.FormatFloat(v*100, 'g', 3, 64) + "%"
}
