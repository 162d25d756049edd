package engine

import (
	"debug/elf"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/symbolize"
)

// The autofdo LBR recordings of the shared fixtures (real Intel hardware,
// -j any, no callchains) with the profiled programs beside them.
var lbrFixtures = []struct {
	recording, binary string
	samples           uint64 // perf 6.1's count (fixtures/EXPECTED.tsv)
	depth             int
}{
	{"propeller_sample_1.perfdata1", "propeller_sample_1.bin", 3740, 32},
	{"test.lbr", "test.binary", 9232, 16},
}

// TestLoadLBRFixtures loads the real LBR recordings and checks the
// function-level call edges against an independent reading: package lbr's
// own Decoder over the same file, reading code from the binary's
// executable segments (as its test against perf script does), each
// appearance weighed by the Estimator, each edge's ends symbolized with
// the binary and summed per (caller, callee) function pair. Counts may differ by the
// loader's integer rounding: less than one per address-level edge.
func TestLoadLBRFixtures(t *testing.T) {
	dir := fixtures.Dir(t)
	for _, fx := range lbrFixtures {
		t.Run(fx.recording, func(t *testing.T) {
			rec := filepath.Join(dir, "autofdo", fx.recording)
			bin := filepath.Join(dir, "autofdo", fx.binary)
			if _, err := os.Stat(bin); err != nil {
				t.Skipf("binary absent: %v", err)
			}
			recorded := recordedPath(t, rec, fx.binary)
			p, err := Load(rec, LoadOptions{Objects: map[string]string{recorded: bin}, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if p.Recording.Source != profile.LBR || !p.HasCalls {
				t.Errorf("source %q, HasCalls %v; want lbr with calls", p.Recording.Source, p.HasCalls)
			}
			if p.Recording.Samples != fx.samples {
				t.Errorf("%d samples, perf counts %d", p.Recording.Samples, fx.samples)
			}
			want, slack := lbrEdgesByFunction(t, rec, bin, recorded, fx.depth)
			got := map[[2]string]uint64{}
			for _, e := range p.Map.Edges(ccmap.Calls) {
				if e.Calls == 0 {
					continue
				}
				caller, callee := p.Funcs[e.Site.Caller], p.Funcs[e.Callee]
				if caller.Object != recorded || callee.Object != recorded {
					continue // edges into libraries that are not here
				}
				got[[2]string{caller.Name, callee.Name}] += e.Calls
				if s, ok := p.Sites[e.Site]; !ok || s.Object != recorded {
					t.Errorf("edge %s -> %s: site %+v (present %v)", caller.Name, callee.Name, s, ok)
				}
			}
			if len(want) == 0 {
				t.Fatal("package lbr found no edges in the program")
			}
			for k, w := range want {
				if g := got[k]; math.Abs(float64(g)-w) > float64(slack[k]) {
					t.Errorf("edge %s -> %s: %d calls, package lbr estimates %.1f (tolerance %d)", k[0], k[1], g, w, slack[k])
				}
			}
			for k, g := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("edge %s -> %s: %d calls, absent from package lbr's reading", k[0], k[1], g)
				}
			}
			top := p.Map.DCG(ccmap.Calls).Edges[0]
			t.Logf("%d function edges in the program; hottest %s -> %s: %d calls", len(want),
				p.Funcs[top.Site.Caller].Name, p.Funcs[top.Callee].Name, top.Weight)
		})
	}
}

// recordedPath finds the path under which the recording mapped the
// program (it was recorded elsewhere, under another name).
func recordedPath(t *testing.T, rec, binary string) string {
	t.Helper()
	r, err := perfdata.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		if ty := r.Record().Type(); ty != perf.RecordMmap && ty != perf.RecordMmap2 {
			continue
		}
		d, err := r.Decode()
		if err != nil {
			t.Fatal(err)
		}
		name := ""
		switch m := d.(type) {
		case *perf.Mmap:
			name = m.Filename
		case *perf.Mmap2:
			name = m.Filename
		}
		if b := filepath.Base(name); b == binary || b == binary+".gen" {
			return name
		}
	}
	t.Fatalf("%s maps no %s", rec, binary)
	return ""
}

