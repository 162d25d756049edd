package unwind

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/testprog"
)

// readelfRow is one row of `readelf --debug-dump=frames-interp`: from loc
// (up to the next row or the FDE's end) the CFA and the saved registers.
type readelfRow struct {
	loc, end uint64
	cfa      string
	regs     map[string]string
}

var regName = regexp.MustCompile(` \([a-z0-9]+\)`)

var dwarfRegNames = map[string]int{
	"rax": 0, "rdx": 1, "rcx": 2, "rbx": 3, "rsi": 4, "rdi": 5, "rbp": 6, "rsp": 7,
	"r8": 8, "r9": 9, "r10": 10, "r11": 11, "r12": 12, "r13": 13, "r14": 14, "r15": 15, "ra": 16,
}

func readelfRows(t *testing.T, path string) []readelfRow {
	t.Helper()
	readelf, err := exec.LookPath("readelf")
	if err != nil {
		t.Skip("readelf (binutils) not installed")
	}
	// readelf also follows .gnu_debuglink to a separate debug file, whose
	// NOBITS .eh_frame makes it exit 1 after printing the real one.
	out, err := exec.Command(readelf, "--debug-dump=frames-interp", path).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("readelf %s: %v", path, err)
	}
	var rows []readelfRow
	var cols []string
	var fdeEnd uint64
	inFDE := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "r9 (r9)", "r1 (rdx)": a register rule, named by number and name
		f := strings.Fields(regName.ReplaceAllString(sc.Text(), ""))
		switch {
		case len(f) >= 4 && f[3] == "FDE":
			inFDE = false
			for _, x := range f {
				if lohi, ok := strings.CutPrefix(x, "pc="); ok {
					lo, hi, _ := strings.Cut(lohi, "..")
					start, err1 := strconv.ParseUint(lo, 16, 64)
					end, err2 := strconv.ParseUint(hi, 16, 64)
					inFDE = err1 == nil && err2 == nil && start != 0
					fdeEnd = end
				}
			}
		case len(f) >= 4 && f[3] == "CIE":
			inFDE = false
		case len(f) > 0 && f[0] == "LOC":
			cols = f[2:]
		case inFDE && len(f) == len(cols)+2 && len(f[0]) == 16:
			loc, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				continue
			}
			if n := len(rows); n > 0 && rows[n-1].end == fdeEnd && rows[n-1].loc < loc {
				rows[n-1].end = loc
			}
			r := readelfRow{loc: loc, end: fdeEnd, cfa: f[1], regs: map[string]string{}}
			for i, c := range cols {
				r.regs[c] = f[2+i]
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// describeRule prints a rule the way readelf does.
func describeRule(ru rule) string {
	switch ru.kind {
	case ruleSame, ruleUndefined:
		return "u"
	case ruleOffset:
		return fmt.Sprintf("c%+d", ru.off)
	case ruleRegister:
		return fmt.Sprintf("r%d", ru.reg)
	case ruleExpression:
		return "exp"
	case ruleValExpression:
		return "vexp"
	case ruleValOffset:
		return fmt.Sprintf("v%+d", ru.off)
	}
	return fmt.Sprintf("rule%d", ru.kind)
}

func describeCFA(ru rule) string {
	if ru.kind == ruleCFAExpression {
		return "exp"
	}
	for n, i := range dwarfRegNames {
		if uint64(i) == ru.reg {
			return fmt.Sprintf("%s%+d", n, ru.off)
		}
	}
	return "?"
}

// TestCFIAgainstReadelf checks every row of the CFI of a gcc-built program
// and of the system's libc against readelf's interpretation of the same
// .eh_frame (binutils, independent of delve): the CFA rule and each
// register's rule at the first and the last address of every row.
func TestCFIAgainstReadelf(t *testing.T) {
	prog := testprog.Build(t, "c/recurse.c", "-O1", "-g", "-fomit-frame-pointer")
	objs := []string{prog}
	if libc := systemLibc(t); libc != "" {
		objs = append(objs, libc)
	}
	for _, path := range objs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rows := readelfRows(t, path)
			if len(rows) == 0 {
				t.Fatal("readelf printed no CFI rows")
			}
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tbl, err := loadTable(f)
			if err != nil {
				t.Fatal(err)
			}
			var checked, bad int
			for _, r := range rows {
				for _, pc := range []uint64{r.loc, r.end - 1} {
					rw, err := tbl.row(addrspace.ObjAddr(pc))
					if err != nil || rw == nil {
						t.Errorf("%#x: no row (%v)", pc, err)
						bad++
						continue
					}
					checked++
					if g := describeCFA(rw.cfa); g != r.cfa {
						if bad++; bad < 10 {
							t.Errorf("%#x: CFA %s, readelf says %s", pc, g, r.cfa)
						}
					}
					for name, w := range r.regs {
						if g := describeRule(rw.regs[dwarfRegNames[name]]); g != w && !(w == "s" && g == "u") {
							if bad++; bad < 10 {
								t.Errorf("%#x: %s %s, readelf says %s", pc, name, g, w)
							}
						}
					}
				}
			}
			t.Logf("%d rows, %d addresses checked, %d differences", len(rows), checked, bad)
		})
	}
}

// systemLibc returns the libc the test programs link against.
func systemLibc(t *testing.T) string {
	out, err := exec.Command("gcc", "-print-file-name=libc.so.6").Output()
	if err != nil {
		return ""
	}
	p := strings.TrimSpace(string(out))
	if !filepath.IsAbs(p) {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
