package profile

import (
	"os"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// eventSource is how the samples of one event are folded.
type eventSource uint8

const (
	// srcTimer: sampled stacks weighted by period (cpu-clock, task-clock,
	// and any other sampling event without call semantics).
	srcTimer eventSource = iota
	// srcLBR: a branch stack of recent branches (not call-stack mode):
	// call edges estimated from it, plus the sampled stack.
	srcLBR
	// srcCalls: a hardware calls-retired event without a branch stack.
	// Its samples are folded as stacks (see Load's doc).
	srcCalls
	// srcExact: a uprobe at a function entry: every sample is one call.
	srcExact
)

func (s eventSource) String() string {
	switch s {
	case srcLBR:
		return "lbr"
	case srcCalls:
		return "calls"
	case srcExact:
		return "exact"
	}
	return "timer"
}

// classify decides each event's source from its attr: the uprobe PMU's
// type (from the recording's PMU mappings, else this machine's sysfs) means
// exact; a branch stack outside LBR call-stack mode means lbr; a hardware
// or raw event whose name says it counts calls means calls; everything
// else (cpu-clock, task-clock, cycles...) is stack sampling, timer.
func classify(attrs []perfdata.EventAttr, ff *perfdata.FileFeatures) []eventSource {
	uprobeType, haveUprobe := uprobePMUType(ff)
	out := make([]eventSource, len(attrs))
	for i := range attrs {
		a := &attrs[i].Attr
		switch {
		case haveUprobe && a.Type == uprobeType:
			out[i] = srcExact
		case a.SampleType&perf.SampleBranchStack != 0 && a.BranchSampleType&perf.BranchCallStack == 0:
			out[i] = srcLBR
		case isCallsEvent(a, attrs[i].Name):
			out[i] = srcCalls
		default:
			out[i] = srcTimer
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
	b, err := os.ReadFile(perf.SysfsPMURoot + "/uprobe/type")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil || n <= uint64(perf.TypeBreakpoint) {
		return 0, false
	}
	return perf.EventType(n), true
}

// sourceName is the recording's source: the one source of all its
// sampling events, or "mixed".
func sourceName(srcs []eventSource, used []bool) string {
	name := ""
	for i, s := range srcs {
		if !used[i] {
			continue
		}
		if name == "" {
			name = s.String()
		} else if name != s.String() {
			return "mixed"
		}
	}
	if name == "" {
		// no samples: name it by the events
		for _, s := range srcs {
			if name == "" {
				name = s.String()
			} else if name != s.String() {
				return "mixed"
			}
		}
	}
	if name == "" {
		name = "timer"
	}
	return name
}
