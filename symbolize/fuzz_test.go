package symbolize

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
)

// tinyELF is testdata/tiny.c built with `gcc -O2 -g -nostdlib -static
// -Wl,-z,norelro -Wl,-z,noseparate-code` and `objcopy -R .comment`: 2.5 KB
// with symbols, DWARF 5 (an inlined function), .eh_frame and a build-id
// note. tinyLeaf is an address in its function leaf.
const (
	tinyELF  = "testdata/tiny.elf"
	tinyLeaf = 0x400112
)

// fuzzOpenInput is one input of FuzzOpen: a patch of tiny.elf (bytes
// written at an offset, and bytes cut off the end) and an address to look
// up.
type fuzzOpenInput struct {
	off   uint16
	patch []byte
	cut   uint16
	addr  uint64
}

// maxPatch bounds the patch: longer patches are cut. The fuzzer minimises
// every input that finds new code by trying to remove each byte in turn;
// a bound keeps that quick (a long patch, mostly bytes that changed
// nothing, took 10 s to minimise, during which no other input ran).
const maxPatch = 64

// fuzzOpenOnce runs FuzzOpen's body: it opens the patched file in memory
// (openELF: Open without the file system, which costs more than the rest)
// and looks up in.addr, the next address and both ends of the address
// space, with DWARF (Open) and with its line tables alone (OpenSymbols).
// Open and Symbolize return errors or results, never panic.
func fuzzOpenOnce(t testing.TB, seed []byte, in fuzzOpenInput) {
	data := bytes.Clone(seed)
	if int(in.off) < len(data) {
		copy(data[in.off:], in.patch[:min(len(in.patch), maxPatch)])
	}
	data = data[:len(data)-int(in.cut)%len(data)]
	for _, withDWARF := range []bool{true, false} {
		o, err := openELF(ObjectKey{Path: "fuzz.elf"}, bytes.NewReader(data), withDWARF)
		if err != nil {
			return
		}
		for _, l := range o.Symbolize([]addrspace.ObjAddr{addrspace.ObjAddr(in.addr), addrspace.ObjAddr(in.addr + 1), 0, ^addrspace.ObjAddr(0)}) {
			if l.Symbol != nil && l.Symbol.Start > l.Addr {
				t.Fatalf("symbol %+v starts after %#x", l.Symbol, uint64(l.Addr))
			}
		}
	}
}

// FuzzOpen opens mutated ELF files: Open and Symbolize return errors or
// results, never panic.
//
// The input is a patch of tiny.elf, not a whole file, so that every input
// is a file that gets past the ELF header into the sections, and the
// fuzzer's minimisation of a patch of a few bytes is quick. The files are
// opened in memory: writing and reading each one through the file system
// cost most of an execution. Finding the file (Options) is not fuzzed.
func FuzzOpen(f *testing.F) {
	seed, err := os.ReadFile(tinyELF)
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range fuzzOpenSeeds {
		f.Add(in.off, in.patch, in.cut, in.addr)
	}
	f.Fuzz(func(t *testing.T, off uint16, patch []byte, cut uint16, addr uint64) {
		fuzzOpenOnce(t, seed, fuzzOpenInput{off, patch, cut, addr})
	})
}

var fuzzOpenSeeds = []fuzzOpenInput{
	{0, []byte{}, 0, tinyLeaf},
	{0x28, []byte{0xff, 0xff}, 0, tinyLeaf}, // e_shoff
	{0x3c, []byte{0x40}, 0, tinyLeaf},       // e_shnum
	{0x1a8, []byte{0xff, 0xff, 0xff}, 0, 0}, // .debug_info
	{0, []byte{}, 0x200, tinyLeaf},          // truncated
}

// BenchmarkFuzzOpenCorpus runs FuzzOpen's body over its corpus: the seeds,
// testdata/fuzz/FuzzOpen and the inputs the fuzzer found on this machine
// (in $GOCACHE/fuzz), so that what an execution costs can be profiled
// (go test -fuzz takes no -cpuprofile).
func BenchmarkFuzzOpenCorpus(b *testing.B) {
	seed, err := os.ReadFile(tinyELF)
	if err != nil {
		b.Fatal(err)
	}
	ins := append([]fuzzOpenInput(nil), fuzzOpenSeeds...)
	dirs := []string{filepath.Join("testdata", "fuzz", "FuzzOpen")}
	if c := goCache(); c != "" {
		dirs = append(dirs, filepath.Join(c, "fuzz", "github.com", "hwprof", "hwprof", "symbolize", "FuzzOpen"))
	}
	for _, dir := range dirs {
		ents, _ := os.ReadDir(dir) // a directory that is not there adds nothing
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				b.Fatal(err)
			}
			if in, ok := parseFuzzOpenInput(data); ok {
				ins = append(ins, in)
			}
		}
	}
	b.ReportMetric(float64(len(ins)), "inputs")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		fuzzOpenOnce(b, seed, ins[i%len(ins)])
	}
}

