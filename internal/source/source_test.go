package source

import (
	"errors"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
)

func pmus(names ...string) map[string]*event.PMU {
	m := map[string]*event.PMU{}
	for i, n := range names {
		m[n] = &event.PMU{Name: n, Type: perf.EventType(i + 1), Caps: map[string]string{}}
	}
	return m
}

func withLBR(m map[string]*event.PMU, name string, depth string) map[string]*event.PMU {
	m[name].Caps["branches"] = depth
	m[name].Caps["pmu_name"] = "skylake"
	return m
}

func TestAssess(t *testing.T) {
	vm := pmus("software", "tracepoint", "uprobe", "breakpoint")
	intel := withLBR(pmus("cpu", "software", "uprobe"), "cpu", "32")
	hybrid := withLBR(pmus("cpu_core", "cpu_atom", "software", "uprobe"), "cpu_core", "32")
	noLBR := pmus("cpu", "software", "uprobe")
	skl, _ := event.ParseCPUID("GenuineIntel-6-5E")
	amd, _ := event.ParseCPUID("AuthenticAMD-25-61")
	adl, _ := event.ParseCPUID("GenuineIntel-6-97")
	rootTracefs := errors.New("uprobe: tracefs at /sys/kernel/tracing lets only root define uprobes")
	for _, tc := range []struct {
		name  string
		facts Facts
		ok    map[Source]bool
		why   map[Source]string // substrings of Why
		pick  Source
	}{
		{"vm as root", Facts{PMUs: vm, Paranoid: 2, Root: true},
			map[Source]bool{LBR: false, Calls: false, Timer: true, Exact: true},
			map[Source]string{LBR: "no 'cpu' PMU", Calls: "no hardware PMU"}, Timer},
		{"intel bare metal", Facts{PMUs: intel, Paranoid: 2, Root: true, CPU: skl},
			map[Source]bool{LBR: true, Calls: true, Timer: true, Exact: true},
			map[Source]string{LBR: "32 entries"}, LBR},
		{"hybrid intel", Facts{PMUs: hybrid, Paranoid: 2, Root: true, CPU: adl},
			map[Source]bool{LBR: true, Calls: true, Timer: true, Exact: true},
			map[Source]string{LBR: "cpu_core"}, LBR},
		{"pmu without lbr", Facts{PMUs: noLBR, Paranoid: 2, Root: true, CPU: skl},
			map[Source]bool{LBR: false, Calls: true, Timer: true, Exact: true},
			map[Source]string{LBR: "caps/branches"}, Calls},
		{"user at paranoid 2, tracefs root's", Facts{PMUs: intel, Paranoid: 2, CPU: skl, TracefsErr: rootTracefs},
			map[Source]bool{LBR: true, Calls: true, Timer: true, Exact: false},
			map[Source]string{Exact: "only root"}, LBR},
		{"user at paranoid 2, tracefs granted", Facts{PMUs: vm, Paranoid: 2},
			map[Source]bool{LBR: false, Calls: false, Timer: true, Exact: true},
			nil, Timer},
		{"user at paranoid -1, tracefs root's", Facts{PMUs: vm, Paranoid: -1, TracefsErr: rootTracefs},
			map[Source]bool{LBR: false, Calls: false, Timer: true, Exact: false},
			map[Source]string{Exact: "only root"}, Timer},
		{"user at paranoid 1", Facts{PMUs: vm, Paranoid: 1},
			map[Source]bool{LBR: false, Calls: false, Timer: true, Exact: true}, nil, Timer},
		{"pmu without lbr, unknown model", Facts{PMUs: noLBR, Paranoid: 2, Root: true, CPU: amd},
			map[Source]bool{LBR: false, Calls: false, Timer: true, Exact: true},
			map[Source]string{Calls: "no calls-retired event is known for CPU AuthenticAMD-25-61"}, Timer},
		{"user at paranoid 3", Facts{PMUs: intel, Paranoid: 3},
			map[Source]bool{LBR: false, Calls: false, Timer: false, Exact: false},
			map[Source]string{Timer: "perf_event_paranoid is 3"}, Timer},
		{"perfmon capability at paranoid 3", Facts{PMUs: intel, Paranoid: 3, CapPerfmon: true, CPU: skl},
			map[Source]bool{LBR: true, Calls: true, Timer: true, Exact: true}, nil, LBR},
		{"no perf events", Facts{PMUs: vm, ParanoidErr: errors.New("no such file")},
			map[Source]bool{LBR: false, Calls: false, Timer: false, Exact: false},
			map[Source]string{Timer: "disabled"}, Timer},
		{"sysfs unreadable", Facts{PMUErr: errors.New("permission denied"), Root: true},
			map[Source]bool{LBR: false, Calls: false, Timer: false, Exact: false},
			map[Source]string{Timer: "cannot read"}, Timer},
		{"no uprobes", Facts{PMUs: pmus("software"), Root: true},
			map[Source]bool{LBR: false, Calls: false, Timer: true, Exact: false},
			map[Source]string{Exact: "no uprobe PMU"}, Timer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := Assess(tc.facts)
			for _, v := range vs {
				// lbr and calls record user space only by design (:u
				// events); timer and exact fall back to it without
				// CAP_PERFMON at paranoid 2.
				wantUser := v.OK && (v.Source == Timer || v.Source == Exact) && !tc.facts.Root && !tc.facts.CapPerfmon && tc.facts.Paranoid >= 2
				if v.UserOnly != wantUser {
					t.Errorf("%s: UserOnly = %v, want %v", v.Source, v.UserOnly, wantUser)
				}
				if v.OK != tc.ok[v.Source] {
					t.Errorf("%s: ok=%v (%s), want %v", v.Source, v.OK, v.Why, tc.ok[v.Source])
				}
				if w := tc.why[v.Source]; w != "" && !strings.Contains(v.Why, w) {
					t.Errorf("%s: why %q lacks %q", v.Source, v.Why, w)
				}
				if !v.OK && v.Instead == "" {
					t.Errorf("%s: not working, but no alternative given", v.Source)
				}
			}
			if got, why := Choose(vs); got != tc.pick || why == "" {
				t.Errorf("Choose = %v (%q), want %v", got, why, tc.pick)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, s := range All {
		if got, err := Parse(s.String()); err != nil || got != s {
			t.Errorf("Parse(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := Parse("pebs"); err == nil {
		t.Error("Parse(pebs) succeeded")
	}
}
