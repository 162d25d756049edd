package symbolize

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/testprog"
)

// need skips the test when a tool is absent.
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
}

func run(t testing.TB, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// testAddrs picks addresses of bin to check: the start and middle of every
// sized function symbol accepted by keep, and every line-table row
// address inside those functions (at most maxRows, evenly spread); with
// maxRows < 0, every byte of those functions.
func testAddrs(t testing.TB, bin string, keep func(string) bool, maxRows int) []addrspace.ObjAddr {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	type rng struct{ lo, hi uint64 }
	var fns []rng
	set := map[addrspace.ObjAddr]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || s.Value == 0 || !keep(s.Name) {
			continue
		}
		fns = append(fns, rng{s.Value, s.Value + s.Size})
		set[addrspace.ObjAddr(s.Value)] = true
		set[addrspace.ObjAddr(s.Value+s.Size/2)] = true
		for a := s.Value; maxRows < 0 && a < s.Value+s.Size; a++ {
			set[addrspace.ObjAddr(a)] = true
		}
	}
	var rows []addrspace.ObjAddr
	if d, err := f.DWARF(); err == nil {
		r := d.Reader()
		for {
			cu, err := r.Next()
			if err != nil || cu == nil {
				break
			}
			r.SkipChildren()
			lr, err := d.LineReader(cu)
			if err != nil || lr == nil {
				continue
			}
			var le dwarf.LineEntry
			for lr.Next(&le) == nil {
				for _, fn := range fns {
					if le.Address >= fn.lo && le.Address < fn.hi {
						rows = append(rows, addrspace.ObjAddr(le.Address))
						break
					}
				}
			}
		}
	}
	slices.Sort(rows)
	rows = slices.Compact(rows)
	step := 1
	if maxRows > 0 && len(rows) > maxRows {
		step = len(rows) / maxRows
	}
	for i := 0; i < len(rows); i += step {
		set[rows[i]] = true
	}
	out := make([]addrspace.ObjAddr, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// cleanPos cleans the file name of "file:line" as this package does
// (addr2line prints comp_dir/dir/file unjoined, "./csu/../sysdeps/x.h").
func cleanPos(pos string) string {
	i := strings.LastIndexByte(pos, ':')
	if i <= 0 || strings.HasPrefix(pos, "??") {
		return pos
	}
	return path.Clean(pos[:i]) + pos[i:]
}

// oracleFrame is one frame as an independent tool prints it.
type oracleFrame struct{ fn, pos string }

var discriminator = regexp.MustCompile(` \(discriminator \d+\)$`)

// addr2line runs addr2line -i -f -C -a -e bin on addrs.
func addr2line(t testing.TB, bin string, addrs []addrspace.ObjAddr) [][]oracleFrame {
	t.Helper()
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", uint64(a))
	}
	cmd := exec.Command("addr2line", "-i", "-f", "-C", "-a", "-e", bin)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("addr2line: %v", err)
	}
	var res [][]oracleFrame
	sc := bufio.NewScanner(bytes.NewReader(out))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "0x") {
			t.Fatalf("addr2line output line %d: %q, want an address", i, lines[i])
		}
		i++
		var fr []oracleFrame
		for i+1 < len(lines) && !strings.HasPrefix(lines[i], "0x") {
			fr = append(fr, oracleFrame{lines[i], cleanPos(discriminator.ReplaceAllString(lines[i+1], ""))})
			i += 2
		}
		res = append(res, fr)
	}
	if len(res) != len(addrs) {
		t.Fatalf("addr2line answered %d addresses, asked %d", len(res), len(addrs))
	}
	return res
}

