package perf

import (
	"bytes"
	"flag"
	"reflect"
	"strings"
	"testing"
)

func parseFlags(args ...string) (RecordConfig, error) {
	var c RecordConfig
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	c.RegisterFlags(fs)
	err := fs.Parse(args)
	return c, err
}

func TestRegisterFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want RecordConfig
	}{
		{"events repeat", []string{"-e", "cycles", "--event", "a,b", "-e=cpu-clock"},
			RecordConfig{Events: []string{"cycles", "a,b", "cpu-clock"}}},
		{"count", []string{"-c", "10007"}, RecordConfig{Period: 10007}},
		{"count long", []string{"--count=5"}, RecordConfig{Period: 5}},
		{"freq", []string{"-F", "999"}, RecordConfig{Freq: 999}},
		{"freq max", []string{"--freq", "max"}, RecordConfig{Freq: FreqMax}},
		{"g", []string{"-g"}, RecordConfig{CallGraph: "fp"}},
		{"g then call-graph", []string{"-g", "--call-graph", "dwarf"}, RecordConfig{CallGraph: "dwarf"}},
		{"call-graph then g", []string{"--call-graph", "dwarf,4096", "-g"}, RecordConfig{CallGraph: "dwarf,4096"}},
		{"branch filter", []string{"-j", "any_call,u"}, RecordConfig{BranchFilter: "any_call,u", branchSet: true}},
		{"branch any", []string{"-b"}, RecordConfig{BranchFilter: "any", branchSet: true}},
		{"branch any long", []string{"--branch-any"}, RecordConfig{BranchFilter: "any", branchSet: true}},
		{"no-inherit", []string{"--no-inherit"}, RecordConfig{NoInherit: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%q:\n got %+v\nwant %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestRegisterFlagsErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"b with j", []string{"-b", "-j", "any_call"}, "cannot use --branch-any (-b) with --branch-filter (-j)"},
		{"j with b", []string{"-j", "any_call", "-b"}, "cannot use --branch-any (-b) with --branch-filter (-j)"},
		{"j twice", []string{"-j", "any_call", "-j", "u"}, "-j twice"},
		{"bad j word", []string{"-j", "any_cal"}, `unknown word "any_cal"`},
		{"zero count", []string{"-c", "0"}, "want a positive decimal period"},
		{"hex count", []string{"-c", "0x10"}, "want a positive decimal period"},
		{"negative freq", []string{"-F", "-5"}, "want a positive decimal frequency or max"},
		{"freq garbage", []string{"-F", "10abc"}, "want a positive decimal frequency or max"},
		{"freq over uint", []string{"-F", "4294967297"}, "want a positive decimal frequency or max"},
		{"bad call graph", []string{"--call-graph", "dwarf,abc"}, "bad stack dump size"},
		{"group", []string{"-e", "{cycles,instructions}"}, "event groups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%q: error %v, want it to contain %q", tt.args, err, tt.want)
			}
		})
	}
}

// TestBuildAttrsLimits covers what depends on the kernel's sysctls, with
// limits other than this machine's.
func TestBuildAttrsLimits(t *testing.T) {
	tests := []struct {
		name       string
		cfg        RecordConfig
		wantPeriod uint64
		wantStack  uint16
	}{
		{"default freq lowered", RecordConfig{Limits: &KernelLimits{MaxSampleRate: 1000}}, 1000, 0},
		{"user freq lowered", RecordConfig{Freq: 5000, Limits: &KernelLimits{MaxSampleRate: 2500}}, 2500, 0},
		{"freq under the limit", RecordConfig{Freq: 999, Limits: &KernelLimits{MaxSampleRate: 2500}}, 999, 0},
		{"no limit known", RecordConfig{Freq: 500000, Limits: &KernelLimits{}}, 500000, 0},
		{"freq max", RecordConfig{Freq: FreqMax, Limits: &KernelLimits{MaxSampleRate: 12345}}, 12345, 0},
		{"period not limited", RecordConfig{Period: 1, Limits: &KernelLimits{MaxSampleRate: 10}}, 1, 0},
		{"fp depth kept", RecordConfig{CallGraph: "fp,100", Limits: &KernelLimits{MaxStack: 127}}, 4000, 100},
		{"fp depth at the limit ignored", RecordConfig{CallGraph: "fp,127", Limits: &KernelLimits{MaxStack: 127}}, 4000, 0},
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
		Target: TargetCPUs, Limits: &KernelLimits{}, PMUs: map[string]*PMU{},
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
	if !evs[3].Attr.Flags.Has(FlagMmap) || evs[0].Attr.Flags.Has(FlagMmap) {
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
