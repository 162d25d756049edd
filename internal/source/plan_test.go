package source

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
)

func cpuid(t *testing.T, s string) event.CPUID {
	t.Helper()
	c, err := event.ParseCPUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func isPrime(n uint64) bool {
	if n < 2 {
		return false
	}
	for d := uint64(2); d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}

func TestDefaultPeriodsArePrime(t *testing.T) {
	for _, p := range []uint64{LBRCallPeriod, LBRCyclePeriod, CallsPeriod} {
		if !isPrime(p) {
			t.Errorf("period %d is not prime", p)
		}
	}
}

// hybridPMUs has an Alder Lake's cpu_core and cpu_atom PMUs (dynamic
// types, Intel core formats).
func hybridPMUs() map[string]*event.PMU {
	m := pmus("software", "uprobe")
	for i, n := range []string{"cpu_core", "cpu_atom"} {
		p := event.IntelCorePMU()
		p.Name, p.Type = n, perf.EventType(8+i)
		p.Caps["branches"], p.Caps["max_precise"] = "32", "3"
		m[n] = p
	}
	return m
}

func TestPlan(t *testing.T) {
	vmPMUs := pmus("software", "uprobe")
	skl := event.IntelCorePMU()
	skl.Caps["branches"], skl.Caps["max_precise"] = "32", "3"
	noPEBS := event.IntelCorePMU()
	noPEBS.Caps["max_precise"] = "0"
	for _, tc := range []struct {
		name     string
		src      Source
		facts    Facts
		perfArgs string // the equivalent perf record options
		err      string
	}{
		{"lbr skylake", LBR, Facts{PMUs: map[string]*event.PMU{"cpu": skl}, CPU: cpuid(t, "GenuineIntel-6-5E-3"), Kernel: "6.1.0"},
			"-e r02c4:u -c 100003 -j any_call,u,save_type -g", ""},
		{"lbr haswell old kernel", LBR, Facts{PMUs: map[string]*event.PMU{"cpu": skl}, CPU: cpuid(t, "GenuineIntel-6-3C"), Kernel: "4.9.0-amd64"},
			"-e r02c4:u -c 100003 -j any_call,u -g", ""},
		{"lbr this vm's cascade lake", LBR, Facts{PMUs: vmPMUs, CPU: cpuid(t, "GenuineIntel-6-55-7"), Kernel: "6.18.44"},
			"-e r02c4:u -c 100003 -j any_call,u,save_type -g", ""},
		{"lbr unknown model: cycles", LBR, Facts{PMUs: vmPMUs, CPU: cpuid(t, "GenuineIntel-6-1A"), Kernel: "6.18.44"},
			"-e cycles:u -c 1000003 -j any_call,u,save_type -g", ""},
		{"lbr amd: cycles", LBR, Facts{PMUs: vmPMUs, CPU: cpuid(t, "AuthenticAMD-25-61"), Kernel: "6.18.44"},
			"-e cycles:u -c 1000003 -j any_call,u,save_type -g", ""},
		{"lbr alderlake core", LBR, Facts{PMUs: hybridPMUs(), CPU: cpuid(t, "GenuineIntel-6-97"), Kernel: "6.18.44"},
			"-e r02c4:u -c 100003 -j any_call,u,save_type -g", ""},
		{"calls icelake pp", Calls, Facts{PMUs: map[string]*event.PMU{"cpu": skl}, CPU: cpuid(t, "GenuineIntel-6-7E")},
			"-e r02c4:upp -c 10007 -g", ""},
		{"calls without sysfs caps: pp", Calls, Facts{PMUs: vmPMUs, CPU: cpuid(t, "GenuineIntel-6-8F")},
			"-e r02c4:upp -c 10007 -g", ""},
		{"calls no PEBS", Calls, Facts{PMUs: map[string]*event.PMU{"cpu": noPEBS}, CPU: cpuid(t, "GenuineIntel-6-2A")},
			"-e r02c4:u -c 10007 -g", ""},
		{"calls unknown model", Calls, Facts{PMUs: vmPMUs, CPU: cpuid(t, "AuthenticAMD-25-61")}, "", "no calls-retired event known for CPU AuthenticAMD-25-61"},
		{"timer", Timer, Facts{PMUs: vmPMUs}, "-e cpu-clock -g", ""},
		{"exact", Exact, Facts{PMUs: vmPMUs}, "", "uprobe recorder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Plan(tc.src, tc.facts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(s.PerfArgs, " "); got != tc.perfArgs {
				t.Errorf("perf args %q, want %q", got, tc.perfArgs)
			}
			if s.Event == "" {
				t.Error("no explanation of the event")
			}
			evs, err := event.BuildAttrs(s.Config)
			if err != nil {
				t.Fatalf("BuildAttrs: %v", err)
			}
			if len(evs) != 1 {
				t.Fatalf("%d events", len(evs))
			}
			a := evs[0].Attr
			if tc.src == LBR && (a.SampleType&perf.SampleBranchStack == 0 || a.BranchSampleType&perf.BranchAnyCall == 0 || a.BranchSampleType&perf.BranchUser == 0) {
				t.Errorf("lbr without an ANY_CALL|USER branch stack: %#x %#x", a.SampleType, a.BranchSampleType)
			}
			if tc.src == Calls && a.SampleType&perf.SampleBranchStack != 0 {
				t.Error("calls with a branch stack")
			}
			if a.SampleType&perf.SampleCallchain == 0 {
				t.Error("no callchain")
			}
			if tc.name == "lbr alderlake core" && a.Type != 8 {
				t.Errorf("hybrid: type %d, want cpu_core's 8", a.Type)
			}
		})
	}
}

