package event

import (
	"fmt"
	"strconv"
	"strings"
)

// CPUID names a processor model the way perf's event tables do
// (tools/perf/pmu-events/arch/x86/mapfile.csv: "GenuineIntel-6-55-4",
// vendor, family, model and stepping from /proc/cpuinfo).
type CPUID struct {
	Vendor   string // vendor_id: "GenuineIntel", "AuthenticAMD"
	Family   int    // cpu family
	Model    int    // model
	Stepping int    // stepping (-1 when unknown)
}

func (c CPUID) String() string {
	s := fmt.Sprintf("%s-%d-%X", c.Vendor, c.Family, c.Model)
	if c.Stepping >= 0 {
		s += fmt.Sprintf("-%X", c.Stepping)
	}
	return s
}

// ParseCPUInfo reads the first processor's vendor_id, cpu family, model and
// stepping from the text of /proc/cpuinfo.
func ParseCPUInfo(text string) (CPUID, error) {
	c := CPUID{Stepping: -1}
	seen := 0
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			if strings.TrimSpace(line) == "" && seen > 0 {
				break // end of the first processor's block
			}
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		num := func() (int, bool) {
			n, err := strconv.Atoi(v)
			return n, err == nil
		}
		switch k {
		case "vendor_id":
			c.Vendor, seen = v, seen|1
		case "cpu family":
			if n, ok := num(); ok {
				c.Family, seen = n, seen|2
			}
		case "model":
			if n, ok := num(); ok {
				c.Model, seen = n, seen|4
			}
		case "stepping":
			if n, ok := num(); ok {
				c.Stepping = n
			}
		}
	}
	if seen != 7 {
		return c, fmt.Errorf("cpuinfo: no vendor_id, cpu family and model lines (x86 only)")
	}
	return c, nil
}

// CallsEvent is a hardware event counting retired near call instructions,
// as perf's event tables list it for one CPU model.
type CallsEvent struct {
	Table string // perf's table directory: "skylake", "alderlake", ...
	PMU   string // the PMU it belongs to: "cpu", or "cpu_core"/"cpu_atom" on hybrid parts
	Name  string // perf's event name, e.g. "BR_INST_RETIRED.NEAR_CALL"
	Event uint8  // EventCode
	UMask uint8  // UMask
	// PEBS is the table's PEBS field: 1 = the event can be sampled
	// precisely (precise_ip >= 1), 0 = not at all.
	PEBS int
}

// Spec returns the event in perf's syntax on PMU pmu ("" means e.PMU),
// named hwprof_calls, with the modifiers mods (e.g. "u" or "upp").
func (e CallsEvent) Spec(pmu, mods string) string {
	if pmu == "" {
		pmu = e.PMU
	}
	s := fmt.Sprintf("%s/event=%#x,umask=%#x,name=%s/", pmu, e.Event, e.UMask, CallsEventName)
	return s + mods
}

// Raw returns the event as perf's rUUEE raw syntax with modifiers: what
// `perf record` accepts for it on any machine (no sysfs PMU needed).
func (e CallsEvent) Raw(mods string) string {
	s := fmt.Sprintf("r%02x%02x", e.UMask, e.Event)
	if mods != "" {
		s += ":" + mods
	}
	return s
}

// CallsEventName is the name hwprof gives the calls-retired event in its
// recordings.
const CallsEventName = "hwprof_calls"

// intelCallModel maps a set of family-6 Intel models onto the encoding of
// BR_INST_RETIRED.NEAR_CALL in perf's table for them.
type intelCallModel struct {
	table       string
	models      []int
	minStepping int          // the table applies from this stepping on (mapfile's "-[5-F]" suffix)
	events      []CallsEvent // per PMU
}