// goCache returns the go command's build cache directory by its defaults
// ($GOCACHE, else the user cache directory), or "".
func goCache() string {
	if c := os.Getenv("GOCACHE"); c != "" && c != "off" {
		return c
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "go-build")
	}
	return ""
}

// parseFuzzOpenInput parses a corpus file of FuzzOpen ("go test fuzz v1"
// and one line per argument); false for a file of another shape (inputs of
// an earlier FuzzOpen with other arguments).
func parseFuzzOpenInput(data []byte) (fuzzOpenInput, bool) {
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 5 || lines[0] != "go test fuzz v1" {
		return fuzzOpenInput{}, false
	}
	arg := func(line, typ string) (string, bool) {
		s, ok := strings.CutPrefix(line, typ+"(")
		if !ok {
			return "", false
		}
		return strings.CutSuffix(s, ")")
	}
	num := func(line, typ string, bits int) (uint64, bool) {
		s, ok := arg(line, typ)
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseUint(s, 0, bits)
		return n, err == nil
	}
	off, ok1 := num(lines[1], "uint16", 16)
	q, ok2 := arg(lines[2], "[]byte")
	patch, err := strconv.Unquote(q)
	cut, ok3 := num(lines[3], "uint16", 16)
	addr, ok4 := num(lines[4], "uint64", 64)
	if !ok1 || !ok2 || err != nil || !ok3 || !ok4 {
		return fuzzOpenInput{}, false
	}
	return fuzzOpenInput{uint16(off), []byte(patch), uint16(cut), addr}, true
}

// The corpus files in testdata parse: the benchmark reads them.
func TestParseFuzzOpenCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzOpen")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		t.Fatalf("%s: %v (%d files)", dir, err, len(ents))
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := parseFuzzOpenInput(data); !ok {
			t.Errorf("%s does not parse:\n%s", e.Name(), data)
		}
	}
}

// TestFuzzOpenSeed: FuzzOpen's file resolves tinyLeaf to leaf with a file
// and line from DWARF, both through Open and in memory, so that the fuzzer
// starts from a file that reaches the symbol table and DWARF.
func TestFuzzOpenSeed(t *testing.T) {
	seed, err := os.ReadFile(tinyELF)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(tinyELF) // a recorded path is absolute
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := Open(ObjectKey{Path: abs}, Options{DebugRoots: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	inMemory, err := openELF(ObjectKey{Path: tinyELF}, bytes.NewReader(seed), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Object{fromFile, inMemory} {
		l := o.Symbolize([]addrspace.ObjAddr{tinyLeaf})[0]
		if l.Symbol == nil || l.Symbol.Name.Raw != "leaf" || len(l.Frames) == 0 || l.Frames[len(l.Frames)-1].File == "" {
			t.Errorf("address %#x: %+v, want leaf with a file and line", tinyLeaf, l)
		}
	}
	if fromFile.BuildID().IsZero() || !inMemory.BuildID().Equal(fromFile.BuildID()) {
		t.Errorf("build-id in memory %v, from the file %v", inMemory.BuildID(), fromFile.BuildID())
	}
}

// A DWARF 5 line table whose directory count is 2^40 (FuzzOpen's crasher
// de4ec1d41ae167d9, which made debug/dwarf allocate 277 GB) is an error of
// the object's DWARF; its symbols still resolve.
func TestLineCountBomb(t *testing.T) {
	seed, err := os.ReadFile(tinyELF)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzOpen", "de4ec1d41ae167d9"))
	if err != nil {
		t.Fatal(err)
	}
	in, ok := parseFuzzOpenInput(data)
	if !ok {
		t.Fatal("the crasher does not parse")
	}
	b := bytes.Clone(seed)
	copy(b[in.off:], in.patch)
	o, err := openELF(ObjectKey{Path: "bomb.elf"}, bytes.NewReader(b), true)
	if err != nil {
		t.Fatal(err)
	}
	if o.dwarfErr == nil || !strings.Contains(o.dwarfErr.Error(), "directory entries") {
		t.Errorf("DWARF error %v, want the directory count named", o.dwarfErr)
	}
	if l := o.Symbolize([]addrspace.ObjAddr{tinyLeaf})[0]; l.Symbol == nil || l.Symbol.Name.Raw != "leaf" {
		t.Errorf("address %#x: %+v, want the symbol leaf", tinyLeaf, l)
	}
}