// lbrEdgesByFunction reads the recording with package lbr alone and
// returns the estimated calls per (caller, callee) function of the
// program, with the number of address-level edges behind each.
func lbrEdgesByFunction(t *testing.T, rec, bin, recorded string, depth int) (map[[2]string]float64, map[[2]string]int) {
	t.Helper()
	r, err := perfdata.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var bias = map[uint32]uint64{} // pid -> runtime address of the program's link address 0
	code := binaryCode(t, bin, bias)
	dec := lbr.NewDecoder(code)
	est := lbr.Estimator{Depth: depth}
	type edge struct {
		pid          uint32
		site, callee addrspace.Addr
	}
	edges := map[edge]float64{}
	var s perf.Sample
	var calls []lbr.Call
	for r.Next() {
		switch r.Record().Type() {
		case perf.RecordSample:
			if err := r.DecodeSample(&s); err != nil {
				t.Fatal(err)
			}
			calls = dec.Decode(calls[:0], s.PID, s.Branches)
			period := s.Period
			if !s.Has(perf.SamplePeriod) {
				period = r.Format().Attr(s.Attr).SamplePeriod
			}
			for _, c := range calls {
				edges[edge{s.PID, c.Site, c.Callee}] += est.Weight(period, c.Index)
			}
		case perf.RecordMmap, perf.RecordMmap2:
			d, err := r.Decode()
			if err != nil {
				t.Fatal(err)
			}
			var pid uint32
			var addr, pgoff uint64
			var name string
			switch m := d.(type) {
			case *perf.Mmap:
				pid, addr, pgoff, name = m.PID, m.Addr, m.PgOff, m.Filename
			case *perf.Mmap2:
				pid, addr, pgoff, name = m.PID, m.Addr, m.PgOff, m.Filename
			}
			if name == recorded {
				if _, ok := bias[pid]; !ok {
					bias[pid] = loadBias(t, bin, addr, pgoff)
				}
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	obj, err := symbolize.Open(symbolize.ObjectKey{Path: bin}, symbolize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := func(pid uint32, a addrspace.Addr) (string, bool) {
		b, ok := bias[pid]
		if !ok || uint64(a) < b {
			return "", false
		}
		l := obj.Symbolize([]addrspace.ObjAddr{addrspace.ObjAddr(uint64(a) - b)})[0]
		if l.Symbol == nil {
			return fmt.Sprintf("[%s+%#x]", filepath.Base(recorded), uint64(a)-b), true
		}
		return l.Symbol.Name.Short, true
	}
	want := map[[2]string]float64{}
	slack := map[[2]string]int{}
	for e, calls := range edges {
		caller, ok1 := name(e.pid, e.site)
		callee, ok2 := name(e.pid, e.callee)
		if !ok1 || !ok2 {
			continue
		}
		k := [2]string{caller, callee}
		want[k] += calls
		slack[k]++
	}
	return want, slack
}

// binaryCode reads the code of bin, at its load bias in each process
// (bias, filled as the recording maps it): the bytes of the executable
// PT_LOAD segment holding the link address.
func binaryCode(t *testing.T, bin string, bias map[uint32]uint64) lbrCodeFunc {
	t.Helper()
	file, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	segs, err := procmap.ReadSegments(bin)
	if err != nil {
		t.Fatal(err)
	}
	return func(pid uint32, a addrspace.Addr) ([]byte, bool) {
		b, ok := bias[pid]
		if !ok || uint64(a) < b {
			return nil, false
		}
		la := uint64(a) - b
		for _, s := range segs {
			if s.Flags&elf.PF_X != 0 && la >= s.Vaddr && la-s.Vaddr < s.Filesz && s.Offset+s.Filesz <= uint64(len(file)) {
				off := s.Offset + la - s.Vaddr
				return file[off:min(off+lbr.MaxInstLen, s.Offset+s.Filesz)], true
			}
		}
		return nil, false
	}
}

// lbrCodeFunc is a function that is an lbr.CodeReader.
type lbrCodeFunc func(pid uint32, a addrspace.Addr) ([]byte, bool)

func (f lbrCodeFunc) Code(pid uint32, a addrspace.Addr) ([]byte, bool) { return f(pid, a) }

// loadBias is the runtime address of link address 0 for an executable
// mapping of bin at addr from file offset pgoff (0 for a non-PIE
// executable).
func loadBias(t *testing.T, bin string, addr, pgoff uint64) uint64 {
	t.Helper()
	segs, err := procmap.ReadSegments(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if s.Flags&elf.PF_X != 0 && pgoff >= s.Offset&^0xfff && pgoff < s.Offset+s.Filesz {
			return addr - (s.Vaddr - (s.Offset - pgoff))
		}
	}
	t.Fatalf("%s: no segment holds offset %#x", bin, pgoff)
	return 0
}
