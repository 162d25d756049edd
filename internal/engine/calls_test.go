package engine

import (
	"debug/elf"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/perf/synth"
	"github.com/hwprof/hwprof/profile"
	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"
)

// directCalls returns the addresses of the direct calls in function fn
// of the ELF file f, by callee name.
func directCalls(t *testing.T, f *elf.File, fn string) map[string][]uint64 {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	byAddr := map[uint64]string{}
	var start, size uint64
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			byAddr[s.Value] = s.Name
			if s.Name == fn {
				start, size = s.Value, s.Size
			}
		}
	}
	text := f.Section(".text")
	code, err := text.Data()
	if err != nil || start == 0 {
		t.Fatalf("no %s in .text: %v", fn, err)
	}
	out := map[string][]uint64{}
	for pc := start; pc < start+size; {
		inst, err := x86asm.Decode(code[pc-text.Addr:], 64)
		if err != nil {
			t.Fatalf("decode at %#x: %v", pc, err)
		}
		if rel, ok := inst.Args[0].(x86asm.Rel); ok && inst.Op == x86asm.CALL {
			target := pc + uint64(inst.Len) + uint64(int64(rel))
			out[byAddr[target]] = append(out[byAddr[target]], pc)
		}
		pc += uint64(inst.Len)
	}
	return out
}

// TestCallsSamples folds samples of a precise calls-retired event (no
// branch stack) into call edges: with precise_ip 2 and the exact-IP bit,
// the IP is the call instruction, the callee its decoded target, and each
// sample stands for the period's calls. The recording is synthesized (no
// hardware PMU here) around a program built by the test, whose code the
// loader reads to decode the calls.
func TestCallsSamples(t *testing.T) {
	bin := testprog.BuildText(t, "calls.c", `
__attribute__((noinline)) int foo(int x) { return x + 1; }
__attribute__((noinline)) int bar(int x) { return x * 2; }
int main(void) { int s = 0; for (int i = 0; i < 1000; i++) { s += foo(s); s += bar(s); } return s & 1; }
`, "-O1", "-no-pie", "-fno-omit-frame-pointer")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls := directCalls(t, f, "main")
	if len(calls["foo"]) != 1 || len(calls["bar"]) != 1 {
		t.Fatalf("main's direct calls %v: want one to foo and one to bar", calls)
	}
	var text *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
		}
	}
	if text == nil {
		t.Fatal("no executable segment")
	}

	const pid, period = 4242, 10007
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod | perf.SampleCallchain
	attr := perf.Attr{Type: perf.TypeRaw, Config: 0x20c4, SamplePeriod: period, SampleType: st, PreciseIP: 2,
		Flags: perf.FlagSampleIDAll | perf.FlagExcludeKernel | perf.FlagMmap2}
	path := filepath.Join(t.TempDir(), "calls.data")
	w, err := perfdata.Create(path, []perfdata.EventAttr{{Attr: attr, IDs: []uint64{1}, Name: "calls"}})
	if err != nil {
		t.Fatal(err)
	}
	m := synth.Mapping{
		Start: text.Vaddr &^ 0xfff, End: (text.Vaddr + text.Memsz + 0xfff) &^ 0xfff, Pgoff: text.Off &^ 0xfff,
		Prot: unix.PROT_READ | unix.PROT_EXEC, Flags: unix.MAP_PRIVATE, Path: bin,
	}
	if err := w.WriteRecord(synth.AppendMmap2(nil, pid, pid, m, st, synth.SampleID{PID: pid, TID: pid, Time: 1})); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	sample := func(time, ip uint64) []byte {
		chain := []uint64{perf.ContextUser, ip, 0x401000} // the IP, then main's caller (not decoded)
		b := make([]byte, 8, 64)
		le.PutUint32(b[0:], uint32(perf.RecordSample))
		le.PutUint16(b[4:], 2|perf.MiscExactIP) // PERF_RECORD_MISC_USER
		b = le.AppendUint64(b, ip)
		b = le.AppendUint32(b, pid)
		b = le.AppendUint32(b, pid)
		b = le.AppendUint64(b, time)
		b = le.AppendUint64(b, period)
		b = le.AppendUint64(b, uint64(len(chain)))
		for _, c := range chain {
			b = le.AppendUint64(b, c)
		}
		le.PutUint16(b[6:], uint16(len(b)))
		return b
	}
	want := map[string]int{"foo": 30, "bar": 10}
	time := uint64(10)
	for callee, n := range want {
		for range n {
			time++
			if err := w.WriteRecord(sample(time, calls[callee][0])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(perfdata.Features{}); err != nil {
		t.Fatal(err)
	}

	p, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Recording.Source != profile.Calls || !p.HasCalls {
		t.Errorf("source %q, HasCalls %v; want calls with call counts", p.Recording.Source, p.HasCalls)
	}
	got := map[string]uint64{}
	for _, e := range p.Map.Edges(ccmap.Calls) {
		if e.Calls > 0 {
			got[p.Funcs[e.Site.Caller].Name+"→"+p.Funcs[e.Callee].Name] += e.Calls
		}
	}
	for callee, n := range want {
		if k := "main→" + callee; got[k] != uint64(n)*period {
			t.Errorf("%s: %d calls, want %d samples × %d", k, got[k], n, period)
		}
	}
	if len(got) != len(want) {
		t.Errorf("call edges %v, want only main→foo and main→bar", got)
	}
	for _, warn := range p.Warnings {
		t.Logf("warning: %s", warn)
	}
}
