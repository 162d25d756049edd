package uprobe

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
)

const cProg = `
#include <stdio.h>
__attribute__((noinline)) int work(int x) { return x * 2 + 1; }
int alias_of_work(int) __attribute__((alias("work")));
static __attribute__((noinline)) int helper(int x) { return work(x) + 1; }
int main(int argc, char **argv) { printf("%d\n", helper(argc)); return 0; }
`

const cxxProg = `
#include <cstdio>
namespace ns {
struct Shape { virtual int area(int) const = 0; virtual ~Shape() {} };
struct Sq : Shape { int area(int x) const override { return x * x; } };
}
int main(int argc, char **) { ns::Sq s; const ns::Shape &r = s; std::printf("%d\n", r.area(argc)); return 0; }
`

// nmFuncs reads what binutils says: the text symbols (type T/t) with a
// size, by address, from nm -S.
func nmFuncs(t *testing.T, bin string, dynamic bool) map[uint64][]string {
	t.Helper()
	args := []string{"-S", "--defined-only"}
	if dynamic {
		args = append(args, "-D")
	}
	out, err := exec.Command("nm", append(args, bin)...).Output()
	if err != nil {
		t.Skipf("nm: %v", err)
	}
	funcs := map[uint64][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || (f[2] != "T" && f[2] != "t" && f[2] != "W") {
			continue
		}
		addr, _ := strconv.ParseUint(f[0], 16, 64)
		size, _ := strconv.ParseUint(f[1], 16, 64)
		if size > 0 {
			funcs[addr] = append(funcs[addr], f[3])
		}
	}
	return funcs
}

// readelfOffsets maps each PT_LOAD's vaddr range to its file offset with
// readelf -lW, to check the offsets independently.
func readelfOffset(t *testing.T, bin string, addr uint64) uint64 {
	t.Helper()
	out, err := exec.Command("readelf", "-lW", bin).Output()
	if err != nil {
		t.Skipf("readelf: %v", err)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "LOAD" {
			continue
		}
		off, _ := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		va, _ := strconv.ParseUint(strings.TrimPrefix(f[2], "0x"), 16, 64)
		filesz, _ := strconv.ParseUint(strings.TrimPrefix(f[4], "0x"), 16, 64)
		if addr >= va && addr < va+filesz {
			return addr - va + off
		}
	}
	t.Fatalf("readelf: no LOAD segment holds %#x", addr)
	return 0
}

// Every sized text symbol nm lists is one probe (aliases once), at the
// file offset readelf's program headers give, for PIE and non-PIE.
func TestFunctionsAgainstBinutils(t *testing.T) {
	for _, tc := range []struct {
		name, file, src string
		flags           []string
	}{
		{"c-pie", "prog.c", cProg, []string{"-O1", "-pie", "-fPIE"}},
		{"c-nopie", "prog.c", cProg, []string{"-O1", "-no-pie", "-fno-PIE"}},
		{"cxx", "prog.cc", cxxProg, []string{"-O0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := testprog.BuildText(t, tc.file, tc.src, tc.flags...)
			obj, err := Functions(bin, nil)
			if err != nil {
				t.Fatal(err)
			}
			nm := nmFuncs(t, bin, false)
			if len(obj.Probes) != len(nm) {
				t.Errorf("%d probes, nm lists %d sized text addresses", len(obj.Probes), len(nm))
			}
			for _, p := range obj.Probes {
				names, ok := nm[p.Addr]
				if !ok {
					t.Errorf("probe %s at %#x: nm has no sized text symbol there", p.Name, p.Addr)
					continue
				}
				if !contains(names, p.Name) {
					t.Errorf("probe at %#x named %s, nm says %v", p.Addr, p.Name, names)
				}
				if want := readelfOffset(t, bin, p.Addr); p.Offset != want {
					t.Errorf("%s: offset %#x, readelf says %#x", p.Name, p.Offset, want)
				}
				if strings.HasSuffix(p.Name, "@plt") {
					t.Errorf("PLT stub %s probed", p.Name)
				}
			}
			if tc.name != "cxx" {
				// one probe at work's address, named by the global name
				// of work and alias_of_work, and covering work+1
				w := obj.find(t, "work")
				for _, p := range obj.Probes {
					if p.Addr == w.Addr && p.Name != w.Name {
						t.Errorf("probe %s at work's address %#x: want one probe there, work", p.Name, w.Addr)
					}
				}
				if w.Size < 2 {
					t.Errorf("work: %+v, want a size covering work+1", w)
				}
			}
		})
	}
}

