package addrspace

import (
	"debug/elf"
	"testing"
)

// The segments of the objects the tests map, as readelf -l shows them.
var (
	pieSegs = []Segment{
		{Offset: 0, Vaddr: 0, Filesz: 0x600, Memsz: 0x600, Flags: elf.PF_R},
		{Offset: 0x1000, Vaddr: 0x1000, Filesz: 0x2000, Memsz: 0x2000, Flags: elf.PF_R | elf.PF_X},
		{Offset: 0x3000, Vaddr: 0x4df0, Filesz: 0x300, Memsz: 0x400, Flags: elf.PF_R | elf.PF_W},
	}
	noPIESegs = []Segment{
		{Offset: 0, Vaddr: 0x400000, Filesz: 0x500, Memsz: 0x500, Flags: elf.PF_R},
		{Offset: 0x1000, Vaddr: 0x401000, Filesz: 0x3000, Memsz: 0x3000, Flags: elf.PF_R | elf.PF_X},
	}
	// a shared library whose text segment's vaddr is not its offset
	libSegs = []Segment{
		{Offset: 0, Vaddr: 0, Filesz: 0x1000, Memsz: 0x1000, Flags: elf.PF_R},
		{Offset: 0x1000, Vaddr: 0x2000, Filesz: 0x5000, Memsz: 0x5000, Flags: elf.PF_R | elf.PF_X},
	}
	vdsoSegs = []Segment{{Offset: 0, Vaddr: 0, Filesz: 0x1800, Memsz: 0x1800, Flags: elf.PF_R | elf.PF_X}}
)

func TestMappingObjAddr(t *testing.T) {
	obj := func(k Kind) *Object { return &Object{Path: k.String(), Kind: k} }
	tests := []struct {
		name string
		m    Mapping
		segs []Segment
		a    Addr
		want ObjAddr
	}{
		{"PIE text", Mapping{0x555555555000, 0x555555557000, 0x1000, obj(KindFile)}, pieSegs, 0x555555555123, 0x1123},
		{"PIE first page", Mapping{0x555555554000, 0x555555555000, 0, obj(KindFile)}, pieSegs, 0x555555554010, 0x10},
		{"PIE data, vaddr past its offset", Mapping{0x555555557000, 0x555555558000, 0x3000, obj(KindFile)}, pieSegs, 0x555555557010, 0x4e00},
		{"non-PIE executable", Mapping{0x401000, 0x404000, 0x1000, obj(KindFile)}, noPIESegs, 0x401234, 0x401234},
		{"shared library, pgoff not vaddr", Mapping{0x7f0000002000, 0x7f0000007000, 0x1000, obj(KindFile)}, libSegs, 0x7f0000002345, 0x2345},
		{"file with unknown segments: the file offset", Mapping{0x7f0000002000, 0x7f0000007000, 0x1000, obj(KindFile)}, nil, 0x7f0000002345, 0x1345},
		{"vdso: its image offset", Mapping{0x7ffff7fc1000, 0x7ffff7fc3000, 0, obj(KindVDSO)}, vdsoSegs, 0x7ffff7fc1a10, 0xa10},
		{"kernel: the runtime address", Mapping{0xffffffff81000000, 0xffffffffffffffff, 0xffffffff81000000, obj(KindKernel)}, nil, 0xffffffff81334585, 0xffffffff81334585},
		{"module", Mapping{0xffffffffc0000000, 0xffffffffc0010000, 0, obj(KindModule)}, nil, 0xffffffffc0001234, 0xffffffffc0001234},
		{"JIT: the runtime address", Mapping{0x7f1000000000, 0x7f1000010000, 0, obj(KindJIT)}, libSegs, 0x7f1000000040, 0x7f1000000040},
		{"stack", Mapping{0x7ffffffde000, 0x7ffffffff000, 0, obj(KindStack)}, nil, 0x7fffffffe000, 0x7fffffffe000},
		{"JIT function a jitdump names: its own addresses", Mapping{0x7f1000000100, 0x7f1000000200, 0x5000, &Object{Path: "jit-1.dump", Kind: KindJIT, JITCode: true}}, nil, 0x7f1000000140, 0x5040},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.ObjAddr(tt.a, tt.segs); got != tt.want {
				t.Errorf("ObjAddr(%#x) = %#x, want %#x", uint64(tt.a), uint64(got), uint64(tt.want))
			}
			lo, hi := tt.m.Linear(tt.a, tt.segs)
			if lo > tt.a || tt.a >= hi || lo < tt.m.Start || hi > tt.m.End {
				t.Fatalf("Linear(%#x) = [%#x, %#x): not around the address, within the mapping", uint64(tt.a), uint64(lo), uint64(hi))
			}
			for _, b := range []Addr{lo, hi - 1, lo + (hi-lo)/2} {
				if got, want := tt.m.ObjAddr(b, tt.segs), tt.want.Moved(tt.a, b); got != want {
					t.Errorf("%#x in Linear's [%#x, %#x): ObjAddr %#x, Moved %#x", uint64(b), uint64(lo), uint64(hi), uint64(got), uint64(want))
				}
			}
			if tt.segs != nil && tt.m.Object.Kind.Linked() {
				off, ok := FileOffset(tt.segs, tt.want)
				if wantOff := tt.m.PgOff + uint64(tt.a-tt.m.Start); !ok || off != wantOff {
					t.Errorf("FileOffset(%#x) = %#x, %v; want %#x", uint64(tt.want), off, ok, wantOff)
				}
			}
		})
	}
}

