package symbolize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
)

func TestKallsyms(t *testing.T) {
	k, err := loadKallsyms(filepath.Join("testdata", "kallsyms.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		addr   addrspace.ObjAddr
		want   string // "" for none
		module string
	}{
		{"below the kernel", 0xffffffff80000000, "", ""},
		{"alias at _text", 0xffffffff81000000, "_text", ""},
		{"inside a T symbol", 0xffffffff81001010, "do_one_initcall", ""},
		{"local t symbol", 0xffffffff81001200, "trace_initcall_start_cb", ""},
		{"data symbols skipped", 0xffffffff81001300, "trace_initcall_start_cb", ""},
		{"weak text", 0xffffffff81002010, "weak_text", ""},
		{"module symbol", 0xffffffffc0000110, "nft_do_chain", "nf_tables"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := k.Symbolize([]addrspace.ObjAddr{tt.addr})[0]
			got := ""
			if loc.Symbol != nil {
				got = loc.Symbol.Name.Raw
			}
			if got != tt.want {
				t.Errorf("symbol %q, want %q", got, tt.want)
			}
			if m := k.Module(tt.addr); m != tt.module {
				t.Errorf("module %q, want %q", m, tt.module)
			}
		})
	}
	// _stext and _text share an address: one wins, the table stays sorted.
	if k.Len() != 7 {
		t.Errorf("Len %d, want 7", k.Len())
	}
}

func TestKallsymsHidden(t *testing.T) {
	_, err := parseKallsyms(strings.NewReader("0000000000000000 T _text\n0000000000000000 T do_one_initcall\n"))
	if !errors.Is(err, ErrKallsymsHidden) {
		t.Fatalf("err %v, want ErrKallsymsHidden", err)
	}
	_, err = parseKallsyms(strings.NewReader("zz T x\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "read kallsyms: line 1") {
		t.Fatalf("err %v, want a line error", err)
	}
}

func TestProcKallsyms(t *testing.T) {
	k, err := loadKallsyms("/proc/kallsyms")
	if errors.Is(err, ErrKallsymsHidden) {
		t.Skip("kallsyms addresses hidden for this user")
	}
	if err != nil {
		t.Skipf("no /proc/kallsyms: %v", err)
	}
	if k.Len() < 1000 {
		t.Errorf("only %d text symbols", k.Len())
	}
}

func TestPerfMap(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "perf-1234.map"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := ParsePerfMap(f)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		addr addrspace.ObjAddr
		want string
	}{
		{"before all", 0x7f000fffffff, ""},
		{"name with spaces", 0x7f0010000010, "LazyCompile:~foo /app/a.js:1"},
		{"same start: last line wins", 0x7f0010000060, "py::bar2:/app/b.py"},
		{"past the end of a sized entry", 0x7f0010000080, ""},
		{"0x-prefixed numbers", 0x7f001000017f, "Interpreter"},
		{"after all", 0x7f0010000180, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := m.Symbolize([]addrspace.ObjAddr{tt.addr})[0]
			got := ""
			if loc.Symbol != nil {
				got = loc.Symbol.Name.Raw
				if len(loc.Frames) != 1 || loc.Frames[0].Func.Raw != got {
					t.Errorf("frames %v", loc.Frames)
				}
			}
			if got != tt.want {
				t.Errorf("symbol %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := ParsePerfMap(strings.NewReader("7f00 nothex name\n")); err == nil {
		t.Error("bad size accepted")
	}
}

func TestMissingUnderSymFS(t *testing.T) {
	o := Options{SymFS: "testdata-does-not-exist"}
	if _, err := o.PerfMap("/tmp/perf-1.map"); err == nil || !strings.HasPrefix(err.Error(), "read perf map:") {
		t.Errorf("perf map under a missing symfs: %v", err)
	}
	if _, err := Open(ObjectKey{Path: "/no/such/object.so"}, o); err == nil {
		t.Errorf("missing object: no error")
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		name             string
		raw, full, short string
	}{
		{"C", "main", "main", "main"},
		{"Go", "main.(*T).Run", "main.(*T).Run", "main.(*T).Run"},
		{"C++ method", "_ZNK6shapes6Square4areaEv", "shapes::Square::area() const", "shapes::Square::area"},
		{"C++ template", "_ZN6shapes3AccIdE3addEd", "shapes::Acc<double>::add(double)", "shapes::Acc<double>::add"},
		{"Rust legacy", "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write", "core::fmt::write"},
		{"Rust v0", "_RNvCs1234_7mycrate3foo", "mycrate::foo", "mycrate::foo"},
		{"not mangled after all", "_Zfoo", "_Zfoo", "_Zfoo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := NewName(tt.raw)
			if n.Raw != tt.raw || n.Full != tt.full || n.Short != tt.short {
				t.Errorf("NewName(%q) = %+v, want full %q short %q", tt.raw, n, tt.full, tt.short)
			}
		})
	}
}

func TestRetAddr(t *testing.T) {
	if got := RetAddr(0x1001).Lookup(); got != 0x1000 {
		t.Errorf("Lookup %#x", got)
	}
	if got := RetAddr(0).Lookup(); got != 0 {
		t.Errorf("Lookup of 0: %#x", got)
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
			loc := m.Symbolize([]addrspace.ObjAddr{addrspace.ObjAddr(s.start)})[0]
			if loc.Symbol == nil || loc.Symbol.Start != addrspace.ObjAddr(s.start) {
				t.Fatalf("%#x does not resolve to its own entry: %+v", s.start, loc.Symbol)
			}
		}
	})
}

