package engine

import (
	"debug/elf"
	"encoding/binary"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
	"golang.org/x/arch/x86/x86asm"
)

const stacksC = `
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int mid(int x) { return leaf(x) + 1; }
__attribute__((noinline)) int rec(int n) { return n == 0 ? leaf(n) : rec(n - 1) + 1; }
int main(int argc, char **argv) { return mid(argc) + rec(argc); }
`

// stacksProgram is a small program built here, and the addresses in it a
// synthetic recording's stacks are made of.
type stacksProgram struct {
	path       string
	text       *elf.Prog // its executable segment
	syms       map[string]elf.Symbol
	retMainMid uint64 // the return address of main's call to mid
	retMidLeaf uint64 // of mid's call to leaf
	retRecRec  uint64 // of rec's call to itself
	notRet     uint64 // an address in main after no call instruction
}

// buildStacksProgram compiles stacksC (non-PIE: its addresses are its
// runtime addresses) and finds its call instructions by decoding it.
func buildStacksProgram(t *testing.T) *stacksProgram {
	t.Helper()
	bin := testprog.BuildText(t, "s.c", stacksC, "-O0", "-no-pie", "-fno-omit-frame-pointer")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &stacksProgram{path: bin, syms: map[string]elf.Symbol{}}
	for _, pr := range f.Progs {
		if pr.Type == elf.PT_LOAD && pr.Flags&elf.PF_X != 0 {
			p.text = pr
		}
	}
	syms, err := f.Symbols()
	if err != nil || p.text == nil {
		t.Fatalf("symbols of %s: %v (text segment %v)", bin, err, p.text)
	}
	for _, s := range syms {
		p.syms[s.Name] = s
	}
	// calls returns the return addresses of fn's direct calls to callee,
	// and the address after every instruction of fn that is no call.
	calls := func(fn, callee string) (rets, others []uint64) {
		s := p.syms[fn]
		code := make([]byte, s.Size)
		if _, err := p.text.ReadAt(code, int64(s.Value-p.text.Vaddr)); err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(code); {
			inst, err := x86asm.Decode(code[off:], 64)
			if err != nil {
				t.Fatalf("decoding %s+%#x: %v", fn, off, err)
			}
			next := s.Value + uint64(off+inst.Len)
			if rel, ok := inst.Args[0].(x86asm.Rel); ok && inst.Op == x86asm.CALL {
				if uint64(int64(next)+int64(rel)) == p.syms[callee].Value {
					rets = append(rets, next)
				}
			} else if inst.Op != x86asm.CALL {
				others = append(others, next)
			}
			off += inst.Len
		}
		return rets, others
	}
	mm, others := calls("main", "mid")
	ml, _ := calls("mid", "leaf")
	rr, _ := calls("rec", "rec")
	if len(mm) != 1 || len(ml) != 1 || len(rr) != 1 || len(others) < 2 {
		t.Fatalf("calls main->mid %x, mid->leaf %x, rec->rec %x; want one each", mm, ml, rr)
	}
	p.retMainMid, p.retMidLeaf, p.retRecRec, p.notRet = mm[0], ml[0], rr[0], others[1]
	return p
}

// stackSample is one sample of a synthetic recording: its user
// callchain (IP first) and period.
type stackSample struct {
	chain  []uint64
	period uint64
}

