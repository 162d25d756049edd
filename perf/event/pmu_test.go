package event

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Format
	}{
		{"byte", "config:0-7", Format{"config", []BitRange{{0, 7}}}},
		{"split", "config1:0-15,32", Format{"config1", []BitRange{{0, 15}, {32, 32}}}},
		{"top bit", "config:63", Format{"config", []BitRange{{63, 63}}}},
		{"sysfs newline", "config2:0-3\n", Format{"config2", []BitRange{{0, 3}}}},
		{"config3", "config3:8-15", Format{"config3", []BitRange{{8, 15}}}},
		{"amd event", "config:0-7,32-35", Format{"config", []BitRange{{0, 7}, {32, 35}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFormat(tt.in)
			if err != nil {
				t.Fatalf("ParseFormat(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseFormat(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if s := got.String(); s != strings.TrimSpace(tt.in) {
				t.Errorf("String() = %q, want %q", s, strings.TrimSpace(tt.in))
			}
		})
	}
}

func TestParseFormatErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "want field:bits"},
		{"no bits", "config", "want field:bits"},
		{"unknown field", "conf:0-7", `unknown field "conf"`},
		{"empty bits", "config:", `bad bit ""`},
		{"backwards", "config:7-0", "runs backwards"},
		{"past 63", "config:64", `bad bit "64"`},
		{"not a number", "config:a-b", `bad bit "a"`},
		{"trailing comma", "config:0-7,", `bad bit ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFormat(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseFormat(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestFormatApply(t *testing.T) {
	tests := []struct {
		name   string
		format string
		v      uint64
		want   perf.Attr
	}{
		{"event", "config:0-7", 0xc4, perf.Attr{Config: 0xc4}},
		{"umask", "config:8-15", 0x20, perf.Attr{Config: 0x2000}},
		{"flag bit", "config:18", 1, perf.Attr{Config: 1 << 18}},
		{"split range", "config1:0-15,32", 0x1ffff, perf.Attr{Config1: 0xffff | 1<<32}},
		{"config2", "config2:4-7", 0xf, perf.Attr{Config2: 0xf0}},
		{"config3", "config3:0-63", ^uint64(0), perf.Attr{Config3: ^uint64(0)}},
		{"zero", "config:0-7", 0, perf.Attr{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFormat(tt.format)
			if err != nil {
				t.Fatal(err)
			}
			var a perf.Attr
			if err := f.Apply(&a, tt.v); err != nil {
				t.Fatalf("Apply(%#x): %v", tt.v, err)
			}
			if a != tt.want {
				t.Errorf("Apply(%#x) = %+v, want %+v", tt.v, a, tt.want)
			}
		})
	}
}

func TestFormatApplyTooBig(t *testing.T) {
	f, _ := ParseFormat("config:0-7")
	a := perf.Attr{Config: 0x5}
	err := f.Apply(&a, 0x100)
	if err == nil || !strings.Contains(err.Error(), "maximum is 255") {
		t.Errorf("Apply(0x100) error = %v, want maximum is 255", err)
	}
	if a.Config != 0x5 {
		t.Errorf("a failed Apply changed config to %#x", a.Config)
	}
	// Like perf, a repeated term ORs.
	if err := f.Apply(&a, 0x30); err != nil || a.Config != 0x35 {
		t.Errorf("Apply ORs: config = %#x, err %v; want 0x35", a.Config, err)
	}
}

// intelFormatFiles are the format files of an Intel Skylake cpu PMU as
// sysfs shows them.
var intelFormatFiles = map[string]string{
	"event": "config:0-7", "umask": "config:8-15", "edge": "config:18", "pc": "config:19",
	"any": "config:21", "inv": "config:23", "cmask": "config:24-31", "in_tx": "config:32",
	"in_tx_cp": "config:33", "ldlat": "config1:0-15", "frontend": "config1:0-23",
	"offcore_rsp": "config1:0-63",
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeSysfs builds a sysfs-like tree: device directories elsewhere, and
// symlinks to them under the returned root, as the kernel lays it out.
func fakeSysfs(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	devices := filepath.Join(base, "devices")
	cpu := map[string]string{
		"type": "4", "caps/branches": "32", "caps/pmu_name": "skylake", "caps/max_precise": "3",
		"events/cpu-cycles": "event=0x3c", "events/mem-loads": "event=0xcd,umask=0x1,ldlat=3",
		"events/mem-loads.scale": "1", "events/mem-loads.unit": "ns",
	}
	for term, f := range intelFormatFiles {
		cpu["format/"+term] = f
	}
	writeFiles(t, filepath.Join(devices, "cpu"), cpu)
	writeFiles(t, filepath.Join(devices, "software"), map[string]string{"type": "1"})
	writeFiles(t, filepath.Join(devices, "uprobe"), map[string]string{
		"type": "8", "format/retprobe": "config:0", "format/ref_ctr_offset": "config:32-63",
	})
	root := filepath.Join(base, "bus", "event_source", "devices")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"cpu", "software", "uprobe"} {
		if err := os.Symlink(filepath.Join(devices, n), filepath.Join(root, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "stray-file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestDiscoverPMUsFake(t *testing.T) {
	root := fakeSysfs(t)
	pmus, err := DiscoverPMUs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(pmus) != 3 {
		t.Errorf("found %d PMUs, want cpu, software, uprobe", len(pmus))
	}
	cpu := pmus["cpu"]
	if cpu == nil {
		t.Fatal("no cpu PMU")
	}
	if cpu.Type != perf.TypeRaw || cpu.Name != "cpu" || cpu.Dir != filepath.Join(root, "cpu") {
		t.Errorf("cpu = %s type %d dir %s", cpu.Name, cpu.Type, cpu.Dir)
	}
	if cpu.BranchDepth() != 32 || cpu.CPUName() != "skylake" {
		t.Errorf("BranchDepth %d CPUName %q, want 32 skylake", cpu.BranchDepth(), cpu.CPUName())
	}
	if !reflect.DeepEqual(cpu.Formats, IntelCorePMU().Formats) {
		t.Errorf("formats read from sysfs differ from the built-in ones:\n%v\n%v", cpu.Formats, IntelCorePMU().Formats)
	}
	wantEvents := map[string]string{"cpu-cycles": "event=0x3c", "mem-loads": "event=0xcd,umask=0x1,ldlat=3"}
	if !reflect.DeepEqual(cpu.Events, wantEvents) {
		t.Errorf("events = %v, want %v", cpu.Events, wantEvents)
	}
	sw := pmus["software"]
	if sw.Type != perf.TypeSoftware || len(sw.Formats) != 0 || sw.BranchDepth() != 0 || sw.CPUName() != "" {
		t.Errorf("software = %+v", sw)
	}
	if f := pmus["uprobe"].Formats["ref_ctr_offset"]; f.String() != "config:32-63" {
		t.Errorf("uprobe ref_ctr_offset = %v", f)
	}
}

func TestDiscoverPMUsErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no type", map[string]string{"format/event": "config:0-7"}, "pmu x: open"},
		{"bad type", map[string]string{"type": "four"}, `pmu x: type "four": not a number`},
		{"bad format", map[string]string{"type": "9", "format/event": "config:9-1"}, "pmu x: format/event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, filepath.Join(root, "x"), tt.files)
			_, err := DiscoverPMUs(root)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := DiscoverPMUs(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing root: error = %v, want ErrNotExist", err)
	}
}

// TestDiscoverPMUsSysfs reads this machine's PMUs. The kernel's fixed
// types hold everywhere; the cpu PMU is checked only where it exists.
func TestDiscoverPMUsSysfs(t *testing.T) {
	if _, err := os.Stat(SysfsPMURoot); err != nil {
		t.Skipf("no %s: %v", SysfsPMURoot, err)
	}
	pmus, err := DiscoverPMUs(SysfsPMURoot)
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]perf.EventType{"software": perf.TypeSoftware, "tracepoint": perf.TypeTracepoint, "breakpoint": perf.TypeBreakpoint} {
		p := pmus[name]
		if p == nil {
			t.Errorf("no %s PMU", name)
			continue
		}
		if p.Type != typ {
			t.Errorf("%s type = %d, want %d", name, p.Type, typ)
		}
	}
	if up := pmus["uprobe"]; up != nil {
		if f, ok := up.Formats["retprobe"]; !ok || f.String() != "config:0" {
			t.Errorf("uprobe retprobe format = %v (present %v), want config:0", f, ok)
		}
	}
	if cpu := pmus["cpu"]; cpu != nil {
		if cpu.Type != perf.TypeRaw {
			t.Errorf("cpu type = %d, want %d", cpu.Type, perf.TypeRaw)
		}
		if _, ok := cpu.Formats["event"]; !ok {
			t.Errorf("cpu PMU without an event format: %v", cpu.Formats)
		}
	} else {
		t.Log("no cpu PMU here: cpu/.../ events use the built-in Intel formats")
	}
}

func TestLookupPMU(t *testing.T) {
	pmus, err := DiscoverPMUs(fakeSysfs(t))
	if err != nil {
		t.Fatal(err)
	}
	delete(pmus, "cpu")
	p, err := lookupPMU(pmus, "cpu")
	if err != nil || p.Type != perf.TypeRaw || p.Dir != "" {
		t.Errorf("cpu without sysfs: %+v, %v; want the built-in, type raw", p, err)
	}
	_, err = lookupPMU(pmus, "cpu_core")
	if !errors.Is(err, ErrNoPMU) {
		t.Fatalf("cpu_core: error %v, want ErrNoPMU", err)
	}
	if !strings.Contains(err.Error(), "present: software, uprobe") {
		t.Errorf("error %q does not list the PMUs present", err)
	}
}
