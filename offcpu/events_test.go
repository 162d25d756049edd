package offcpu

import (
	"reflect"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// TestEventsAsPerf: the off-CPU events are what perf opens for
// `perf record -e cpu-clock -c 250000 -e cs/period=1/ --switch-events -g`
// (perf's attrs as BuildAttrs builds them, the first event tracking the
// switches), for a command and system-wide.
func TestEventsAsPerf(t *testing.T) {
	for _, target := range []perf.Target{perf.TargetPIDs, perf.TargetCPUs} {
		t.Run(target.String(), func(t *testing.T) {
			cfg := perf.RecordConfig{Events: []string{"cpu-clock"}, Period: 250000, CallGraph: "fp",
				Target: target, Limits: &perf.KernelLimits{}, PMUs: map[string]*perf.PMU{}}
			evs, err := perf.BuildAttrs(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Events(evs, true)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Events = []string{"cpu-clock", "cs/period=1/"}
			want, err := perf.BuildAttrs(cfg)
			if err != nil {
				t.Fatal(err)
			}
			track := 0
			if target == perf.TargetCPUs {
				track = len(want) - 1 // perf's dummy
			}
			want[track].Attr.Flags |= perf.FlagContextSwitch
			// the off-CPU event comes last, after -a's dummy
			if target == perf.TargetCPUs {
				want[1], want[2] = want[2], want[1]
			}
			if len(got) != len(want) {
				t.Fatalf("%d events, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].Attr != want[i].Attr {
					t.Errorf("event %d (%s):\n got %+v\nwant %+v", i, want[i].Name, got[i].Attr, want[i].Attr)
				}
			}
			if !IsEvent(&got[len(got)-1].Attr) || IsEvent(&got[0].Attr) {
				t.Error("IsEvent does not tell the off-CPU event from the others")
			}
		})
	}
}

// TestEventsUserOnly: without the kernel, no off-CPU event (the kernel
// would drop its every sample), only the switch records.
func TestEventsUserOnly(t *testing.T) {
	evs, err := perf.BuildAttrs(perf.RecordConfig{Events: []string{"cpu-clock:u"}, CallGraph: "fp",
		Limits: &perf.KernelLimits{}, PMUs: map[string]*perf.PMU{}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Events(evs, false)
	if err != nil {
		t.Fatal(err)
	}
	want := evs[0].Attr
	want.Flags |= perf.FlagContextSwitch
	if len(got) != 1 || !reflect.DeepEqual(got[0].Attr, want) {
		t.Errorf("got %+v, want the event with context_switch", got)
	}
	if evs[0].Attr.Flags.Has(perf.FlagContextSwitch) {
		t.Error("Events changed its argument")
	}
}
