package symbolize

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/testprog"
)

// TestPerfScriptSymbolsOfFixture resolves every sample address that perf
// 6.1 symbolized in the autofdo test.lbr recording (a real LBR recording of
// a non-PIE C program, test.binary, which has DWARF and a .symtab) and
// compares the symbol with perf script's.
func TestPerfScriptSymbolsOfFixture(t *testing.T) {
	fixtures := fixtures.Dir(t)
	bin := filepath.Join(fixtures, "autofdo", "test.binary")
	script := filepath.Join(fixtures, "expected", "autofdo", "test.lbr.script.txt.gz")
	for _, p := range []string{bin, script} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("fixture absent (%v): the shared fixtures folder is not beside the repository", err)
		}
	}
	f, err := os.Open(script)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[addrspace.ObjAddr]string{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		// pid time: event: ip sym (object) brstack...
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != "(/export/hda3/tmp/test.binary)" {
			continue
		}
		ip, err := strconv.ParseUint(fields[3], 16, 64)
		if err != nil {
			continue
		}
		want[addrspace.ObjAddr(ip)] = fields[4]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 100 {
		t.Fatalf("only %d symbolized addresses in %s", len(want), script)
	}
	o, err := Open(ObjectKey{Path: bin}, Options{DebugRoots: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	addrs := make([]addrspace.ObjAddr, 0, len(want))
	for a := range want {
		addrs = append(addrs, a)
	}
	bad := 0
	for _, loc := range o.Symbolize(addrs) {
		got := "[unknown]"
		if loc.Symbol != nil {
			got = loc.Symbol.Name.Short
		}
		if got != want[loc.Addr] {
			bad++
			if bad <= 10 {
				t.Errorf("%#x: symbol %s, perf script %s", uint64(loc.Addr), got, want[loc.Addr])
			}
		}
		// The DWARF frames agree with the symbol on the outer function.
		if n := len(loc.Frames); n > 0 && loc.Symbol != nil && loc.Frames[n-1].Func.Raw != loc.Symbol.Name.Raw {
			t.Errorf("%#x: outer frame %s, symbol %s", uint64(loc.Addr), loc.Frames[n-1].Func.Raw, loc.Symbol.Name.Raw)
		}
	}
	t.Logf("%d addresses, %d differ from perf script", len(addrs), bad)
}

// TestPLTAgainstObjdump checks the synthesized name@plt symbols against
// the labels objdump -d prints for .plt, .plt.sec and .plt.got.
func TestPLTAgainstObjdump(t *testing.T) {
	need(t, "gcc", "objdump")
	tests := []struct {
		name  string
		flags []string
	}{
		{"lazy-plt", []string{"-O2", "-Wl,-z,lazy"}},
		{"ibt-plt-sec", []string{"-O2", "-fcf-protection", "-Wl,-z,ibt"}},
		{"non-pie", []string{"-O2", "-no-pie", "-fno-pie"}},
	}
	label := regexp.MustCompile(`^([0-9a-f]+) <(.+@plt)>:$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := testprog.Build(t, "c/symprog.c", tt.flags...)
			out := run(t, ".", nil, "objdump", "-d", bin)
			want := map[addrspace.ObjAddr]string{}
			for _, line := range strings.Split(string(out), "\n") {
				if m := label.FindStringSubmatch(line); m != nil {
					a, _ := strconv.ParseUint(m[1], 16, 64)
					want[addrspace.ObjAddr(a)] = m[2]
				}
			}
			if len(want) < 2 {
				t.Fatalf("objdump shows %d PLT entries", len(want))
			}
			o, err := Open(ObjectKey{Path: bin}, Options{DebugRoots: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			for a, name := range want {
				for _, q := range []addrspace.ObjAddr{a, a + 5} {
					loc := o.Symbolize([]addrspace.ObjAddr{q})[0]
					if loc.Symbol == nil || loc.Symbol.Name.Raw != name || loc.Symbol.Start != a {
						t.Errorf("%#x: symbol %+v, objdump %s at %#x", uint64(q), loc.Symbol, name, uint64(a))
					}
				}
			}
		})
	}
}