func (o *Object) find(t *testing.T, name string) *Probe {
	t.Helper()
	for i := range o.Probes {
		if o.Probes[i].Name == name {
			return &o.Probes[i]
		}
	}
	t.Fatalf("no probe %s in %s", name, o.Path)
	return nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// The filter matches the mangled or the demangled name.
func TestFilter(t *testing.T) {
	bin := testprog.BuildText(t, "prog.cc", cxxProg, "-O0")
	for _, tc := range []struct {
		re   string
		want []string
	}{
		{`^ns::Sq::area\(int\) const$`, []string{"_ZNK2ns2Sq4areaEi"}},
		{`^_ZNK2ns2Sq4areaEi$`, []string{"_ZNK2ns2Sq4areaEi"}},
		{`^main$`, []string{"main"}},
		{`^nothing-like-this$`, nil},
	} {
		obj, err := Functions(bin, regexp.MustCompile(tc.re))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range obj.Probes {
			got = append(got, p.Name)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("filter %s: %v, want %v", tc.re, got, tc.want)
		}
	}
}

// A stripped executable falls back to .dynsym; a shared library's
// exported functions are all there.
func TestDynsymAndLibraries(t *testing.T) {
	bin := testprog.Copy(t, testprog.BuildText(t, "prog.c", cProg, "-O1", "-rdynamic"), t.TempDir())
	if out, err := exec.Command("strip", bin).CombinedOutput(); err != nil {
		t.Skipf("strip: %v %s", err, out)
	}
	obj, err := Functions(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(obj.Probes) != len(nmFuncs(t, bin, true)) {
		t.Errorf("stripped -rdynamic: %d probes, nm -D lists %d", len(obj.Probes), len(nmFuncs(t, bin, true)))
	}
	if obj.find(t, "work") == nil {
		t.Error("work not found in .dynsym")
	}
	bin2 := testprog.Copy(t, testprog.BuildText(t, "prog.c", cProg, "-O1"), t.TempDir())
	exec.Command("strip", bin2).Run()
	if obj, err := Functions(bin2, nil); err != nil || len(obj.Probes) != 0 {
		t.Errorf("stripped without -rdynamic: %v probes, %v; want none of its own", obj, err)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755)
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{script, "bad magic"},
	} {
		_, err := Functions(tc.path, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Functions(%s) = %v, want an error with %q", tc.path, err, tc.want)
		}
	}
}

func TestEventsAttrs(t *testing.T) {
	obj := &Object{Path: "/bin/x", Probes: []Probe{{Name: "f", Offset: 0x1040}, {Name: "f", Offset: 0x1080}, {Name: "ns::g h", Offset: 0x10c0}}}
	base := perf.Attr{Flags: perf.FlagDisabled | perf.FlagInherit | perf.FlagMmap | perf.FlagComm | perf.FlagEnableOnExec | perf.FlagFreq,
		SamplePeriod: 4000}
	used := map[string]bool{}
	var names []string
	for _, p := range obj.Probes {
		names = append(names, eventName(p.Name, used))
	}
	if strings.Join(names, " ") != "f f_2 ns__g_h" {
		t.Errorf("tracefs names %v", names)
	}
	if n := eventName("9lives", used); n != "_9lives" {
		t.Errorf("eventName(9lives) = %q", n)
	}
	if n := eventName(strings.Repeat("x", 100), used); len(n) > 64 {
		t.Errorf("eventName of 100 bytes is %d bytes, over MAX_EVENT_NAME_LEN", len(n))
	}
	ids := []uint64{2001, 2002, 2003}
	evs := Events(obj, "hwprof_1", names, ids, base, true)
	want := []string{"hwprof_1:f", "hwprof_1:f_2", "hwprof_1:ns__g_h"}
	for i, ev := range evs {
		a := ev.Attr
		if ev.Name != want[i] {
			t.Errorf("event %d named %q, want %q", i, ev.Name, want[i])
		}
		if a.Type != perf.TypeTracepoint || a.Config != ids[i] || a.SamplePeriod != 1 || a.Freq() ||
			a.SampleType != SampleType || a.SampleRegsUser != 0 || a.SampleStackUser != StackBytes ||
			!a.Flags.Has(perf.FlagExcludeCallchainKernel|perf.FlagInherit|perf.FlagEnableOnExec|perf.FlagDisabled) {
			t.Errorf("event %d attr %+v", i, a)
		}
		if got := a.Flags.Has(perf.FlagMmap | perf.FlagComm); got != (i == 0) {
			t.Errorf("event %d tracks mmap/comm: %v, want only the first", i, got)
		}
	}
	if lib := Events(obj, "g", names, ids, base, false); lib[0].Attr.Flags.Has(perf.FlagMmap) {
		t.Errorf("a library's first event tracks mmaps")
	}
}

// Define and Undefine against the kernel's tracefs: the probes of an object
// share one event named after its file (a multi-probe event), Go's
// morestack gets its own, and Undefine removes them all.
func TestDefineUndefine(t *testing.T) {
	testenv.Uprobes(t) // root, the uprobe PMU and tracefs, checked without this package
	dir, err := Tracefs()
	if err != nil {
		t.Fatal(err)
	}
	bin := testprog.BuildText(t, "prog.c", cProg, "-O1")
	obj, err := Functions(bin, regexp.MustCompile(`^(work|main)$`))
	if err != nil {
		t.Fatal(err)
	}
	if len(obj.Probes) != 2 {
		t.Fatalf("probes %+v, want work and main", obj.Probes)
	}
	// A third probe standing for Go's morestack, on work's entry too (two
	// events may probe one place).
	obj.Probes = append(obj.Probes, Probe{Name: "runtime.morestack_noctxt.abi0", Offset: obj.Probes[0].Offset})
	group := "hwprof_test_" + strconv.Itoa(os.Getpid())
	names, ids, err := Define(dir, group, obj, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	defer Undefine(dir, group)
	if EventCount(obj) != 2 {
		t.Errorf("EventCount = %d, want 2", EventCount(obj))
	}
	if len(ids) != 3 || ids[0] != ids[1] || ids[0] == 0 || ids[2] == ids[0] || ids[2] == 0 {
		t.Errorf("ids %v, want the first two equal, the third another", ids)
	}
	if names[0] != "prog" || names[1] != "prog" || names[2] != "runtime_morestack_noctxt_abi0" {
		t.Errorf("names %v", names)
	}
	list, _ := os.ReadFile(filepath.Join(dir, "uprobe_events"))
	for i, p := range obj.Probes {
		line := fmt.Sprintf("p:%s/%s %s:0x%016x", group, names[i], bin, p.Offset)
		if !strings.Contains(string(list), line) {
			t.Errorf("uprobe_events lacks %q:\n%s", line, list)
		}
	}
	if evs := Events(obj, group, names, ids, perf.Attr{}, true); len(evs) != 2 ||
		evs[0].Name != group+":prog" || evs[0].Attr.Config != ids[0] || evs[1].Attr.Config != ids[2] {
		t.Errorf("events %+v, want one per tracefs event", evs)
	}
	if err := Undefine(dir, group); err != nil {
		t.Fatal(err)
	}
	if list, _ := os.ReadFile(filepath.Join(dir, "uprobe_events")); strings.Contains(string(list), group) {
		t.Errorf("probes left after Undefine:\n%s", list)
	}
	if _, _, err := Define(dir, group, &Object{Path: "/no/such/file", Probes: obj.Probes[:1]}, map[string]bool{}); err == nil {
		t.Error("a probe on a missing file was defined")
	}
}

// A Go binary without a symbol table (go build -ldflags=-s, as go run
// builds) gives its functions from the pclntab: the same functions at the
// same entries and file offsets as the symbol table of the program built
// with one.
func TestGoPclntab(t *testing.T) {
	full, err := Functions(testprog.Build(t, "go/leafcalls"), nil)
	if err != nil {
		t.Fatal(err)
	}
	bin := testprog.Build(t, "go/leafcalls", "-ldflags=-s -w")
	if out, err := exec.Command("readelf", "-SW", bin).Output(); err != nil {
		t.Skipf("readelf: %v", err)
	} else if strings.Contains(string(out), ".symtab") {
		t.Fatalf("%s has a .symtab: the build did not strip it", bin)
	}
	obj, err := Functions(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	byAddr := map[uint64]Probe{}
	for _, p := range full.Probes {
		byAddr[p.Addr] = p
	}
	missing := 0
	for _, p := range obj.Probes {
		want, ok := byAddr[p.Addr]
		if !ok {
			missing++
			continue
		}
		// the symbol table's names carry an assembly function's ABI and
		// spell the pclntab's middle dot as a dot
		name := strings.TrimSuffix(strings.TrimSuffix(want.Name, ".abi0"), ".abiinternal")
		if strings.ReplaceAll(p.Name, "·", ".") != name || p.Offset != want.Offset || p.Size < want.Size {
			t.Errorf("at %#x: %s, offset %#x, size %d; the symbol table has %s, %#x, %d", p.Addr, p.Name, p.Offset, p.Size, want.Name, want.Offset, want.Size)
		}
	}
	t.Logf("%d functions from the pclntab, %d from the symbol table; %d at no symbol's address", len(obj.Probes), len(full.Probes), missing)
	if len(obj.Probes) < len(full.Probes)*9/10 || missing > len(obj.Probes)/100 {
		t.Errorf("%d functions from the pclntab (%d at no symbol's address), the symbol table has %d", len(obj.Probes), missing, len(full.Probes))
	}
	for _, name := range []string{"main.main", "main.leaf", "main.twice"} {
		if obj.find(t, name) == nil {
			t.Errorf("%s not found", name)
		}
	}

	// A damaged pclntab gives no functions (or some), never a panic.
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	sec := ef.Section(".gopclntab")
	ef.Close()
	if sec == nil {
		t.Fatal("no .gopclntab")
	}
	for i, damage := range []func(b []byte){
		func(b []byte) { clear(b[8:]) }, // the header kept, the tables zero
		func(b []byte) {
			for j := range b {
				b[j] = byte(j*131 + 7)
			}
		}, // no valid magic
		func(b []byte) {
			for j := 64; j < len(b); j += 97 {
				b[j] ^= 0xff
			}
		}, // scattered flips
	} {
		bad := slices.Clone(data)
		damage(bad[sec.Offset : sec.Offset+sec.Size])
		path := filepath.Join(t.TempDir(), fmt.Sprintf("bad%d", i))
		if err := os.WriteFile(path, bad, 0o755); err != nil {
			t.Fatal(err)
		}
		obj, err := Functions(path, nil)
		n := 0
		if obj != nil {
			n = len(obj.Probes)
		}
		t.Logf("damage %d: %d probes, %v", i, n, err)
		if n == 0 && err == nil {
			t.Errorf("damage %d: no functions and no error", i)
		}
	}
}

// Names holds each probed function under both its names, once, and
// counts the probes of every object.
func TestNames(t *testing.T) {
	objs := []*Object{
		{Probes: []Probe{{Name: "main", Demangled: "main"}, {Name: "_ZN1a1fEv", Demangled: "a::f()"}}},
		{Probes: []Probe{{Name: "g", Demangled: "g"}}},
	}
	names, n := Names(objs)
	want := map[string]bool{"main": true, "_ZN1a1fEv": true, "a::f()": true, "g": true}
	if n != 3 || !reflect.DeepEqual(names, want) {
		t.Errorf("Names = %v, %d; want %v, 3", names, n, want)
	}
}
