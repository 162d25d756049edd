package symbolize

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
)

// TestSymbolizeAllParallel resolves several objects at once and checks
// each against the same object resolved alone.
func TestSymbolizeAllParallel(t *testing.T) {
	need(t, "gcc")
	req := map[ObjectKey][]Addr{}
	for _, flags := range [][]string{{"-O0", "-g"}, {"-O2", "-g"}, {"-O2", "-g", "-fomit-frame-pointer"}, {"-Os", "-g"}} {
		bin := testprog.Build(t, "c/symprog.c", flags...)
		req[ObjectKey{Path: bin}] = testAddrs(t, bin, all, 0)
	}
	req[ObjectKey{Path: KernelPath}] = []Addr{0xffffffff81001010}
	s := New(Options{DebugRoots: []string{}, Kallsyms: filepath.Join("testdata", "kallsyms.txt")})
	res := s.SymbolizeAll(req)
	if len(res) != len(req) {
		t.Fatalf("%d results for %d objects", len(res), len(req))
	}
	for key, addrs := range req {
		r := res[key]
		if r.Err != nil {
			t.Fatalf("%s: %v", key.Path, r.Err)
		}
		alone, err := s.Resolver(key)
		if err != nil {
			t.Fatal(err)
		}
		if want := alone.Symbolize(addrs); !reflect.DeepEqual(r.Locations, want) {
			t.Errorf("%s: SymbolizeAll differs from Symbolize", key.Path)
		}
	}
}

func FuzzParsePerfMap(f *testing.F) {
	f.Add("7f0010000000 40 LazyCompile:~foo /app/a.js:1\n0x10 0x20 x\n")
	f.Add("1 0 a\n1 0 b\n")
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParsePerfMap(strings.NewReader(text))
		if err != nil {
			return
		}
		for i := 1; i < len(m.table.syms); i++ {
			if m.table.syms[i-1].start >= m.table.syms[i].start {
				t.Fatalf("entries not sorted and unique at %d", i)
			}
		}
		for _, s := range m.table.syms {
			loc := m.Symbolize([]Addr{Addr(s.start)})[0]
			if loc.Symbol == nil || loc.Symbol.Start != Addr(s.start) {
				t.Fatalf("%#x does not resolve to its own entry: %+v", s.start, loc.Symbol)
			}
		}
	})
}

func FuzzParseKallsyms(f *testing.F) {
	f.Add("ffffffff81000000 T _text\nffffffff81001000 t x [mod]\n")
	f.Add("0000000000000000 T a\n")
	f.Fuzz(func(t *testing.T, text string) {
		k, err := ParseKallsyms(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, s := range k.table.syms {
			loc := k.Symbolize([]Addr{Addr(s.start)})[0]
			if loc.Symbol == nil || loc.Symbol.Start != Addr(s.start) {
				t.Fatalf("%#x does not resolve to its own entry", s.start)
			}
		}
	})
}

// Example resolves kernel addresses through the cache, as the report
// stage does for every object of a recording, and prints function+offset.
func Example() {
	s := New(Options{Kallsyms: "testdata/kallsyms.txt"})
	key := ObjectKey{Path: KernelPath}
	res := s.SymbolizeAll(map[ObjectKey][]Addr{key: {0xffffffff81001010, 0xffffffffc0000104, 0x1000}})
	r := res[key]
	if r.Err != nil {
		fmt.Println(r.Err)
		return
	}
	for _, loc := range r.Locations {
		if off, ok := loc.Offset(); ok {
			fmt.Printf("%#x %s+%#x\n", uint64(loc.Addr), loc.Symbol.Name.Short, off)
		} else {
			fmt.Printf("%#x [unknown]\n", uint64(loc.Addr))
		}
	}
	// Output:
	// 0xffffffff81001010 do_one_initcall+0x10
	// 0xffffffffc0000104 nft_do_chain+0x4
	// 0x1000 [unknown]
}
