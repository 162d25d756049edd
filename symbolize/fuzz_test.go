package symbolize

import (
	"os"
	"path/filepath"
	"testing"
)

// tinyELF is testdata/tiny.c built with `gcc -O2 -g -nostdlib -static
// -Wl,-z,norelro -Wl,-z,noseparate-code` and `objcopy -R .comment`: 2.5 KB
// with symbols, DWARF 5 (an inlined function), .eh_frame and a build-id
// note. tinyLeaf is an address in its function leaf.
const (
	tinyELF  = "testdata/tiny.elf"
	tinyLeaf = 0x400112
)

// FuzzOpen opens mutated ELF files: Open and Symbolize return errors or
// results, never panic.
//
// The input is a patch of tiny.elf (bytes written at an offset, and bytes
// cut off the end), not a whole file: the fuzzer minimises every input
// that finds new code, trying to remove each byte in turn, and with whole
// files (19 KB) every such input took the 60 s limit, during which no
// other input ran (163 executions in 2 minutes). A patch of a few bytes
// is minimised at once, and every input is a file that gets past the ELF
// header into the sections. Each worker writes its files over one path:
// Open reads a path.
func FuzzOpen(f *testing.F) {
	seed, err := os.ReadFile(tinyELF)
	if err != nil {
		f.Fatal(err)
	}
	p := filepath.Join(f.TempDir(), "obj")
	f.Add(uint16(0), []byte{}, uint16(0), uint64(tinyLeaf))
	f.Add(uint16(0x28), []byte{0xff, 0xff}, uint16(0), uint64(tinyLeaf)) // e_shoff
	f.Add(uint16(0x3c), []byte{0x40}, uint16(0), uint64(tinyLeaf))       // e_shnum
	f.Add(uint16(0x1a8), []byte{0xff, 0xff, 0xff}, uint16(0), uint64(0)) // .debug_info
	f.Add(uint16(0), []byte{}, uint16(0x200), uint64(tinyLeaf))          // truncated
	f.Fuzz(func(t *testing.T, off uint16, patch []byte, cut uint16, addr uint64) {
		data := append([]byte(nil), seed...)
		if int(off) < len(data) {
			copy(data[off:], patch)
		}
		data = data[:len(data)-int(cut)%len(data)]
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		o, err := Open(ObjectKey{Path: p}, Options{DebugRoots: []string{}})
		if err != nil {
			return
		}
		for _, l := range o.Symbolize([]Addr{Addr(addr), Addr(addr + 1), 0, ^Addr(0)}) {
			if l.Symbol != nil && l.Symbol.Start > l.Addr {
				t.Fatalf("symbol %+v starts after %#x", l.Symbol, uint64(l.Addr))
			}
		}
	})
}

// TestFuzzOpenSeed: FuzzOpen's file resolves tinyLeaf to leaf with a file
// and line from DWARF, so that the fuzzer starts from a file that reaches
// the symbol table and DWARF.
func TestFuzzOpenSeed(t *testing.T) {
	o, err := Open(ObjectKey{Path: tinyELF}, Options{DebugRoots: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	l := o.Symbolize([]Addr{tinyLeaf})[0]
	if l.Symbol == nil || l.Symbol.Name.Raw != "leaf" || len(l.Frames) == 0 || l.Frames[len(l.Frames)-1].File == "" {
		t.Errorf("address %#x: %+v, want leaf with a file and line", tinyLeaf, l)
	}
}
