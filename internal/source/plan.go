package source

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
)

// Default periods. All are primes, so a period cannot stay in phase with a
// loop whose trip count or call count is a round or power-of-two number:
// the LBR estimator (package lbr) is unbiased only in expectation over a
// phase that is random relative to the program, and a prime period breaks
// the usual aliasing patterns.
const (
	// LBRCallPeriod samples every 100003rd retired call, the magnitude
	// perf's Intel tables suggest for BR_INST_RETIRED.NEAR_CALL
	// (SampleAfterValue 100003 on Haswell, 100007 from Skylake on). At
	// 500 M calls/s on one core (a tight loop of tiny calls) that is
	// 5000 samples/s, each carrying up to 32 call edges, and keeps the
	// interrupt cost around 1-2% of the core.
	LBRCallPeriod = 100003
	// LBRCyclePeriod samples every 1000003rd cycle where no calls event is
	// known: about 3000 samples/s on a 3 GHz core, near perf's default
	// 4000 Hz.
	LBRCyclePeriod = 1000003
	// CallsPeriod samples every 10007th retired call: a calls sample holds
	// one edge instead of up to 32, so it samples ten times more often than
	// lbr (5000 samples/s at 50 M calls/s).
	CallsPeriod = 10007
)

// SaveTypeKernel is the first kernel with PERF_SAMPLE_BRANCH_TYPE_SAVE
// (Linux 4.14, "perf/core: Define the common branch type classification").
var SaveTypeKernel = [2]int{4, 14}

// Setup is what recording with a source means: the perf record options it
// stands for, which BuildAttrs turns into attrs.
type Setup struct {
	Source Source
	Config event.RecordConfig // Events, Period, CallGraph, BranchFilter set
	// Event says which event was chosen and why, for the user; Name is
	// the event's short name, for one-line notes.
	Event, Name string
	// PerfArgs are the equivalent `perf record` options (event in perf's
	// raw syntax, so perf takes them on any machine).
	PerfArgs []string
}

// Plan returns the recording setup of source s on the machine f describes.
// It does not judge whether s works there (Assess does); it needs the CPU
// model (f.CPU) for the hardware sources. Exact is set up by the uprobe
// recorder, not here: Plan returns an error for it.
func Plan(s Source, f Facts) (Setup, error) {
	switch s {
	case LBR, Calls:
		return planHardware(s, f)
	case Timer:
		cfg := event.RecordConfig{Events: []string{"cpu-clock"}, CallGraph: "fp"}
		return Setup{Source: s, Config: cfg, Event: "cpu-clock (software timer)", Name: "cpu-clock",
			PerfArgs: []string{"-e", "cpu-clock", "-g"}}, nil
	case Exact:
		return Setup{}, fmt.Errorf("source exact: set up by the uprobe recorder, not by an event list")
	}
	return Setup{}, fmt.Errorf("unknown source %v", s)
}

func planHardware(s Source, f Facts) (Setup, error) {
	pmu := "cpu"
	if p := f.CPUPMU(); p != nil {
		pmu = p.Name
	}
	ev, ok := event.NearCallEvent(f.CPU, pmu)
	var spec, raw, why, name string
	mods := "u"
	if s == Calls {
		mods += strings.Repeat("p", callsPrecise(f, ev, ok))
	}
	switch {
	case ok:
		spec, raw, name = ev.Spec(pmu, mods), ev.Raw(mods), ev.Name
		why = fmt.Sprintf("%s (event=%#x,umask=%#x) from perf's %s table for %s", ev.Name, ev.Event, ev.UMask, ev.Table, f.CPU)
	case s == Calls:
		return Setup{}, fmt.Errorf("source calls: no calls-retired event known for CPU %s "+
			"(hwprof knows BR_INST_RETIRED.NEAR_CALL of Intel sandybridge, haswell, skylake, cascadelakex, icelake, sapphirerapids, alderlake); "+
			"give the event with -e", cpuLabel(f))
	default:
		spec, raw, name = "cycles:"+mods, "cycles:"+mods, "cycles"
		why = fmt.Sprintf("cycles: no calls-retired event known for CPU %s, so LBR windows are sampled by time and only their shares are meaningful", cpuLabel(f))
	}
	cfg := event.RecordConfig{Events: []string{spec}, CallGraph: "fp", PMUs: f.PMUs}
	args := []string{"-e", raw}
	switch s {
	case LBR:
		cfg.Period = LBRCallPeriod
		if !ok {
			cfg.Period = LBRCyclePeriod
		}
		cfg.BranchFilter = "any_call,u"
		if f.KernelAtLeast(SaveTypeKernel) {
			cfg.BranchFilter += ",save_type"
		}
		args = append(args, "-c", strconv.FormatUint(cfg.Period, 10), "-j", cfg.BranchFilter, "-g")
	case Calls:
		cfg.Period = CallsPeriod
		args = append(args, "-c", strconv.FormatUint(cfg.Period, 10), "-g")
	}
	return Setup{Source: s, Config: cfg, Event: why, Name: name, PerfArgs: args}, nil
}

