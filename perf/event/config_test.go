package event

import (
	"reflect"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// TestBuildAttrsLimits covers what depends on the kernel's sysctls, with
// limits other than this machine's.
func TestBuildAttrsLimits(t *testing.T) {
	tests := []struct {
		name       string
		cfg        RecordConfig
		wantPeriod uint64
		wantStack  uint16
	}{
		{"default freq lowered", RecordConfig{Limits: &perf.KernelLimits{MaxSampleRate: 1000}}, 1000, 0},
		{"user freq lowered", RecordConfig{Freq: 5000, Limits: &perf.KernelLimits{MaxSampleRate: 2500}}, 2500, 0},
		{"freq under the limit", RecordConfig{Freq: 999, Limits: &perf.KernelLimits{MaxSampleRate: 2500}}, 999, 0},
		{"no limit known", RecordConfig{Freq: 500000, Limits: &perf.KernelLimits{}}, 500000, 0},
		{"freq max", RecordConfig{Freq: FreqMax, Limits: &perf.KernelLimits{MaxSampleRate: 12345}}, 12345, 0},
		{"period not limited", RecordConfig{Period: 1, Limits: &perf.KernelLimits{MaxSampleRate: 10}}, 1, 0},
		{"fp depth kept", RecordConfig{CallGraph: "fp,100", Limits: &perf.KernelLimits{MaxStack: 127}}, 4000, 100},
		{"fp depth at the limit ignored", RecordConfig{CallGraph: "fp,127", Limits: &perf.KernelLimits{MaxStack: 127}}, 4000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Events = []string{"cycles"}
			evs, err := BuildAttrs(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			a := evs[0].Attr
			if a.SamplePeriod != tt.wantPeriod || a.SampleMaxStack != tt.wantStack {
				t.Errorf("sample_period/freq %d, max stack %d; want %d, %d", a.SamplePeriod, a.SampleMaxStack, tt.wantPeriod, tt.wantStack)
			}
		})
	}
}

func TestBuildAttrsNames(t *testing.T) {
	evs, err := BuildAttrs(RecordConfig{
		Events: []string{"cycles:u,cpu/event=0xc4,umask=0x20,name=calls/u", "r20c4"},
		Target: TargetCPUs, Limits: &perf.KernelLimits{}, PMUs: map[string]*PMU{},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range evs {
		names = append(names, e.Name)
	}
	want := []string{"cycles:u", "calls", "r20c4", "dummy:HG"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	if !evs[3].Attr.Flags.Has(perf.FlagMmap) || evs[0].Attr.Flags.Has(perf.FlagMmap) {
		t.Errorf("with -a the added dummy, not the first event, tracks mmaps")
	}
}

func TestTargetString(t *testing.T) {
	for tg, want := range map[Target]string{TargetCommand: "command", TargetPIDs: "pids", TargetCPUs: "cpus", 9: "Target(9)"} {
		if tg.String() != want {
			t.Errorf("%d: %q, want %q", int(tg), tg.String(), want)
		}
	}
}
