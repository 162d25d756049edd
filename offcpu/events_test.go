package offcpu

import (
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
)

// TestEventsAsPerf: the recording's events and the off-CPU event are what
// perf opens for `perf record -e cpu-clock -c 250000 -e cs/period=1/ -g`
// (BuildAttrs builds perf's attrs), for a command and system-wide; the
// switch event is the software dummy event asking for switch records
// alone, with the first event's sample id fields; every event carries
// PERF_SAMPLE_IDENTIFIER.
func TestEventsAsPerf(t *testing.T) {
	for _, target := range []event.Target{event.TargetPIDs, event.TargetCPUs} {
		t.Run(target.String(), func(t *testing.T) {
			cfg := event.RecordConfig{Events: []string{"cpu-clock"}, Period: 250000, CallGraph: "fp",
				Target: target, Limits: &perf.KernelLimits{}, PMUs: map[string]*event.PMU{}}
			evs, err := event.BuildAttrs(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Events(evs, true)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Events = []string{"cpu-clock", "cs/period=1/"}
			want, err := event.BuildAttrs(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if target == event.TargetCPUs {
				want[1], want[2] = want[2], want[1] // the off-CPU event after -a's dummy
			}
			if len(got) != len(want)+1 {
				t.Fatalf("%d events, want %d", len(got), len(want)+1)
			}
			for i := range want {
				w := want[i].Attr
				w.SampleType = w.SampleType&^perf.SampleID | perf.SampleIdentifier
				if got[i].Attr != w {
					t.Errorf("event %d (%s):\n got %+v\nwant %+v", i, want[i].Name, got[i].Attr, w)
				}
			}
			sw := got[len(got)-1]
			if sw.Name != SwitchEventName || sw.Attr.Type != perf.TypeSoftware || sw.Attr.Config != perf.SWDummy ||
				!HasSwitches(&sw.Attr) || sw.Attr.SampleType&perf.SampleIdentifier == 0 || !sw.Attr.Flags.Has(perf.FlagSampleIDAll) ||
				sw.Attr.Flags&(perf.FlagComm|perf.FlagMmap|perf.FlagMmap2|perf.FlagTask) != 0 {
				t.Errorf("switch event %+v", sw)
			}
			for i, ev := range got[:len(got)-1] {
				if HasSwitches(&ev.Attr) {
					t.Errorf("event %d (%s) asks for switch records too", i, ev.Name)
				}
			}
			if off := got[len(got)-2]; !IsEvent(&off.Attr) || IsEvent(&got[0].Attr) {
				t.Error("IsEvent does not tell the off-CPU event from the others")
			}
		})
	}
}

// TestEventsUserOnly: without the kernel, no off-CPU event (the kernel
// would drop its every sample), only the switch event.
func TestEventsUserOnly(t *testing.T) {
	evs, err := event.BuildAttrs(event.RecordConfig{Events: []string{"cpu-clock:u"}, CallGraph: "fp",
		Limits: &perf.KernelLimits{}, PMUs: map[string]*event.PMU{}})
	if err != nil {
		t.Fatal(err)
	}
	first := evs[0].Attr
	got, err := Events(evs, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || IsEvent(&got[1].Attr) || !HasSwitches(&got[1].Attr) || !got[1].Attr.Flags.Has(perf.FlagExcludeKernel) {
		t.Errorf("got %+v, want the event and the user-space switch event", got)
	}
	if evs[0].Attr != first {
		t.Error("Events changed its argument")
	}
}