// callsPrecise is the precise level of the calls source: 2 (the eventing
// IP, the call instruction itself; see lbr/calls.go) where the PMU allows
// it, as its caps/max_precise says; without that file 2 when the event is
// PEBS-capable per perf's table.
func callsPrecise(f Facts, ev event.CallsEvent, known bool) int {
	want := 2
	if known && ev.PEBS == 0 {
		return 0
	}
	if p := f.CPUPMU(); p != nil {
		if s, ok := p.Caps["max_precise"]; ok {
			if n, err := strconv.Atoi(s); err == nil {
				return min(want, n)
			}
		}
	}
	return want
}

func cpuLabel(f Facts) string {
	if f.CPU.Vendor == "" {
		if f.CPUErr != nil {
			return fmt.Sprintf("(unknown: %v)", f.CPUErr)
		}
		return "(unknown)"
	}
	return f.CPU.String()
}

// KernelAtLeast reports whether the kernel release f.Kernel ("6.18.0-...")
// is at least v (major, minor). An unreadable release counts as new.
func (f *Facts) KernelAtLeast(v [2]int) bool {
	maj, min, ok := parseRelease(f.Kernel)
	if !ok {
		return true
	}
	return maj > v[0] || maj == v[0] && min >= v[1]
}

func parseRelease(r string) (int, int, bool) {
	parts := strings.SplitN(r, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(parts[0])
	minStr := parts[1]
	if i := strings.IndexFunc(minStr, func(c rune) bool { return c < '0' || c > '9' }); i >= 0 {
		minStr = minStr[:i]
	}
	min, err2 := strconv.Atoi(minStr)
	return maj, min, err1 == nil && err2 == nil
}

// LeafStackBytes is how much of the user stack a sample of a
// frame-pointer source copies, with the user IP, SP and BP
// (LeafRegsUser), so that the unwinder can restore the caller of a
// function sampled before its frame is set up (unwind.RepairCallchain):
// the return address sits at CFA-8 and, in a function without its frame,
// the CFA is SP plus what the function has pushed and reserved (at most
// six callee-saved registers and, past the red zone, its locals).
// (--leaf-copy sets the size.) Why 128, and what the bytes cost a sample,
// was measured: docs/RECORDING.md, "The leaf frame's stack copy".
const LeafStackBytes = 128

// LeafRegsUser is the user-register mask sampled with the stack copy: IP,
// SP and BP for the leaf repair, and the other callee-saved registers
// (rbx, r12-r15) for the adaptive period's activation key
// (tuning.ActivationKey), 64 bytes a sample in all (a tuned event adds
// the caller-saved registers for the key: record.ScratchRegsUser).
const LeafRegsUser uint64 = 1<<perf.RegIP | 1<<perf.RegSP | 1<<perf.RegBP |
	1<<perf.RegBX | 1<<(perf.RegR8+4) | 1<<(perf.RegR8+5) | 1<<(perf.RegR8+6) | 1<<(perf.RegR8+7)

// MaxLeafStackBytes is the largest stack copy hwprof record --leaf-copy
// takes. The kernel refuses 65535 bytes and more, and cuts a copy to what
// fits in a 64 KiB sample with its other fields.
const MaxLeafStackBytes = 32768

// AddLeafCopy adds the user registers and a stack copy of stackBytes
// (LeafStackBytes by default; a multiple of 8) for the leaf repair
// (LeafRegsUser) to every event that takes it (TakesLeafCopy), whatever
// chose the event: a sample source or perf's -e with -g. stackBytes 0
// adds nothing.
func AddLeafCopy(events []perf.Event, stackBytes int) {
	if stackBytes <= 0 {
		return
	}
	for i := range events {
		a := &events[i].Attr
		if !TakesLeafCopy(a) {
			continue
		}
		a.SampleType |= perf.SampleRegsUser | perf.SampleStackUser
		a.SampleRegsUser = LeafRegsUser
		a.SampleStackUser = uint32(stackBytes)
	}
}

// TakesLeafCopy reports whether an event's samples would get the leaf
// repair's stack copy: it samples a frame-pointer callchain with user
// frames and copies no stack or user registers yet. Other events
// (--call-graph dwarf, which copies its own, or lbr; kernel-only events;
// no call graph) do not.
func TakesLeafCopy(a *perf.Attr) bool {
	return a.SampleType&perf.SampleCallchain != 0 && a.SampleType&(perf.SampleStackUser|perf.SampleRegsUser) == 0 &&
		!a.Flags.Has(perf.FlagExcludeUser) && !a.Flags.Has(perf.FlagExcludeCallchainUser) &&
		(a.SampleType&perf.SampleBranchStack == 0 || a.BranchSampleType&perf.BranchCallStack == 0)
}