func FuzzParseKallsyms(f *testing.F) {
	f.Add("ffffffff81000000 T _text\nffffffff81001000 t x [mod]\n")
	f.Add("0000000000000000 T a\n")
	f.Fuzz(func(t *testing.T, text string) {
		k, err := parseKallsyms(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, s := range k.table.syms {
			loc := k.Symbolize([]addrspace.ObjAddr{addrspace.ObjAddr(s.start)})[0]
			if loc.Symbol == nil || loc.Symbol.Start != addrspace.ObjAddr(s.start) {
				t.Fatalf("%#x does not resolve to its own entry", s.start)
			}
		}
	})
}

// Example resolves kernel addresses with a kallsyms file, as the report
// does for the kernel of a recording, and prints function+offset.
func Example() {
	text, err := ReadKallsyms("testdata/kallsyms.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	k, err := text.All()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, loc := range k.Symbolize([]addrspace.ObjAddr{0xffffffff81001010, 0xffffffffc0000104, 0x1000}) {
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

// TestNewNameSuffix: a mangled name with a suffix after '@' (a PLT
// entry, a symbol version) demangles with the suffix kept after it, as
// perf shows it; go tool pprof, which demangles names again, then finds
// nothing left to demangle.
func TestNewNameSuffix(t *testing.T) {
	for _, tt := range []struct{ raw, short, full string }{
		{"_ZSt15future_categoryv@plt", "std::future_category@plt", "std::future_category()@plt"},
		{"_ZNSt6thread6_StateD2Ev@@GLIBCXX_3.4.22", "std::thread::_State::~_State@@GLIBCXX_3.4.22", "std::thread::_State::~_State()@@GLIBCXX_3.4.22"},
		{"_ZSt15future_categoryv", "std::future_category", "std::future_category()"},
		{"memcpy@plt", "memcpy@plt", "memcpy@plt"},
		{"_Znot a name@plt", "_Znot a name@plt", "_Znot a name@plt"},
	} {
		n := NewName(tt.raw)
		if n.Raw != tt.raw || n.Short != tt.short || n.Full != tt.full {
			t.Errorf("NewName(%q) = %+v, want short %q, full %q", tt.raw, n, tt.short, tt.full)
		}
	}
}
