package source

import (
	"errors"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf/event"
)

// The source policy on three machines: an Intel server with LBR, one
// whose PMU has no LBR, and a virtual machine with no hardware PMU.
func TestDecide(t *testing.T) {
	skl, _ := event.ParseCPUID("GenuineIntel-6-5E")
	lbrPMU := event.IntelCorePMU()
	lbrPMU.Caps["branches"], lbrPMU.Caps["max_precise"] = "32", "3"
	intel := pmus("software", "uprobe")
	intel["cpu"] = lbrPMU
	noLBR := pmus("software", "uprobe")
	noLBR["cpu"] = event.IntelCorePMU()
	machines := map[string]Facts{
		"intel": {PMUs: intel, Paranoid: 2, Root: true, CPU: skl, Kernel: "6.1.0"},
		"nolbr": {PMUs: noLBR, Paranoid: 2, Root: true, CPU: skl, Kernel: "6.1.0"},
		"vm":    {PMUs: pmus("software", "tracepoint", "uprobe"), Paranoid: 2, Root: true, Kernel: "6.1.0"},
	}
	for _, tc := range []struct {
		name    string
		machine string
		req     Request
		src     Source
		perfEv  bool
		note    string // substring of the note
		err     string // substring of the error
	}{
		{"default lbr", "intel", Request{}, LBR, false, "source lbr, event BR_INST_RETIRED.NEAR_CALL (the default here; hwprof check says why)", ""},
		{"default calls without lbr", "nolbr", Request{}, Calls, false, "source calls, event ", ""},
		{"default timer on a vm", "vm", Request{}, Timer, false, "source timer, event cpu-clock (the default here; hwprof check says why)", ""},
		{"-e alone", "vm", Request{Events: "-e"}, 0, true, "", ""},
		{"-e and --source", "vm", Request{Events: "-event", Source: "timer"}, 0, false, "", "--source timer and -event both choose the events"},
		{"unknown source", "vm", Request{Source: "cycles"}, 0, false, "", `unknown source "cycles"`},
		{"lbr on a vm", "vm", Request{Source: "lbr"}, 0, false, "", "source lbr does not work here: no hardware PMU"},
		{"lbr on a vm, lenient", "vm", Request{Source: "lbr", Lenient: true}, LBR, false, "note: source lbr does not work here", ""},
		{"timer named", "intel", Request{Source: "timer"}, Timer, false, "source timer: software cpu-clock event; event cpu-clock", ""},
		{"-j with timer", "vm", Request{Source: "timer", Branch: "-j"}, 0, false, "", "-j adds a branch stack, which the timer source does not have"},
		{"-j with the default timer", "vm", Request{Branch: "-b"}, 0, false, "", "-b adds a branch stack, which the timer source does not have"},
		{"-j with lbr", "intel", Request{Source: "lbr", Branch: "-j"}, LBR, false, "source lbr", ""},
		{"exact", "vm", Request{Source: "exact"}, Exact, false, "source exact: uprobe events", ""},
		{"exact -a", "vm", Request{Source: "exact", SystemWide: true}, 0, false, "", "not -a"},
		{"exact -c", "vm", Request{Source: "exact", Period: "-c"}, 0, false, "", "-c does not apply to it"},
		{"exact -g", "vm", Request{Source: "exact", Graph: "-call-graph"}, 0, false, "", "-call-graph does not apply to it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gathered := false
			d, err := Decide(tc.req, func() (Facts, error) { gathered = true; return machines[tc.machine], nil })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.PerfEvents != tc.perfEv || (!tc.perfEv && d.Source != tc.src) || !strings.Contains(d.Note, tc.note) {
				t.Errorf("got %+v, want source %v perf events %v note %q", d, tc.src, tc.perfEv, tc.note)
			}
			if tc.perfEv && gathered {
				t.Error("-e alone gathered the machine's facts")
			}
			if (d.Source == LBR || d.Source == Calls || d.Source == Timer) && !tc.perfEv && len(d.Setup.Config.Events) == 0 {
				t.Errorf("%v: no planned events", d.Source)
			}
		})
	}
	if _, err := Decide(Request{}, func() (Facts, error) { return Facts{}, errors.New("bad --cpu") }); err == nil {
		t.Error("a gather error was ignored")
	}
}

// Config: the source's plan with only the overrides the command line gave.
func TestDecisionConfig(t *testing.T) {
	d := Decision{Source: LBR, Setup: Setup{Config: event.RecordConfig{Events: []string{"cpu/e/"}, Period: LBRCallPeriod,
		CallGraph: "lbr", BranchFilter: "any_call,u"}}}
	given := event.RecordConfig{Events: []string{"cycles"}, Freq: 99, CallGraph: "fp", BranchFilter: "any", NoInherit: true}
	got := d.Config(Request{}, given)
	if got.Period != LBRCallPeriod || got.Freq != 0 || got.CallGraph != "lbr" || got.BranchFilter != "any_call,u" || !got.NoInherit || got.Events[0] != "cpu/e/" {
		t.Errorf("no overrides: %+v", got)
	}
	got = d.Config(Request{Period: "-F", Graph: "-g", Branch: "-j"}, given)
	if got.Period != 0 || got.Freq != 99 || got.CallGraph != "fp" || got.BranchFilter != "any" || got.Events[0] != "cpu/e/" {
		t.Errorf("all overrides: %+v", got)
	}
	if !d.Planned() || (&Decision{Source: Timer}).Planned() || (&Decision{PerfEvents: true, Source: LBR}).Planned() {
		t.Error("Planned: lbr and calls only")
	}
}
