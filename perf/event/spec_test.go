package event

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Spec
	}{
		{"symbolic", "cycles", Spec{Kind: SpecSymbolic, Name: "cycles"}},
		{"symbolic mods", "instructions:u", Spec{Kind: SpecSymbolic, Name: "instructions",
			Mods: Modifiers{ExcludeKernel: true, ExcludeHV: true, ExcludeGuest: true}, HasMods: true}},
		{"empty mods", "cycles:", Spec{Kind: SpecSymbolic, Name: "cycles"}},
		{"symbolic terms", "cpu-clock/period=3/k", Spec{Kind: SpecSymbolic, Name: "cpu-clock",
			Terms: []Term{{Key: "period", Value: "3"}},
			Mods:  Modifiers{ExcludeUser: true, ExcludeHV: true}, HasMods: true}},
		{"raw", "r20c4", Spec{Kind: SpecRaw, Raw: 0x20c4}},
		{"raw upper", "r1A8:pp", Spec{Kind: SpecRaw, Raw: 0x1a8,
			Mods: Modifiers{Precise: 2, ExcludeGuest: true}, HasMods: true}},
		{"raw 16 digits", "rffffffffffffffff", Spec{Kind: SpecRaw, Raw: ^uint64(0)}},
		{"pmu", "cpu/event=0xc4,umask=0x20/", Spec{Kind: SpecPMU, Name: "cpu",
			Terms: []Term{{Key: "event", Value: "0xc4"}, {Key: "umask", Value: "0x20"}}}},
		{"pmu name mods", "cpu/event=0xc4,umask=0x20,name=calls/u", Spec{Kind: SpecPMU, Name: "cpu",
			Terms: []Term{{Key: "event", Value: "0xc4"}, {Key: "umask", Value: "0x20"}, {Key: "name", Value: "calls"}},
			Mods:  Modifiers{ExcludeKernel: true, ExcludeHV: true, ExcludeGuest: true}, HasMods: true}},
		{"bare terms and spaces", "msr/ tsc , edge/", Spec{Kind: SpecPMU, Name: "msr",
			Terms: []Term{{Key: "tsc", Bare: true}, {Key: "edge", Bare: true}}}},
		{"quoted name", "msr/event=1,name='a b,c'/", Spec{Kind: SpecPMU, Name: "msr",
			Terms: []Term{{Key: "event", Value: "1"}, {Key: "name", Value: "a b,c"}}}},
		{"empty terms", "msr//", Spec{Kind: SpecPMU, Name: "msr"}},
		{"call-graph term", "cycles/call-graph=dwarf,stack-size=4096/", Spec{Kind: SpecSymbolic, Name: "cycles",
			Terms: []Term{{Key: "call-graph", Value: "dwarf"}, {Key: "stack-size", Value: "4096"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			tt.want.Text = tt.in
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

// TestParseModifiers pins perf 6.1's modifier rules; TestAttrsMatchPerf
// checks the same rules against perf itself.
func TestParseModifiers(t *testing.T) {
	tests := []struct {
		in   string
		want Modifiers
	}{
		{"u", Modifiers{ExcludeKernel: true, ExcludeHV: true, ExcludeGuest: true}},
		{"k", Modifiers{ExcludeUser: true, ExcludeHV: true}},
		{"h", Modifiers{ExcludeUser: true, ExcludeKernel: true}},
		{"uk", Modifiers{ExcludeHV: true, ExcludeGuest: true}},
		{"ku", Modifiers{ExcludeHV: true, ExcludeGuest: true}},
		{"p", Modifiers{Precise: 1, ExcludeGuest: true}},
		{"ppp", Modifiers{Precise: 3, ExcludeGuest: true}},
		{"upp", Modifiers{ExcludeKernel: true, ExcludeHV: true, ExcludeGuest: true, Precise: 2}},
		{"P", Modifiers{PreciseMax: true}},
		{"uP", Modifiers{ExcludeKernel: true, ExcludeHV: true, ExcludeGuest: true, PreciseMax: true}},
		{"G", Modifiers{ExcludeHost: true}},
		{"H", Modifiers{ExcludeGuest: true}},
		{"GH", Modifiers{}},
		{"Gu", Modifiers{ExcludeKernel: true, ExcludeHV: true, ExcludeHost: true}},
		{"Gp", Modifiers{ExcludeHost: true, Precise: 1}},
		{"I", Modifiers{ExcludeIdle: true}},
		{"S", Modifiers{SampleRead: true}},
		{"De", Modifiers{Pinned: true, Exclusive: true}},
		{"W", Modifiers{Weak: true}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseModifiers(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseModifiers(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"cycles", []string{"cycles"}},
		{"cycles,instructions:u", []string{"cycles", "instructions:u"}},
		{"cpu/event=0xc4,umask=0x20/u,cycles", []string{"cpu/event=0xc4,umask=0x20/u", "cycles"}},
		{"r20c4,cpu/event=1/", []string{"r20c4", "cpu/event=1/"}},
	}
	for _, tt := range tests {
		got, err := SplitList(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitList(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestBuildAttrsErrors checks that bad input gives an error that names
// what is wrong.
func TestBuildAttrsErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  RecordConfig
		want string
	}{
		{"no events", RecordConfig{}, "no events"},
		{"unknown event", RecordConfig{Events: []string{"cycels"}}, `event "cycels": unknown event "cycels"`},
		{"upper case", RecordConfig{Events: []string{"CYCLES"}}, `unknown event "CYCLES"`},
		{"bad modifier", RecordConfig{Events: []string{"cycles:x"}}, `unknown modifier 'x'`},
		{"modifier twice", RecordConfig{Events: []string{"cycles:uu"}}, `'u' given twice`},
		{"too precise", RecordConfig{Events: []string{"cycles:pppp"}}, "precise level 4, at most 3"},
		{"two colons", RecordConfig{Events: []string{"cycles:u:p"}}, "unknown modifier ':'"},
		{"tracepoint", RecordConfig{Events: []string{"sched:sched_switch"}}, `unknown event "sched:sched_switch" (tracepoints are not supported`},
		{"bad hex", RecordConfig{Events: []string{"r20g4"}}, `bad raw event "r20g4"`},
		{"raw too long", RecordConfig{Events: []string{"r12345678901234567"}}, `bad raw event`},
		{"raw 0x", RecordConfig{Events: []string{"r0x20c4"}}, `bad raw event "r0x20c4"`},
		{"unknown format term", RecordConfig{Events: []string{"cpu/evnt=0xc4/"}}, `unknown term "evnt" for PMU cpu`},
		{"value too big", RecordConfig{Events: []string{"cpu/umask=0x100/"}}, "maximum is 255"},
		{"format value not a number", RecordConfig{Events: []string{"cpu/event=calls/"}}, "term event=calls: expected a number"},
		{"format term on symbolic", RecordConfig{Events: []string{"cycles/event=1/"}}, `unknown term "event"`},
		{"period word", RecordConfig{Events: []string{"cycles/period=x/"}}, "term period=x: expected a number"},
		{"name without value", RecordConfig{Events: []string{"cycles/name/"}}, "term name needs a value"},
		{"bad call-graph term", RecordConfig{Events: []string{"cycles/call-graph=lbrr/"}}, "want fp, dwarf, lbr or no"},
		{"unsupported term", RecordConfig{Events: []string{"cycles/aux-output/"}}, `term "aux-output" is not supported`},
		{"no closing slash", RecordConfig{Events: []string{"cpu/event=1"}}, "missing closing '/'"},
		{"trailing comma in terms", RecordConfig{Events: []string{"cpu/event=1,/"}}, "trailing comma"},
		{"unterminated quote", RecordConfig{Events: []string{"cpu/name='x/"}}, "unterminated quote"},
		{"empty event in list", RecordConfig{Events: []string{"cycles,,instructions"}}, "empty event"},
		{"group", RecordConfig{Events: []string{"{cycles,instructions}"}}, "event groups"},
		{"no name", RecordConfig{Events: []string{":u"}}, "no event name"},
		{"missing pmu", RecordConfig{Events: []string{"nopmu/event=1/"}, PMUs: map[string]*PMU{}}, `no PMU "nopmu"`},
		{"unknown branch word", RecordConfig{Events: []string{"cycles"}, BranchFilter: "any_call,usr"},
			`unknown word "usr" (accepted: u, k, hv, any, any_call`},
		{"unknown branch_type", RecordConfig{Events: []string{"cycles/branch_type=calls/"}}, `unknown word "calls"`},
		{"period and freq", RecordConfig{Events: []string{"cycles"}, Period: 100, Freq: 200},
			"cannot set frequency (-F) and period (-c) at the same time"},
		{"freq max unknown", RecordConfig{Events: []string{"cycles"}, Freq: FreqMax, Limits: &perf.KernelLimits{}},
			"-F max: kernel.perf_event_max_sample_rate is unknown"},
		{"bad call graph", RecordConfig{Events: []string{"cycles"}, CallGraph: "dwarf,0"}, "bad stack dump size"},
		{"call graph too big", RecordConfig{Events: []string{"cycles"}, CallGraph: "dwarf,70000"}, "want 1-65528 bytes"},
		{"lbr argument", RecordConfig{Events: []string{"cycles"}, CallGraph: "lbr,8"}, "lbr takes no argument"},
		{"call graph mode", RecordConfig{Events: []string{"cycles"}, CallGraph: "FP"}, "unknown mode"},
		{"bad target", RecordConfig{Events: []string{"cycles"}, Target: 7}, "unknown target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.Limits == nil {
				tt.cfg.Limits = &perf.KernelLimits{MaxSampleRate: 100000, MaxStack: 127}
			}
			_, err := BuildAttrs(tt.cfg)
			if err == nil {
				t.Fatalf("BuildAttrs(%+v) succeeded, want an error containing %q", tt.cfg, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestBuildAttrsMissingPMU(t *testing.T) {
	_, err := BuildAttrs(RecordConfig{Events: []string{"cpu_atom/event=0xc4/"}, PMUs: map[string]*PMU{"software": {Name: "software", Type: 1}}})
	if !errors.Is(err, ErrNoPMU) {
		t.Fatalf("error %v, want one wrapping ErrNoPMU", err)
	}
	var se *SpecError
	if errors.As(err, &se) {
		t.Errorf("a missing PMU is not a syntax error: %v", err)
	}
}

// fuzzPMUs is a fixed PMU set for the fuzz target: the built-in cpu PMU,
// a uprobe PMU and a sysfs-like msr PMU with aliases.
func fuzzPMUs() map[string]*PMU {
	return map[string]*PMU{
		"cpu":      IntelCorePMU(),
		"software": {Name: "software", Type: perf.TypeSoftware},
		"uprobe": {Name: "uprobe", Type: 8, Formats: map[string]Format{
			"retprobe": {"config", []BitRange{{0, 0}}}, "ref_ctr_offset": {"config", []BitRange{{32, 63}}}}},
		"msr": {Name: "msr", Type: 10, Formats: map[string]Format{"event": {"config", []BitRange{{0, 63}}}},
			Events: map[string]string{"tsc": "event=0x00", "smi": "event=0x04", "bad": "event=,"}},
	}
}

func FuzzParseEvent(f *testing.F) {
	for _, s := range []string{
		"cycles", "instructions:u", "cycles:ppp", "r20c4:P", "cpu/event=0xc4,umask=0x20,name=calls/u",
		"msr/smi/k", "cpu-clock/period=3,call-graph=dwarf,stack-size=100/", "cycles,cpu/event=1/",
		"cpu/ldlat=3,frontend=0x11/", "uprobe/retprobe/", "cpu/name='a,b'/", "cycles/branch_type=any_call/",
	} {
		f.Add(s)
	}
	pmus := fuzzPMUs()
	limits := &perf.KernelLimits{MaxSampleRate: 100000, MaxStack: 127}
	f.Fuzz(func(t *testing.T, s string) {
		if sp, err := Parse(s); err == nil && sp.Text != s {
			t.Errorf("Parse(%q).Text = %q", s, sp.Text)
		}
		evs, err := BuildAttrs(RecordConfig{Events: []string{s}, PMUs: pmus, Limits: limits, CallGraph: "dwarf"})
		if err != nil {
			if err.Error() == "" {
				t.Errorf("empty error for %q", s)
			}
			return
		}
		for _, ev := range evs {
			if ev.Attr.Size != perf.AttrSizeVer7 || !ev.Attr.Flags.Has(perf.FlagSampleIDAll) {
				t.Errorf("%q: attr without size or sample_id_all: %+v", s, ev.Attr)
			}
			var b bytes.Buffer
			if err := perf.FprintAttr(&b, &ev.Attr); err != nil || !strings.HasPrefix(b.String(), "perf_event_attr:\n") {
				t.Errorf("%q: FprintAttr = %q, %v", s, b.String(), err)
			}
			back, err := perf.UnmarshalAttr(ev.Attr.Marshal())
			if err != nil || back != ev.Attr {
				t.Errorf("%q: marshal round trip: %+v, %v; want %+v", s, back, err, ev.Attr)
			}
		}
	})
}
