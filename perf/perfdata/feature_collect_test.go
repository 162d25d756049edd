package perfdata

import (
	"slices"
	"testing"
)

func TestParseCPUInfo(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		desc, cpid string
	}{
		{"intel xeon vm", `processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 85
model name	: Intel(R) Xeon(R) Processor @ 2.50GHz
stepping	: 7

processor	: 1
vendor_id	: GenuineIntel
cpu family	: 6
model		: 85
model name	: something else
stepping	: 7
`, "Intel(R) Xeon(R) Processor @ 2.50GHz", "GenuineIntel,6,85,7"},
		{"amd, branding padded with spaces", "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 33\nmodel name\t: AMD Ryzen 9 5950X   16-Core Processor  \nstepping\t: 0\n",
			"AMD Ryzen 9 5950X 16-Core Processor", "AuthenticAMD,25,33,0"},
		{"arm64: no vendor or model name", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n", "", ""},
		{"bad stepping", "vendor_id : GenuineIntel\ncpu family : 6\nmodel : 85\nstepping : unknown\n", "", ""},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		desc, cpuid := parseCPUInfo(tt.in)
		if desc != tt.desc || cpuid != tt.cpid {
			t.Errorf("%s: (%q, %q), want (%q, %q)", tt.name, desc, cpuid, tt.desc, tt.cpid)
		}
	}
}

func TestParseMemTotal(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want uint64
	}{
		{"meminfo", "MemTotal:       24684096 kB\nMemFree:         3508852 kB\n", 24684096},
		{"not first", "MemFree: 1 kB\nMemTotal: 2048 kB\n", 2048},
		{"missing", "MemFree: 1 kB\n", 0},
		{"garbage", "MemTotal: lots\n", 0},
		{"no value", "MemTotal:\n", 0},
	}
	for _, tt := range tests {
		if got := parseMemTotal(tt.in); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []int
		ok   bool
	}{
		{"two cpus", "0-1\n", []int{0, 1}, true},
		{"single", "0\n", []int{0}, true},
		{"holes", "0-2,4,6-7", []int{0, 1, 2, 4, 6, 7}, true},
		{"empty", "\n", nil, true},
		{"reversed range", "3-1", nil, false},
		{"not ascending", "4,2", nil, false},
		{"garbage", "a-b", nil, false},
		{"negative", "-1", nil, false},
		{"huge range", "0-100000000", nil, false},
	}
	for _, tt := range tests {
		got, ok := parseCPUList(tt.in)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v %v, want %v %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-1", "0,2-3", "", "5-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, ok := parseCPUList(s)
		if ok && !slices.IsSorted(cpus) {
			t.Errorf("%q: unsorted %v", s, cpus)
		}
	})
}
