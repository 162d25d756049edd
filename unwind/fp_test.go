package unwind

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"github.com/hwprof/hwprof/internal/fixtures"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/perf"
)

// fakeMaps maps [0x400000, 0x500000) to /bin/prog (object addresses
// 0x1000 lower) and the kernel half to the kernel, for every process.
type fakeMaps struct{}

var (
	progObj   = &addrspace.Object{Path: "/bin/prog", Kind: addrspace.KindFile}
	progMap   = addrspace.Mapping{Start: 0x400000, End: 0x500000, Object: progObj}
	progSegs  = []addrspace.Segment{{Offset: 0, Vaddr: 0x3ff000, Filesz: 0x100000, Memsz: 0x100000}}
	kernelObj = &addrspace.Object{Path: "[kernel.kallsyms]_text", Kind: addrspace.KindKernel}
	kernelMap = addrspace.Mapping{Start: 0xffffffff80000000, End: ^addrspace.Addr(0), Object: kernelObj}
)

func (fakeMaps) Lookup(pid, tid uint32, t uint64, a addrspace.Addr) (addrspace.Mapping, addrspace.ObjAddr, bool) {
	switch {
	case progMap.Contains(a):
		return progMap, progMap.ObjAddr(a, progSegs), true
	case a >= kernelMap.Start:
		return kernelMap, kernelMap.ObjAddr(a, nil), true
	}
	return addrspace.Mapping{}, 0, false
}

// want is a frame as the tests write it.
type want struct {
	addr   uint64
	kind   FrameKind
	kernel bool
	obj    uint64 // 0: unmapped
}

func got(frames []Frame) []want {
	var out []want
	for _, f := range frames {
		w := want{addr: uint64(f.Addr), kind: f.Kind, kernel: f.Kernel}
		if f.Object != nil {
			w.obj = uint64(f.ObjAddr)
		}
		out = append(out, w)
	}
	return out
}

const (
	kIP  = 0xffffffff81000100
	kRA1 = 0xffffffff81000200
	kRA2 = 0xffffffff81000300
)

func TestAppendCallchain(t *testing.T) {
	tests := []struct {
		name  string
		mode  uint16
		ip    uint64
		chain []uint64 // nil: no PERF_SAMPLE_CALLCHAIN
		want  []want
	}{
		{
			name: "user sample", mode: perf.MiscUser, ip: 0x401000,
			chain: []uint64{perf.ContextUser, 0x401000, 0x402005, 0x403009},
			want: []want{
				{0x401000, FrameIP, false, 0x400000},
				{0x402005, FrameReturn, false, 0x401005},
				{0x403009, FrameReturn, false, 0x402009},
			},
		},
		{
			name: "kernel sample with the user part after it", mode: perf.MiscKernel, ip: kIP,
			chain: []uint64{perf.ContextKernel, kIP, kRA1, kRA2, perf.ContextUser, 0x401010, 0x402005},
			want: []want{
				{kIP, FrameIP, true, kIP},
				{kRA1, FrameReturn, true, kRA1},
				{kRA2, FrameReturn, true, kRA2},
				{0x401010, FrameIP, false, 0x400010},
				{0x402005, FrameReturn, false, 0x401005},
			},
		},
		{
			name: "kernel thread: kernel part only", mode: perf.MiscKernel, ip: kIP,
			chain: []uint64{perf.ContextKernel, kIP, kRA1},
			want:  []want{{kIP, FrameIP, true, kIP}, {kRA1, FrameReturn, true, kRA1}},
		},
		{
			name: "return address into unmapped memory", mode: perf.MiscUser, ip: 0x401000,
			chain: []uint64{perf.ContextUser, 0x401000, 0x7f0000001234},
			want:  []want{{0x401000, FrameIP, false, 0x400000}, {0x7f0000001234, FrameReturn, false, 0}},
		},
		{
			name: "return address at the start of a mapping belongs to the mapping before",
			mode: perf.MiscUser, ip: 0x401000,
			chain: []uint64{perf.ContextUser, 0x401000, 0x400000},
			want:  []want{{0x401000, FrameIP, false, 0x400000}, {0x400000, FrameReturn, false, 0}},
		},
		{
			name: "no callchain: the sample IP alone", mode: perf.MiscUser, ip: 0x401234,
			want: []want{{0x401234, FrameIP, false, 0x400234}},
		},
		{
			name: "chain without markers (synthesized)", mode: perf.MiscUser, ip: 0x401000,
			chain: []uint64{0x401000, 0x402005},
			want:  []want{{0x401000, FrameIP, false, 0x400000}, {0x402005, FrameReturn, false, 0x401005}},
		},
		{
			name: "guest entries are dropped", mode: perf.MiscUser, ip: 0x401000,
			chain: []uint64{perf.ContextUser, 0x401000, perf.ContextGuest, 0x12345},
			want:  []want{{0x401000, FrameIP, false, 0x400000}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &perf.Sample{RecordHeader: perf.RecordHeader{Type: perf.RecordSample, Misc: tt.mode},
				Present: perf.SampleIP | perf.SampleTID, IP: tt.ip, PID: 1, TID: 1}
			if tt.chain != nil {
				s.Present |= perf.SampleCallchain
				s.Callchain = tt.chain
			}
			frames := AppendCallchain(nil, s, fakeMaps{})
			if g := got(frames); !slices.Equal(g, tt.want) {
				t.Errorf("frames\n got %+v\nwant %+v", g, tt.want)
			}
			if frames2, stop := New(Options{}).Unwind(s, fakeMaps{}); len(frames2) != len(frames) || stop != StopChainEnd {
				t.Errorf("Unwind (auto → fp) = %d frames, %v; want %d, %v", len(frames2), stop, len(frames), StopChainEnd)
			}
		})
	}
}

