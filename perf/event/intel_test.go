package event

import (
	"os"
	"strings"
	"testing"
)

const cpuinfoCascadeLake = `processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 85
model name	: Intel(R) Xeon(R) Processor @ 2.50GHz
stepping	: 7
flags		: fpu vme

processor	: 1
vendor_id	: GenuineIntel
cpu family	: 6
model		: 94
stepping	: 3
`

func TestParseCPUInfo(t *testing.T) {
	c, err := ParseCPUInfo(cpuinfoCascadeLake)
	if err != nil {
		t.Fatal(err)
	}
	if want := (CPUID{"GenuineIntel", 6, 0x55, 7}); c != want {
		t.Errorf("got %+v, want %+v (the first processor only)", c, want)
	}
	if c.String() != "GenuineIntel-6-55-7" {
		t.Errorf("String = %q", c.String())
	}
	if _, err := ParseCPUInfo("processor : 0\nCPU implementer : 0x41\n"); err == nil {
		t.Error("an arm64 cpuinfo parsed as x86")
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil && strings.Contains(string(b), "vendor_id") {
		if _, err := ParseCPUInfo(string(b)); err != nil {
			t.Errorf("this machine's /proc/cpuinfo: %v", err)
		}
	}
}

func TestParseCPUID(t *testing.T) {
	for in, want := range map[string]CPUID{
		"GenuineIntel-6-5E":   {"GenuineIntel", 6, 0x5e, -1},
		"GenuineIntel-6-55-7": {"GenuineIntel", 6, 0x55, 7},
		"AuthenticAMD-25-61":  {"AuthenticAMD", 25, 0x61, -1},
	} {
		got, err := ParseCPUID(in)
		if err != nil || got != want {
			t.Errorf("ParseCPUID(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("round trip %q -> %q", in, got.String())
		}
	}
	for _, bad := range []string{"", "GenuineIntel", "GenuineIntel-x-5E", "GenuineIntel-6-ZZ", "-6-5E", "GenuineIntel-6-55-Q"} {
		if _, err := ParseCPUID(bad); err == nil {
			t.Errorf("ParseCPUID(%q) succeeded", bad)
		}
	}
}

// The rows restate perf's pipeline.json entries (see intelNearCall) per
// model as mapfile.csv assigns them.
func TestNearCallEvent(t *testing.T) {
	for _, tc := range []struct {
		id          string
		pmu         string
		table       string
		umask       uint8
		ok          bool
		spec, rawUP string
	}{
		{"GenuineIntel-6-2A", "", "sandybridge", 0x02, true, "cpu/event=0xc4,umask=0x2,name=hwprof_calls/u", "r02c4:u"},
		{"GenuineIntel-6-3C", "cpu", "haswell", 0x02, true, "cpu/event=0xc4,umask=0x2,name=hwprof_calls/u", "r02c4:u"},
		{"GenuineIntel-6-5E-3", "cpu", "skylake", 0x02, true, "cpu/event=0xc4,umask=0x2,name=hwprof_calls/u", "r02c4:u"},
		{"GenuineIntel-6-9E", "cpu", "skylake", 0x02, true, "", ""},
		{"GenuineIntel-6-55-7", "cpu", "cascadelakex", 0x02, true, "", ""},
		{"GenuineIntel-6-55-4", "cpu", "", 0, false, "", ""}, // skylakex: table not read
		{"GenuineIntel-6-7E", "cpu", "icelake", 0x02, true, "", ""},
		{"GenuineIntel-6-8F", "cpu", "sapphirerapids", 0x02, true, "", ""},
		{"GenuineIntel-6-97", "cpu_core", "alderlake", 0x02, true, "cpu_core/event=0xc4,umask=0x2,name=hwprof_calls/u", "r02c4:u"},
		{"GenuineIntel-6-97", "cpu_atom", "alderlake", 0xf9, true, "cpu_atom/event=0xc4,umask=0xf9,name=hwprof_calls/u", "rf9c4:u"},
		{"GenuineIntel-6-97", "cpu", "", 0, false, "", ""},
		{"GenuineIntel-6-1A", "", "", 0, false, "", ""}, // nehalem: not in the table
		{"AuthenticAMD-25-61", "", "", 0, false, "", ""},
	} {
		id, err := ParseCPUID(tc.id)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := NearCallEvent(id, tc.pmu)
		if ok != tc.ok {
			t.Errorf("%s %s: ok = %v", tc.id, tc.pmu, ok)
			continue
		}
		if !ok {
			continue
		}
		if e.Table != tc.table || e.Event != 0xc4 || e.UMask != tc.umask || e.Name != "BR_INST_RETIRED.NEAR_CALL" || e.PEBS != 1 {
			t.Errorf("%s %s: %+v", tc.id, tc.pmu, e)
		}
		if tc.spec != "" {
			if got := e.Spec("", "u"); got != tc.spec {
				t.Errorf("%s: Spec = %q, want %q", tc.id, got, tc.spec)
			}
			if got := e.Raw("u"); got != tc.rawUP {
				t.Errorf("%s: Raw = %q, want %q", tc.id, got, tc.rawUP)
			}
			if _, err := Parse(e.Spec("", "upp")); err != nil {
				t.Errorf("%s: perf syntax: %v", tc.id, err)
			}
		}
	}
}
