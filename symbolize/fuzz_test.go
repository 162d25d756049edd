package symbolize

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen opens mutated ELF files: Open and Symbolize return errors or
// results, never panic.
func FuzzOpen(f *testing.F) {
	need(f, "gcc")
	dir := f.TempDir()
	bin := buildNative(f, dir, "gcc", "prog.c", "-O2", "-g")
	seed, err := os.ReadFile(bin)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, uint64(0x1150))
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		p := filepath.Join(t.TempDir(), "obj")
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