// TestLinearSegment: a file mapping's linear range is its segment's part
// of the mapping; overlapping segments, and an offset no segment holds,
// give the address alone.
func TestLinearSegment(t *testing.T) {
	file := &Object{Path: "/lib", Kind: KindFile}
	whole := Mapping{0x7f0000000000, 0x7f0000006000, 0, file} // libSegs' two segments in one mapping
	if lo, hi := whole.Linear(0x7f0000001100, libSegs); lo != 0x7f0000001000 || hi != 0x7f0000006000 {
		t.Errorf("text of a mapping of both segments: [%#x, %#x), want [0x7f0000001000, 0x7f0000006000)", uint64(lo), uint64(hi))
	}
	if lo, hi := whole.Linear(0x7f0000000100, libSegs); lo != 0x7f0000000000 || hi != 0x7f0000001000 {
		t.Errorf("first segment: [%#x, %#x), want [0x7f0000000000, 0x7f0000001000)", uint64(lo), uint64(hi))
	}
	overlap := []Segment{{Offset: 0, Vaddr: 0, Filesz: 0x2000}, {Offset: 0x1000, Vaddr: 0x5000, Filesz: 0x2000}}
	if lo, hi := whole.Linear(0x7f0000002100, overlap); hi-lo != 1 || lo != 0x7f0000002100 {
		t.Errorf("overlapping segments: [%#x, %#x), want the address alone", uint64(lo), uint64(hi))
	}
	if lo, hi := whole.Linear(0x7f0000005100, pieSegs[:1]); hi-lo != 1 || lo != 0x7f0000005100 {
		t.Errorf("an offset no segment holds: [%#x, %#x), want the address alone", uint64(lo), uint64(hi))
	}
}

func TestObjAddrOf(t *testing.T) {
	// lld lays segments out so that a segment starts mid-page: p_offset 0x2d10, p_vaddr 0x3d10.
	segs := []Segment{
		{Offset: 0, Vaddr: 0, Filesz: 0x1d10},
		{Offset: 0x1d10, Vaddr: 0x2d10, Filesz: 0x1000, Flags: elf.PF_X},
		{Offset: 0x2d10, Vaddr: 0x4d10, Filesz: 0x100, Memsz: 0x2000},
	}
	tests := []struct {
		name string
		off  uint64
		want ObjAddr
		ok   bool
		back bool // FileOffset gives off back: the address is in the file
	}{
		{"first segment", 0x100, 0x100, true, true},
		{"text segment starting mid-page", 0x1d20, 0x2d20, true, true},
		{"data segment", 0x2d20, 0x4d20, true, true},
		{"bss page past the file contents", 0x3000, 0x5000, true, false},
		{"past every segment", 0x100000, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ObjAddrOf(segs, tt.off)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ObjAddrOf(%#x) = %#x, %v; want %#x, %v", tt.off, uint64(got), ok, uint64(tt.want), tt.ok)
			}
			if back, ok := FileOffset(segs, got); tt.ok && (ok != tt.back || tt.back && back != tt.off) {
				t.Errorf("FileOffset(%#x) = %#x, %v; want %#x, %v", uint64(got), back, ok, tt.off, tt.back)
			}
		})
	}
	if off, ok := FileOffset(segs, 0x5000); ok {
		t.Errorf("FileOffset of a .bss address = %#x, true; want false", off)
	}
}
