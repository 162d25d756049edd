package perfdata

import (
	"fmt"

	"github.com/hwprof/hwprof/perf"
)

// Event names as perf prints them, from tools/perf/util/evsel.c
// (evsel__hw_names, evsel__sw_names).
var (
	hwEventNames = [...]string{
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles",
	}
	swEventNames = [...]string{
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
		"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
	}
)

// DefaultEventName returns the name perf gives an attr that was not named
// on the command line: "cycles", "cpu-clock", "r1c4", with perf's ":u"/":k"
// and precision modifiers. Events of dynamic PMUs get
// "pmu<type>/config=0x.../".
func DefaultEventName(a *perf.Attr) string {
	var base string
	switch {
	case a.Type == perf.TypeHardware && a.Config < uint64(len(hwEventNames)):
		base = hwEventNames[a.Config]
	case a.Type == perf.TypeSoftware && a.Config < uint64(len(swEventNames)):
		base = swEventNames[a.Config]
	case a.Type == perf.TypeRaw:
		base = fmt.Sprintf("r%x", a.Config)
	case a.Type == perf.TypeBreakpoint:
		base = fmt.Sprintf("mem:%#x", a.Config1)
	default:
		base = fmt.Sprintf("pmu%d/config=%#x/", uint32(a.Type), a.Config)
	}
	return base + modifiers(a)
}

// modifiers mirrors the privilege and precision part of perf's
// evsel__add_modifiers.
func modifiers(a *perf.Attr) string {
	eu := a.Flags.Has(perf.FlagExcludeUser)
	ek := a.Flags.Has(perf.FlagExcludeKernel)
	eh := a.Flags.Has(perf.FlagExcludeHV)
	m := ""
	if ek || eu || eh {
		if !eu {
			m += "u"
		}
		if !ek {
			m += "k"
		}
		if !eh {
			m += "h"
		}
	}
	for range a.PreciseIP {
		m += "p"
	}
	if m == "" {
		return ""
	}
	return ":" + m
}