// llvmSymbolizer runs llvm-symbolizer -i -f -C on addrs, giving frames
// in addr2line's form (no column; "??:?" for an unknown position).
func llvmSymbolizer(t testing.TB, bin string, addrs []addrspace.ObjAddr) [][]oracleFrame {
	t.Helper()
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", uint64(a))
	}
	cmd := exec.Command("llvm-symbolizer", "--obj="+bin, "-i", "-f", "-C")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("llvm-symbolizer: %v", err)
	}
	blocks := strings.Split(strings.TrimRight(string(out), "\n"), "\n\n")
	if len(blocks) != len(addrs) {
		t.Fatalf("llvm-symbolizer answered %d addresses, asked %d", len(blocks), len(addrs))
	}
	res := make([][]oracleFrame, len(addrs))
	for i, b := range blocks {
		lines := strings.Split(b, "\n")
		for j := 0; j+1 < len(lines); j += 2 {
			pos := lines[j+1]
			if k := strings.LastIndexByte(pos, ':'); k >= 0 {
				pos = pos[:k] // column
			}
			if strings.HasPrefix(pos, "??:") {
				pos = "??:?"
			}
			pos = cleanPos(pos)
			res[i] = append(res[i], oracleFrame{lines[j], pos})
		}
	}
	return res
}

// goAddr2line runs go tool addr2line (which reads the pclntab) on addrs.
func goAddr2line(t testing.TB, bin string, addrs []addrspace.ObjAddr) [][]oracleFrame {
	t.Helper()
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", uint64(a))
	}
	cmd := exec.Command("go", "tool", "addr2line", bin)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool addr2line: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2*len(addrs) {
		t.Fatalf("go tool addr2line: %d lines for %d addresses", len(lines), len(addrs))
	}
	res := make([][]oracleFrame, len(addrs))
	for i := range addrs {
		res[i] = []oracleFrame{{lines[2*i], lines[2*i+1]}}
	}
	return res
}

// ours formats a Location as addr2line -i -f -C does.
func ours(loc Location) []oracleFrame {
	if len(loc.Frames) == 0 {
		return []oracleFrame{{"??", "??:?"}}
	}
	out := make([]oracleFrame, len(loc.Frames))
	for i, f := range loc.Frames {
		pos := "??:?"
		if f.File != "" {
			pos = f.File + ":" + strconv.Itoa(f.Line)
			if f.Line == 0 {
				pos = f.File + ":?"
			}
		}
		out[i] = oracleFrame{f.Func.Full, pos}
	}
	return out
}

func isTestProgFunc(name string) bool {
	switch name {
	case "main", "hot", "depth", "mix", "mix2":
		return true
	}
	return strings.Contains(name, "shapes") || strings.Contains(name, "sum") || strings.HasPrefix(name, "main.")
}

func all(string) bool { return true }