// The attrs a source's setup builds equal what `perf record -vv` prints
// for the setup's perf options (perf prints them before the open fails on
// a machine without the PMU).
func TestPlanMatchesPerf(t *testing.T) {
	perfPath, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not on PATH: no oracle to compare with")
	}
	for _, tc := range []struct {
		src Source
		cpu string
	}{
		{LBR, "GenuineIntel-6-5E"}, {LBR, "GenuineIntel-6-55-7"}, {LBR, "AuthenticAMD-25-61"},
		{Calls, "GenuineIntel-6-7E"}, {Timer, "GenuineIntel-6-5E"},
	} {
		f := Facts{PMUs: pmus("software", "uprobe"), CPU: cpuid(t, tc.cpu), Kernel: "6.18.0"}
		s, err := Plan(tc.src, f)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := event.BuildAttrs(s.Config)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := perf.FprintAttr(&got, &evs[0].Attr); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{"record", "-vv"}, s.PerfArgs...), "-o", filepath.Join(t.TempDir(), "p.data"), "--", "true")
		out, _ := exec.Command(perfPath, args...).CombinedOutput() // the open fails here after printing
		want := firstAttrBlock(string(out))
		if want == "" {
			t.Fatalf("perf %q printed no attr:\n%s", args, out)
		}
		if got.String() != want {
			t.Errorf("%s on %s: perf %s\nhwprof:\n%sperf:\n%s", tc.src, tc.cpu, strings.Join(s.PerfArgs, " "), got.String(), want)
		}
	}
}

func firstAttrBlock(out string) string {
	var block []string
	in := false
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		if line == "perf_event_attr:" {
			in = true
		} else if in && strings.HasPrefix(line, "-----") {
			break
		}
		if in {
			block = append(block, line)
		}
	}
	if len(block) == 0 {
		return ""
	}
	return strings.Join(slices.Clip(block), "\n") + "\n"
}

func TestKernelAtLeast(t *testing.T) {
	for rel, want := range map[string]bool{
		"6.18.44-fc-v595": true, "4.14.0": true, "4.13.16-arch": false, "3.10.0-1160.el7": false,
		"4.14-rc1": true, "": true, "garbage": true,
	} {
		f := Facts{Kernel: rel}
		if got := f.KernelAtLeast(SaveTypeKernel); got != want {
			t.Errorf("%q: %v, want %v", rel, got, want)
		}
	}
}

// Every event that samples a frame-pointer callchain of user code takes the
// leaf copy, whatever chose it (a source or perf's -e with -g); events
// whose call graph is not frame pointers, or has no user frames, do not.
func TestAddLeafCopy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   event.RecordConfig
		takes bool
	}{
		{"-e cpu-clock -g", event.RecordConfig{Events: []string{"cpu-clock"}, CallGraph: "fp"}, true},
		{"-e cpu-clock --call-graph fp,64", event.RecordConfig{Events: []string{"cpu-clock"}, CallGraph: "fp,64"}, true},
		{"-e cycles:u -j any_call,u -g (lbr source)", event.RecordConfig{Events: []string{"cycles:u"}, CallGraph: "fp", BranchFilter: "any_call,u"}, true},
		{"-e cpu-clock", event.RecordConfig{Events: []string{"cpu-clock"}}, false},
		{"-e cpu-clock:k -g", event.RecordConfig{Events: []string{"cpu-clock:k"}, CallGraph: "fp"}, false},
		{"-e cpu-clock --call-graph dwarf", event.RecordConfig{Events: []string{"cpu-clock"}, CallGraph: "dwarf"}, false},
		{"-e cycles:u --call-graph lbr", event.RecordConfig{Events: []string{"cycles:u"}, CallGraph: "lbr"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := event.BuildAttrs(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			before := evs[0].Attr
			if got := TakesLeafCopy(&before); got != tc.takes {
				t.Errorf("TakesLeafCopy = %v, want %v (attr %+v)", got, tc.takes, before)
			}
			if AddLeafCopy(evs, 0); evs[0].Attr != before {
				t.Errorf("AddLeafCopy(0) changed the attr: %+v", evs[0].Attr)
			}
			AddLeafCopy(evs, 64)
			a := evs[0].Attr
			if !tc.takes {
				if a != before {
					t.Errorf("AddLeafCopy changed the attr: %+v", a)
				}
				return
			}
			if a.SampleStackUser != 64 || a.SampleRegsUser != LeafRegsUser ||
				a.SampleType != before.SampleType|perf.SampleRegsUser|perf.SampleStackUser {
				t.Errorf("AddLeafCopy: stack %d, regs %#x, sample type %#x; want 64, %#x, %#x",
					a.SampleStackUser, a.SampleRegsUser, a.SampleType, LeafRegsUser, before.SampleType|perf.SampleRegsUser|perf.SampleStackUser)
			}
		})
	}
}
