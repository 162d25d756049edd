package main

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
)

// namelessText spends its time in nameless, called by named, until the
// CPU time its argument gives (in milliseconds) has passed.
const namelessText = `#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long nameless(long n) {
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i * i % 7;
	return s;
}

__attribute__((noinline)) long named(long n) { return nameless(n) + 1; }

int main(int argc, char **argv) {
	clock_t end = clock() + (argc > 1 ? atol(argv[1]) : 300) * (CLOCKS_PER_SEC / 1000);
	long s = 0;
	while (clock() < end)
		s += named(100000);
	return s == 42;
}
`

// clearSymbolName makes the name of symbol name in the .symtab of the
// ELF file at path empty (its st_name the string table's first byte, a
// NUL), as random damage to .symtab often does, and returns the
// symbol's address.
func clearSymbolName(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	symtab := f.Section(".symtab")
	for i, s := range syms {
		if s.Name != name || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Symbols leaves out entry 0, the null symbol.
		binary.LittleEndian.PutUint32(b[symtab.Offset+uint64(i+1)*symtab.Entsize:], 0)
		if err := os.WriteFile(path, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return s.Value
	}
	t.Fatalf("%s has no function symbol %s", path, name)
	return 0
}

// TestPProfNamelessSymbol: a function symbol with an empty name (legal
// ELF, and what damage to .symtab makes) is named from its object and
// address as code without a symbol is, "[object+0xaddr]", in every
// report: the text report shows it, and report --format pprof and merge
// write the profile (they failed on it: "function 13 has no name"), which
// go tool pprof reads with the function under that name.
func TestPProfNamelessSymbol(t *testing.T) {
	t.Parallel() // its own programs and files
	needPerfEvents(t)
	dir := t.TempDir()
	prog := testprog.Copy(t, testprog.BuildText(t, "symdamage.c", namelessText, "-O1", "-fno-omit-frame-pointer"), dir)
	want := fmt.Sprintf("[%s+0x%x]", filepath.Base(prog), clearSymbolName(t, prog, "nameless"))
	rec := filepath.Join(dir, "nameless.data")
	if r := hwprof(t, "record", "-q", "-g", "-e", "cpu-clock", "-o", rec, "--", prog, "300"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	if r := hwprof(t, "report", "-i", rec); r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("report: exit %d, want %s among the functions\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"report", "-i", rec, "--format", "pprof", "-o", filepath.Join(dir, "report.pb.gz")},
		{"merge", "-o", filepath.Join(dir, "merge.pb.gz"), rec, rec},
	} {
		r := hwprof(t, args...)
		if r.code != 0 {
			t.Errorf("%s: exit %d\n%s", args[0], r.code, r.stderr)
			continue
		}
		top := pprofTop(t, args[slices.Index(args, "-o")+1], "samples")
		if s, ok := top[want]; !ok || s.flat == 0 {
			t.Errorf("%s: go tool pprof -top shows %s with %+v, want self weight; all: %v", args[0], want, s, top)
		}
	}
}