func TestAgainstAddr2line(t *testing.T) {
	t.Parallel() // its own programs and files; it measures no time
	need(t, "addr2line")
	tests := []struct {
		name string
		// oracle is "addr2line" or "llvm-symbolizer" (binutils 2.40
		// cannot read the DWARF 5 of Go 1.25+).
		oracle  string
		build   func(t *testing.T, dir string) string
		keep    func(string) bool
		maxRows int
		// wantInline: some address must have an inlined frame.
		wantInline bool
	}{
		{name: "c-O0-frame-pointers", keep: all, maxRows: -1, build: func(t *testing.T, dir string) string {
			return testprog.Build(t, "c/symprog.c", "-O0", "-g", "-fno-omit-frame-pointer")
		}},
		{name: "c-O2-inlining", keep: all, maxRows: -1, wantInline: true, build: func(t *testing.T, dir string) string {
			return testprog.Build(t, "c/symprog.c", "-O2", "-g")
		}},
		{name: "c-O2-omit-frame-pointer", keep: all, maxRows: -1, wantInline: true, build: func(t *testing.T, dir string) string {
			return testprog.Build(t, "c/symprog.c", "-O2", "-g", "-fomit-frame-pointer")
		}},
		{name: "c-O2-pie-dwarf4", keep: all, maxRows: -1, wantInline: true, build: func(t *testing.T, dir string) string {
			return testprog.Build(t, "c/symprog.c", "-O2", "-g", "-gdwarf-4", "-fPIE", "-pie")
		}},
		{name: "c-shared-library", keep: all, maxRows: -1, wantInline: true, build: func(t *testing.T, dir string) string {
			return testprog.Build(t, "c/symprog.c", "-O2", "-g", "-fPIC", "-shared")
		}},
		{name: "c-O3-gc-sections", keep: all, maxRows: -1, wantInline: true, build: func(t *testing.T, dir string) string {
			return testprog.Build(t, "c/symprog.c", "-O3", "-g", "-ffunction-sections", "-Wl,--gc-sections")
		}},
		{name: "cxx-namespaces-templates-virtual", keep: isTestProgFunc, maxRows: -1, wantInline: true, build: func(t *testing.T, dir string) string {
			return testprog.Build(t, "cpp/symprog.cc", "-O2", "-g")
		}},
		{name: "cxx-O0", keep: all, build: func(t *testing.T, dir string) string {
			return testprog.Build(t, "cpp/symprog.cc", "-O0", "-g")
		}},
		{name: "go-dwarf", oracle: "llvm-symbolizer", keep: isTestProgFunc, maxRows: 2000, wantInline: true, build: func(t *testing.T, dir string) string {
			return testprog.Build(t, "go/symprog")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := tt.build(t, t.TempDir())
			o, err := Open(ObjectKey{Path: bin}, Options{DebugRoots: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			if !o.HasDWARF() {
				t.Fatalf("no DWARF read (%v)", o.DWARFErr())
			}
			addrs := testAddrs(t, bin, tt.keep, tt.maxRows)
			got := o.Symbolize(addrs)
			var want, second [][]oracleFrame
			if tt.oracle == "llvm-symbolizer" {
				need(t, "llvm-symbolizer")
				want = llvmSymbolizer(t, bin, addrs)
			} else {
				want = addr2line(t, bin, addrs)
				if _, err := exec.LookPath("llvm-symbolizer"); err == nil {
					second = llvmSymbolizer(t, bin, addrs)
				}
			}
			compare(t, addrs, got, want, second, tt.wantInline)
		})
	}
}

// compare checks got against the oracle want. Where second (another
// independent tool) is given and disagrees with want, each frame must
// still have want's function but may have either tool's position; such
// addresses are counted: addr2line 2.40 names the CU's primary file
// instead of the included file for some DWARF 5 rows (where
// llvm-symbolizer and gdb agree with this package), and llvm-symbolizer
// names functions by DW_AT_name where addr2line, like this package, uses
// the ELF symbol starting at the function (__GI___libc_sa_len).
func eitherOracle(g, a, b []oracleFrame) bool {
	if len(g) != len(a) && len(g) != len(b) {
		return false
	}
	at := func(o []oracleFrame, i int) oracleFrame {
		if i < len(o) {
			return o[i]
		}
		return oracleFrame{}
	}
	for i, f := range g {
		if f.fn != at(a, i).fn || f.pos != at(a, i).pos && f.pos != at(b, i).pos {
			return false
		}
	}
	return true
}

func compare(t *testing.T, addrs []addrspace.ObjAddr, got []Location, want, second [][]oracleFrame, wantInline bool) {
	t.Helper()
	bad, inlined, disputed := 0, 0, 0
	for i, a := range addrs {
		g := ours(got[i])
		if len(g) > 1 {
			inlined++
		}
		for j, f := range got[i].Frames {
			if f.Inlined != (j < len(got[i].Frames)-1) {
				t.Errorf("%#x: frame %d of %d has Inlined %v", uint64(a), j, len(got[i].Frames), f.Inlined)
			}
		}
		if second != nil && !slices.Equal(want[i], second[i]) && eitherOracle(g, want[i], second[i]) {
			disputed++
			continue
		}
		if !slices.Equal(g, want[i]) {
			bad++
			if bad <= 10 || os.Getenv("SYMBOLIZE_ALLDIFF") != "" {
				t.Errorf("%#x: got %v, oracle %v", uint64(a), g, want[i])
			}
		}
	}
	t.Logf("%d addresses, %d with inlined frames, %d differ, %d match the second oracle where the two disagree", len(addrs), inlined, bad, disputed)
	if wantInline && inlined == 0 {
		t.Errorf("no address has inlined frames")
	}
}

// TestSystemLibraryWithDebugPackage symbolizes the system libc through its
// separate debug file (/usr/lib/debug/.build-id, installed by libc6-dbg),
// checked against addr2line, which finds the same file by build-id.
func TestSystemLibraryWithDebugPackage(t *testing.T) {
	need(t, "addr2line")
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	id, err := fileHex(libc)
	if err != nil || id == "" {
		t.Skipf("no build-id for %s: %v", libc, err)
	}
	o, err := Open(ObjectKey{Path: libc, BuildID: mustID(t, id)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o.DebugPath() == "" {
		t.Skipf("no debug file for %s (build-id %s) under %s: install libc6-dbg", libc, id, DefaultDebugRoot)
	}
	addrs := testAddrs(t, o.DebugPath(), func(s string) bool {
		return strings.HasPrefix(s, "mem") || strings.HasPrefix(s, "str") || strings.HasPrefix(s, "__libc_") || strings.HasPrefix(s, "qsort") || strings.HasPrefix(s, "printf")
	}, 3000)
	// addr2line reads the debug file itself, so that it sees the same
	// .symtab as this package (the stripped libc has only .dynsym).
	want := addr2line(t, o.DebugPath(), addrs)
	var second [][]oracleFrame
	if _, err := exec.LookPath("llvm-symbolizer"); err == nil {
		second = llvmSymbolizer(t, o.DebugPath(), addrs)
	}
	compare(t, addrs, o.Symbolize(addrs), want, second, true)
}

// TestGoPclntabInlinesAgainstLLVMSymbolizer strips the DWARF of a Go
// binary (objcopy --strip-debug keeps the code where it is) and compares
// the frames this package reads from the pclntab's inline tree with the
// frames llvm-symbolizer reads from the DWARF of the unstripped binary.
func TestGoPclntabInlinesAgainstLLVMSymbolizer(t *testing.T) {
	need(t, "go", "objcopy", "llvm-symbolizer")
	dir := t.TempDir()
	full := testprog.Build(t, "go/symprog")
	bin := filepath.Join(dir, "symprog.nodwarf")
	run(t, dir, nil, "objcopy", "--strip-debug", full, bin)
	o, err := Open(ObjectKey{Path: bin}, Options{DebugRoots: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if o.HasDWARF() || o.goinl == nil {
		t.Fatalf("want pclntab with inline tree only: DWARF %v, inline tree %v", o.HasDWARF(), o.goinl != nil)
	}
	// go:textfipsstart and the like mark addresses; they are no functions.
	addrs := testAddrs(t, full, func(s string) bool { return !strings.HasPrefix(s, "go:") }, 5000)
	want := llvmSymbolizer(t, full, addrs)
	got := o.Symbolize(addrs)
	// Where the pclntab and DWARF say the same in other words: assembly
	// functions are "f" in the pclntab and "f.abi0" in DWARF, generated
	// code is at "<autogenerated>:1" in the pclntab and has no DWARF line,
	// and "·" in the pclntab is "." in DWARF.
	for i := range want {
		for j := range want[i] {
			w := &want[i][j]
			w.fn = strings.TrimSuffix(w.fn, ".abi0")
			if w.pos == "??:?" {
				w.pos = "<autogenerated>:1"
			}
		}
		for j := range got[i].Frames {
			f := &got[i].Frames[j].Func
			f.Full = strings.ReplaceAll(f.Full, "·", ".")
		}
	}
	compare(t, addrs, got, want, nil, true)
}

func TestGoPclntabAgainstGoAddr2line(t *testing.T) {
	need(t, "go")
	bin := testprog.Build(t, "go/symprog", "-ldflags=-w")
	o, err := Open(ObjectKey{Path: bin}, Options{DebugRoots: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if o.HasDWARF() || o.gosym == nil {
		t.Fatalf("want pclntab only: DWARF %v, pclntab %v", o.HasDWARF(), o.gosym != nil)
	}
	addrs := testAddrs(t, bin, func(s string) bool { return strings.HasPrefix(s, "main.") || strings.HasPrefix(s, "fmt.") }, 0)
	want := goAddr2line(t, bin, addrs)
	got := o.Symbolize(addrs)
	bad := 0
	for i, a := range addrs {
		// go tool addr2line names the physical function with the
		// innermost position.
		all := ours(got[i])
		g := []oracleFrame{{all[len(all)-1].fn, all[0].pos}}
		if !slices.Equal(g, want[i]) {
			bad++
			if bad <= 10 || os.Getenv("SYMBOLIZE_ALLDIFF") != "" {
				t.Errorf("%#x: got %v, go tool addr2line %v", uint64(a), g, want[i])
			}
		}
	}
	t.Logf("%d addresses, %d differ", len(addrs), bad)
}

var _ = errors.Is
var _ = io.EOF