func TestLookupAddr(t *testing.T) {
	tests := []struct {
		name string
		f    Frame
		want addrspace.ObjAddr
	}{
		{"instruction pointer", Frame{Kind: FrameIP, ObjAddr: 0x1000}, 0x1000},
		{"return address: the call before it", Frame{Kind: FrameReturn, ObjAddr: 0x1005}, 0x1004},
		{"LBR call site: the call itself", Frame{Kind: FrameCallSite, ObjAddr: 0x1000}, 0x1000},
		{"return address 0 stays 0", Frame{Kind: FrameReturn}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if g := tt.f.LookupAddr(); g != tt.want {
				t.Errorf("LookupAddr = %#x, want %#x", uint64(g), uint64(tt.want))
			}
		})
	}
}

// scriptCallchains reads the frame addresses of every sample from perf
// script output: a sample line, then one "\tADDR SYM (DSO)" line per frame.
func scriptCallchains(t *testing.T, path string) [][]uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]uint64
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "\t") && in:
			fields := strings.Fields(line)
			a, err := strconv.ParseUint(fields[0], 16, 64)
			if err != nil {
				t.Fatalf("%s: frame line %q: %v", path, line, err)
			}
			out[len(out)-1] = append(out[len(out)-1], a)
		case strings.HasSuffix(strings.TrimSpace(line), ":") && !strings.Contains(line, "PERF_RECORD"):
			out = append(out, nil)
			in = true
		default:
			in = false
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCallchainFixtures splits the frame-pointer callchains of real perf
// recordings (kernel and user parts, modules, frames in no mapping) and
// compares every sample's frames with what perf 6.1's `perf script` printed
// for it: the object address for mapped frames (the kernel's is its runtime
// address), the runtime address for unmapped ones.
func TestCallchainFixtures(t *testing.T) {
	fx := fixtures.Dir(t)
	for _, name := range []string{
		"perf.data.callgraph-3.4",
		"perf.data.callgraph-3.8",
		"perf.data.callgraph_and_branch-3.4",
		"perf.data.callgraph_and_branch-3.8",
	} {
		t.Run(name, func(t *testing.T) {
			data := filepath.Join(fx, "perf_data_converter", name)
			want := scriptCallchains(t, filepath.Join(fx, "expected", "perf_data_converter", name+".script.txt.gz"))
			n, mismatched := compareCallchains(t, data, want)
			if n != len(want) {
				t.Errorf("%d samples, perf script printed %d", n, len(want))
			}
			if mismatched > 0 {
				t.Errorf("%d of %d samples differ from perf script", mismatched, n)
			}
			t.Logf("%d samples compared", n)
		})
	}
}

func compareCallchains(t *testing.T, data string, want [][]uint64) (n, mismatched int) {
	var frames []Frame
	replay(t, data, func(s *perf.Sample, m *procmap.Map) {
		frames = AppendCallchain(frames[:0], s, m)
		var g []uint64
		for _, f := range frames {
			if f.Object != nil {
				g = append(g, uint64(f.ObjAddr))
			} else {
				g = append(g, uint64(f.Addr))
			}
		}
		g = g[:min(len(g), 127)] // perf script's max stack
		if n < len(want) && !slices.Equal(g, want[n]) {
			if mismatched < 3 {
				t.Errorf("sample %d (pid %d, time %d):\n got %s\nwant %s", n, s.PID, s.Time, hexes(g), hexes(want[n]))
			}
			mismatched++
		}
		n++
	})
	return n, mismatched
}

func hexes(a []uint64) string {
	var b strings.Builder
	for _, v := range a {
		fmt.Fprintf(&b, "%x ", v)
	}
	return b.String()
}