// intelNearCall lists BR_INST_RETIRED.NEAR_CALL per model, read from the
// Linux sources: tools/perf/pmu-events/arch/x86/mapfile.csv maps
// "GenuineIntel-6-<model>" to a table directory, and
// tools/perf/pmu-events/arch/x86/<table>/pipeline.json gives the event:
//
//	sandybridge     (6-2A)                   EventCode 0xC4 UMask 0x2  PEBS 1  SampleAfterValue 100007
//	haswell         (6-3C,45,46)             EventCode 0xC4 UMask 0x2  PEBS 1  SampleAfterValue 100003
//	skylake         (6-4E,5E,8E,9E,A5,A6)    EventCode 0xC4 UMask 0x2  PEBS 1  SampleAfterValue 100007
//	icelake         (6-7D,7E)                EventCode 0xc4 UMask 0x2  PEBS 1  SampleAfterValue 100007
//	cascadelakex    (6-55-[5-F])             EventCode 0xC4 UMask 0x2  PEBS 1  SampleAfterValue 100007
//	sapphirerapids  (6-8F)                   EventCode 0xc4 UMask 0x2  PEBS 1  SampleAfterValue 100007
//	alderlake       (6-97,9A,B7,BA,BF)       cpu_core: EventCode 0xc4 UMask 0x2  PEBS 1
//	                                         cpu_atom: EventCode 0xc4 UMask 0xf9 PEBS 1
//
// Only models whose table was read are listed; others fall back to cycles
// (see NearCallEvent). The tables' SampleAfterValue is not used: hwprof
// chooses its own period.
var intelNearCall = []intelCallModel{
	{"sandybridge", []int{0x2A}, 0, []CallsEvent{{PMU: "cpu", Event: 0xc4, UMask: 0x02, PEBS: 1}}},
	{"haswell", []int{0x3C, 0x45, 0x46}, 0, []CallsEvent{{PMU: "cpu", Event: 0xc4, UMask: 0x02, PEBS: 1}}},
	{"skylake", []int{0x4E, 0x5E, 0x8E, 0x9E, 0xA5, 0xA6}, 0, []CallsEvent{{PMU: "cpu", Event: 0xc4, UMask: 0x02, PEBS: 1}}},
	{"cascadelakex", []int{0x55}, 5, []CallsEvent{{PMU: "cpu", Event: 0xc4, UMask: 0x02, PEBS: 1}}},
	{"icelake", []int{0x7D, 0x7E}, 0, []CallsEvent{{PMU: "cpu", Event: 0xc4, UMask: 0x02, PEBS: 1}}},
	{"sapphirerapids", []int{0x8F}, 0, []CallsEvent{{PMU: "cpu", Event: 0xc4, UMask: 0x02, PEBS: 1}}},
	{"alderlake", []int{0x97, 0x9A, 0xB7, 0xBA, 0xBF}, 0, []CallsEvent{
		{PMU: "cpu_core", Event: 0xc4, UMask: 0x02, PEBS: 1},
		{PMU: "cpu_atom", Event: 0xc4, UMask: 0xf9, PEBS: 1},
	}},
}

// NearCallEvent returns the calls-retired event (BR_INST_RETIRED.NEAR_CALL)
// of the CPU model id on PMU pmu ("cpu", or "cpu_core"/"cpu_atom" on hybrid
// parts; "" = the model's first PMU), and false when perf's tables as
// hwprof knows them have none for it (not Intel, or a model not in
// intelNearCall).
func NearCallEvent(id CPUID, pmu string) (CallsEvent, bool) {
	if id.Vendor != "GenuineIntel" || id.Family != 6 {
		return CallsEvent{}, false
	}
	for _, m := range intelNearCall {
		for _, model := range m.models {
			if model != id.Model || m.minStepping > 0 && id.Stepping < m.minStepping {
				continue
			}
			for _, e := range m.events {
				if pmu == "" || e.PMU == pmu {
					e.Table, e.Name = m.table, "BR_INST_RETIRED.NEAR_CALL"
					return e, true
				}
			}
			return CallsEvent{}, false
		}
	}
	return CallsEvent{}, false
}

// ParseCPUID reads a CPU id in perf's mapfile form, "GenuineIntel-6-5E" or
// "GenuineIntel-6-55-7" (family decimal, model and stepping hex).
func ParseCPUID(s string) (CPUID, error) {
	parts := strings.Split(s, "-")
	if len(parts) < 3 || len(parts) > 4 || parts[0] == "" {
		return CPUID{}, fmt.Errorf("cpu id %q: want VENDOR-FAMILY-MODEL[-STEPPING], e.g. GenuineIntel-6-5E", s)
	}
	c := CPUID{Vendor: parts[0], Stepping: -1}
	fam, err1 := strconv.ParseUint(parts[1], 10, 16)
	model, err2 := strconv.ParseUint(parts[2], 16, 16)
	if err1 != nil || err2 != nil {
		return CPUID{}, fmt.Errorf("cpu id %q: family is decimal, model hexadecimal (GenuineIntel-6-5E)", s)
	}
	c.Family, c.Model = int(fam), int(model)
	if len(parts) == 4 {
		st, err := strconv.ParseUint(parts[3], 16, 8)
		if err != nil {
			return CPUID{}, fmt.Errorf("cpu id %q: bad stepping %q", s, parts[3])
		}
		c.Stepping = int(st)
	}
	return c, nil
}