// writeStacksFile writes a recording of a cpu-clock event with
// frame-pointer callchains (user only) of process 100, whose program is
// mapped where it was linked.
func writeStacksFile(t *testing.T, p *stacksProgram, samples []stackSample) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stacks.data")
	w, err := perfdata.Create(path, []perfdata.EventAttr{{Attr: stacksAttr(), Name: "cpu-clock"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord(stacksMmap(p)); err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if err := w.WriteRecord(stacksSample(s.chain, uint64(1000+i), s.period)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(perfdata.Features{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// stacksAttr is the event of writeStacksFile's recordings: cpu-clock with
// frame-pointer callchains, user only.
func stacksAttr() perf.Attr {
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod | perf.SampleCallchain
	return perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, SamplePeriod: 1000,
		SampleType: st, Flags: perf.FlagExcludeKernel}
}

// stacksRecord is the header of a record of typ and size bytes (user
// mode), followed by zeros.
func stacksRecord(typ perf.RecordType, size int) []byte {
	le := binary.LittleEndian
	rec := make([]byte, size)
	le.PutUint32(rec[0:], uint32(typ))
	le.PutUint16(rec[4:], 2) // PERF_RECORD_MISC_USER
	le.PutUint16(rec[6:], uint16(size))
	return rec
}

// stacksMmap maps p's program in process 100 where it was linked.
func stacksMmap(p *stacksProgram) []byte {
	le := binary.LittleEndian
	// mirrors struct perf_record_mmap: pid, tid, addr, len, pgoff, filename
	name := append([]byte(p.path), 0)
	name = append(name, make([]byte, (8-len(name)%8)%8)...)
	mm := stacksRecord(perf.RecordMmap, 8+32+len(name))
	le.PutUint32(mm[8:], 100)
	le.PutUint32(mm[12:], 100)
	le.PutUint64(mm[16:], p.text.Vaddr)
	le.PutUint64(mm[24:], p.text.Memsz)
	le.PutUint64(mm[32:], p.text.Off)
	copy(mm[40:], name)
	return mm
}

// stacksSample is a sample of stacksAttr's event in process 100: its
// user callchain (IP first), time and period.
func stacksSample(ips []uint64, time, period uint64) []byte {
	le := binary.LittleEndian
	chain := append([]uint64{perf.ContextUser}, ips...)
	rec := stacksRecord(perf.RecordSample, 8+8+8+8+8+8+8*len(chain))
	le.PutUint64(rec[8:], ips[0])
	le.PutUint32(rec[16:], 100)
	le.PutUint32(rec[20:], 100)
	le.PutUint64(rec[24:], time)
	le.PutUint64(rec[32:], period)
	le.PutUint64(rec[40:], uint64(len(chain)))
	for j, a := range chain {
		le.PutUint64(rec[48+8*j:], a)
	}
	return rec
}

// TestBrokenAndCutStacks: stacks whose return addresses are in no mapping
// or after no call are one [broken stack] function, without edges or
// contexts of their own, their weight in the total; a stack of exactly
// the kernel's limit is cut, counted, and folded as it is.
func TestBrokenAndCutStacks(t *testing.T) {
	p := buildStacksProgram(t)
	ipLeaf := p.syms["leaf"].Value + 4
	ipRec := p.syms["rec"].Value + 4
	whole := stackSample{[]uint64{ipLeaf, p.retMidLeaf, p.retMainMid}, 100}
	noMapping := stackSample{[]uint64{ipLeaf, p.retMidLeaf, 0x7ffd12345678, 0x7ffd12345678, 0x7ffd12345670}, 7}
	notAfterCall := stackSample{[]uint64{ipLeaf, p.notRet, p.retMainMid}, 11}
	// outermost, where runtimes make return addresses up (Go's
	// goexit+1), only the mapping is judged
	outerNotAfterCall := stackSample{[]uint64{ipLeaf, p.retMidLeaf, p.notRet}, 17}
	// a chain of exactly defaultMaxStack entries: the IP and 126 returns
	cut := stackSample{[]uint64{ipRec}, 13}
	for len(cut.chain) < defaultMaxStack {
		cut.chain = append(cut.chain, p.retRecRec)
	}
	samples := []stackSample{whole, noMapping, notAfterCall, whole, cut, noMapping, outerNotAfterCall}
	path := writeStacksFile(t, p, samples)

	for _, to := range []testOptions{{}, {inline: true, noFast: true, eachStack: true}} {
		prof, err := load(path, LoadOptions{}, to)
		if err != nil {
			t.Fatal(err)
		}
		st := prof.Recording.Stacks
		// the cut stack is judged at the limit this machine's sysctl sets
		if lim, err := perf.ReadKernelLimits(); err == nil && lim.MaxStack != 0 && lim.MaxStack != defaultMaxStack {
			t.Logf("perf_event_max_stack is %d here: the %d-frame stack is not cut", lim.MaxStack, defaultMaxStack)
			st.Cut, st.CutWeight, st.MaxStack = 1, 13, defaultMaxStack
		}
		want := profile.StackStats{Broken: 3, BrokenWeight: 7 + 11 + 7, Cut: 1, CutWeight: 13, MaxStack: defaultMaxStack}
		if st != want {
			t.Errorf("%+v: stacks %+v, want %+v", to, st, want)
		}
		tot := prof.Map.Totals()
		if tot.Samples != 100+7+11+100+13+7+17 {
			t.Errorf("total weight %d, want every sample's", tot.Samples)
		}
		brokenID := slices.IndexFunc(prof.Funcs, func(f profile.Func) bool { return f.Name == profile.BrokenStack })
		if brokenID < 0 {
			t.Fatalf("no %s function in %+v", profile.BrokenStack, prof.Funcs)
		}
		if f, _ := prof.Map.Function(ccmap.FuncID(brokenID)); f.Self != 25 || f.Total != 25 {
			t.Errorf("%s: self %d total %d, want 25", profile.BrokenStack, f.Self, f.Total)
		}
		var edges []string
		for _, e := range prof.Map.Edges(ccmap.Total) {
			edges = append(edges, prof.FuncName(e.Site.Caller)+"->"+prof.FuncName(e.Callee))
		}
		slices.Sort(edges)
		if want := []string{"main->mid", "main->mid", "mid->leaf", "rec->rec"}; !slices.Equal(edges, want) { // main->mid twice: from main's call, and from notRet in main
			t.Errorf("edges %q, want %q (none from a broken stack)", edges, want)
		}
		for _, c := range prof.Map.Roots(ccmap.Total) {
			if path := prof.Map.Path(c.ID); prof.FuncName(path[0].Func) == profile.BrokenStack && len(prof.Map.Children(c.ID, ccmap.Total)) > 0 {
				t.Errorf("the %s context has children", profile.BrokenStack)
			}
		}
		var warnBroken, warnCut bool
		for _, w := range prof.Warnings {
			warnBroken = warnBroken || strings.Contains(w, "3 samples (9.80% of the sampled weight) have stacks that cannot be real")
			warnCut = warnCut || strings.Contains(w, "1 samples (5.10% of the sampled weight) have stacks cut at the kernel's limit of 127 frames") &&
				strings.Contains(w, "--max-stack")
		}
		if !warnBroken || (!warnCut && st.Cut > 0 && prof.Recording.Stacks.Cut > 0) {
			t.Errorf("warnings %q: want the broken (%v) and cut (%v) ones with their shares", prof.Warnings, warnBroken, warnCut)
		}
	}
}

// TestBrokenStackFixture: perf's own recording (perf.data.callgraph-3.8,
// Linux 3.8) has stacks whose frame-pointer walk ran into a loop of two
// addresses in no mapping of the process until the 127-frame limit
// (perf script shows them as [unknown]): they are broken stacks.
func TestBrokenStackFixture(t *testing.T) {
	path := filepath.Join(fixtures.Dir(t), "perf_data_converter", "perf.data.callgraph-3.8")
	var loops, brokenLoops int
	var fmap []ccmap.FuncID
	var folded [][]ccmap.Frame
	var chains [][]uint64
	p, err := load(path, LoadOptions{SymFS: t.TempDir()}, testOptions{inline: true, noFast: true, funcMap: &fmap,
		sampleHook: func(s *perf.Sample, frames []ccmap.Frame) {
			chains = append(chains, slices.Clone(perf.SplitCallchain(s.Callchain).User))
			folded = append(folded, slices.Clone(frames))
		}})
	if err != nil {
		t.Fatal(err)
	}
	for i, user := range chains {
		// the loop: the same two addresses alternating to the end
		n := len(user)
		if n < 10 || user[n-1] != user[n-3] || user[n-2] != user[n-4] || user[n-1] == user[n-2] {
			continue
		}
		loops++
		if len(folded[i]) == 1 && p.Funcs[fmap[folded[i][0].Func]].Name == profile.BrokenStack {
			brokenLoops++
		}
	}
	if loops == 0 || brokenLoops != loops {
		t.Errorf("%d of %d looping stacks folded as %s, want all (and some)", brokenLoops, loops, profile.BrokenStack)
	}
	if st := p.Recording.Stacks; st.Broken < uint64(loops) {
		t.Errorf("stacks %+v: fewer broken than the %d loops", st, loops)
	}
	for _, e := range p.Map.Edges(ccmap.Total) {
		if p.FuncName(e.Site.Caller) == profile.BrokenStack || p.FuncName(e.Callee) == profile.BrokenStack {
			t.Errorf("edge %v involves %s", e, profile.BrokenStack)
		}
	}
}
