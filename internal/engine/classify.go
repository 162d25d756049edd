package engine

import (
	"strings"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
)

// classify decides each event's source from its attr: the uprobe PMU's
// type (from the recording's PMU mappings, else this machine's sysfs) means
// exact; a branch stack outside LBR call-stack mode means lbr; a hardware
// or raw event whose name says it counts calls means calls; everything
// else (cpu-clock, task-clock, cycles...) is stack sampling, timer.
func classify(attrs []perfdata.EventAttr, ff *perfdata.FileFeatures) []profile.Source {
	uprobeType, haveUprobe := uprobePMUType(ff)
	out := make([]profile.Source, len(attrs))
	for i := range attrs {
		a := &attrs[i].Attr
		switch {
		case haveUprobe && a.Type == uprobeType:
			out[i] = profile.Exact
		case a.SampleType&perf.SampleBranchStack != 0 && a.BranchSampleType&perf.BranchCallStack == 0:
			out[i] = profile.LBR
		case isCallsEvent(a, attrs[i].Name):
			out[i] = profile.Calls
		default:
			out[i] = profile.Timer
		}
	}
	return out
}

// isCallsEvent reports whether a hardware event counts calls: the generic
// branch events do not; raw and PMU events named after calls do (perf's
// names for BR_INST_RETIRED.NEAR_CALL contain "call").
func isCallsEvent(a *perf.Attr, name string) bool {
	if a.Type == perf.TypeSoftware || a.Type == perf.TypeTracepoint || a.Type == perf.TypeBreakpoint {
		return false
	}
	return strings.Contains(strings.ToLower(name), "call")
}

// uprobePMUType finds the uprobe PMU's type number: from the recording's
// PMU mappings when it has them, else from this machine's sysfs (right for
// recordings made here; the number is assigned at boot).
func uprobePMUType(ff *perfdata.FileFeatures) (perf.EventType, bool) {
	if ff != nil {
		for _, m := range ff.PMUMappings {
			if m.Name == "uprobe" {
				return perf.EventType(m.Type), true
			}
		}
	}
	t, err := event.PMUType("uprobe")
	if err != nil || t <= perf.TypeBreakpoint {
		return 0, false
	}
	return t, true
}

// recordingSource is the recording's source: the one source of all its
// events that gave samples, or Mixed; with no samples, that of all its
// events; Timer when it has none.
func recordingSource(srcs []profile.Source, used []bool) profile.Source {
	if src, ok := oneSource(srcs, used); ok {
		return src
	}
	src, _ := oneSource(srcs, nil)
	return src
}

// oneSource is the one source of the events used (all when used is nil),
// Mixed when they have several; false when there is none.
func oneSource(srcs []profile.Source, used []bool) (profile.Source, bool) {
	var src profile.Source
	found := false
	for i, s := range srcs {
		if used != nil && !used[i] {
			continue
		}
		if found && s != src {
			return profile.Mixed, true
		}
		src, found = s, true
	}
	return src, found
}
