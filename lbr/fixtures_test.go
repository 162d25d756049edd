package lbr_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// The fixtures are real LBR recordings of google/autofdo's test data (see
// ../shared/fixtures/README.md), both made with -j any: every taken branch,
// no saved branch type. The program's binary is beside each.

type fixtureCase struct {
	name      string
	recording string // under fixtures/autofdo
	binary    string // the local copy of the profiled program
	recorded  string // the base name of the program in the recording's MMAP records
	depth     int
}

var fixtureCases = []fixtureCase{
	{"propeller cycles:u 32-deep", "propeller_sample_1.perfdata1", "propeller_sample_1.bin", "propeller_sample_1.bin.gen", 32},
	{"test.lbr br_inst_exec:taken 16-deep", "test.lbr", "test.binary", "test.binary", 16},
}

// edgeCount is what both sides count per edge.
type edgeCount struct {
	appearances, mispredicted, cycles uint64
}

// TestFixturesMatchPerfScript checks, on real hardware recordings, that the
// call edges this package's Decoder finds (reading the file with perfdata,
// the instructions from the program's file, classified with x86asm) are
// exactly those of perf's own
// `perf script -F brstack` output, each entry classified by the mnemonic
// objdump prints at its from address: same edges, same appearance,
// mispredict and cycle counts.
func TestFixturesMatchPerfScript(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("objdump not found: the independent classifier is missing")
	}
	for _, tc := range fixtureCases {
		t.Run(tc.name, func(t *testing.T) {
			fixtures := fixtures.Dir(t)
			rec := filepath.Join(fixtures, "autofdo", tc.recording)
			bin := filepath.Join(fixtures, "autofdo", tc.binary)
			script := filepath.Join(fixtures, "expected", "autofdo", tc.recording+".script.txt.gz")
			for _, p := range []string{rec, bin, script} {
				if _, err := os.Stat(p); err != nil {
					t.Skipf("fixture absent: %v", err)
				}
			}
			got, dec := hwprofEdges(t, rec, bin, tc.recorded, tc.depth)
			want, perfUser := perfScriptEdges(t, script, objdumpCalls(t, objdump, bin), tc.recorded)
			if len(want) == 0 {
				t.Fatal("perf script side found no call edges")
			}
			for e, w := range want {
				if g, ok := got[e]; !ok || g != w {
					t.Errorf("edge %#x -> %#x (pid %d): hwprof %+v (present %v), perf script+objdump %+v", e.Site, e.Callee, e.PID, g, ok, w)
				}
			}
			for e, g := range got {
				if _, ok := want[e]; !ok {
					t.Errorf("edge %#x -> %#x (pid %d): hwprof %+v, absent from perf script+objdump", e.Site, e.Callee, e.PID, g)
				}
			}
			var apps uint64
			for _, w := range want {
				apps += w.appearances
			}
			t.Logf("%d call edges, %d call entries; entries by kind: call %d, indirect-call %d, other %d, kernel %d, unknown (object absent) %d; %d instructions decoded; perf script user entries %d",
				len(want), apps, dec.Count(lbr.KindCall), dec.Count(lbr.KindIndCall), dec.Count(lbr.KindOther),
				dec.Count(lbr.KindKernel), dec.Count(lbr.KindUnknown), dec.Decoded(), perfUser)
		})
	}
}

// hwprofEdges reads the recording and sums the calls the Decoder finds per
// edge, reading code from the profiled program only (its libraries are
// absent).
func hwprofEdges(t *testing.T, rec, bin, recorded string, depth int) (map[edge]edgeCount, *lbr.Decoder) {
	t.Helper()
	r, err := perfdata.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	code := newProgramCode(t, bin)
	dec := lbr.NewDecoder(code)
	mapObject := func(pid uint32, addr, length, pgoff uint64, name string) {
		if filepath.Base(name) == recorded {
			code.maps[pid] = append(code.maps[pid], programMapping{addr, addr + length, pgoff})
		}
	}
	got := make(map[edge]edgeCount)
	var s perf.Sample
	var calls []lbr.Call
	for r.Next() {
		switch r.Record().Type() {
		case perf.RecordSample:
			if err := r.DecodeSample(&s); err != nil {
				t.Fatal(err)
			}
			calls = dec.Decode(calls[:0], s.PID, s.Branches)
			for _, c := range calls {
				e := edge{s.PID, c.Site, c.Callee}
				n := got[e]
				n.appearances++
				if c.Mispred {
					n.mispredicted++
				}
				n.cycles += uint64(c.Cycles)
				got[e] = n
			}
		case perf.RecordMmap, perf.RecordMmap2, perf.RecordComm:
			d, err := r.Decode()
			if err != nil {
				t.Fatal(err)
			}
			switch m := d.(type) {
			case *perf.Mmap:
				mapObject(m.PID, m.Addr, m.Len, m.PgOff, m.Filename)
			case *perf.Mmap2:
				mapObject(m.PID, m.Addr, m.Len, m.PgOff, m.Filename)
			case *perf.Comm:
				if m.Exec() {
					delete(code.maps, m.PID)
					dec.Forget(m.PID)
				}
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if dec.MaxWindow() != depth {
		t.Errorf("largest window %d entries, want the recording's depth %d", dec.MaxWindow(), depth)
	}
	return got, dec
}

// edge is one call edge of a process, by runtime addresses.
type edge struct {
	PID          uint32
	Site, Callee addrspace.Addr
}

// programCode is the test's CodeReader: the bytes of the executable
// PT_LOAD segments of one file, where each process mapped it (a runtime
// address maps to the file offset addr - start + pgoff).
type programCode struct {
	file []byte
	segs []*elf.Prog
	maps map[uint32][]programMapping
}

type programMapping struct{ start, end, pgoff uint64 }

func newProgramCode(t *testing.T, bin string) *programCode {
	t.Helper()
	file, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	c := &programCode{file: file, maps: make(map[uint32][]programMapping)}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Off+p.Filesz <= uint64(len(file)) {
			c.segs = append(c.segs, p)
		}
	}
	if len(c.segs) == 0 {
		t.Fatalf("%s: no executable segment", bin)
	}
	return c
}

func (c *programCode) Code(pid uint32, a addrspace.Addr) ([]byte, bool) {
	for _, m := range c.maps[pid] {
		if uint64(a) < m.start || uint64(a) >= m.end {
			continue
		}
		off := uint64(a) - m.start + m.pgoff
		for _, s := range c.segs {
			if off >= s.Off && off-s.Off < s.Filesz {
				return c.file[off:min(off+lbr.MaxInstLen, s.Off+s.Filesz)], true
			}
		}
		return nil, false
	}
	return nil, false
}

var objdumpLine = regexp.MustCompile(`^\s*([0-9a-f]+):\s+(.*)$`)

// objdumpCalls returns the link-time addresses of the instructions objdump
// disassembles as calls, and the program headers for offset arithmetic.
func objdumpCalls(t *testing.T, objdump, bin string) objdumpView {
	t.Helper()
	out, err := exec.Command(objdump, "-d", "--no-show-raw-insn", "-w", bin).Output()
	if err != nil {
		t.Fatalf("objdump -d %s: %v", bin, err)
	}
	v := objdumpView{calls: make(map[uint64]bool)}
	for line := range strings.SplitSeq(string(out), "\n") {
		m := objdumpLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		// prefixes objdump prints before the mnemonic (bnd, notrack, data16, rex...)
		for len(f) > 1 && (f[0] == "bnd" || f[0] == "notrack" || strings.HasPrefix(f[0], "rex") || f[0] == "data16" || f[0] == "cs" || f[0] == "ds") {
			f = f[1:]
		}
		if len(f) > 0 && strings.HasPrefix(f[0], "call") || len(f) > 0 && strings.HasPrefix(f[0], "lcall") {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			v.calls[a] = true
		}
	}
	// program headers: "LOAD off 0x... vaddr 0x... paddr 0x... align ..." then "filesz ... memsz ... flags r-x"
	out, err = exec.Command(objdump, "-p", bin).Output()
	if err != nil {
		t.Fatalf("objdump -p %s: %v", bin, err)
	}
	lines := strings.Split(string(out), "\n")
	for i, line := range lines {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "LOAD" || i+1 >= len(lines) {
			continue
		}
		g := strings.Fields(lines[i+1])
		if len(g) < 6 || !strings.Contains(g[5], "x") {
			continue
		}
		off, _ := strconv.ParseUint(f[2], 0, 64)
		vaddr, _ := strconv.ParseUint(f[4], 0, 64)
		filesz, _ := strconv.ParseUint(g[1], 0, 64)
		v.loads = append(v.loads, load{off, vaddr, filesz})
	}
	if len(v.calls) == 0 || len(v.loads) == 0 {
		t.Fatalf("objdump of %s: %d calls, %d executable LOAD headers", bin, len(v.calls), len(v.loads))
	}
	return v
}

type load struct{ off, vaddr, filesz uint64 }

type objdumpView struct {
	calls map[uint64]bool
	loads []load
}

// vaddr converts a file offset to the link-time address objdump prints.
func (v objdumpView) vaddr(off uint64) (uint64, bool) {
	for _, l := range v.loads {
		if off >= l.off && off < l.off+l.filesz {
			return off - l.off + l.vaddr, true
		}
	}
	return 0, false
}

var (
	// "25532 174024.727284: PERF_RECORD_MMAP 25532/25532: [0x400000(0xa000) @ 0]: x /path"
	// "5595 914937.300960: PERF_RECORD_MMAP2 5595/5595: [0x5629ec742000(0x1000) @ 0 00:6a 2006825049 1625258238]: r-xp /path"
	scriptMmap = regexp.MustCompile(`PERF_RECORD_MMAP2? (\d+)/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|\d+)[^\]]*\]: \S+ (.*)$`)
)

type scriptMapping struct{ start, end, pgoff uint64 }

// perfScriptEdges reads perf's `perf script -F brstack` text and classifies
// each entry whose from address is in the profiled program by objdump's
// mnemonic there.
func perfScriptEdges(t *testing.T, path string, v objdumpView, recorded string) (map[edge]edgeCount, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	maps := make(map[uint64]scriptMapping) // by pid
	edges := make(map[edge]edgeCount)
	user := 0
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "PERF_RECORD_") {
			if m := scriptMmap.FindStringSubmatch(line); m != nil {
				pid, _ := strconv.ParseUint(m[1], 10, 32)
				if filepath.Base(m[5]) != recorded {
					continue
				}
				start, _ := strconv.ParseUint(m[2], 16, 64)
				n, _ := strconv.ParseUint(m[3], 16, 64)
				pgoff, _ := strconv.ParseUint(m[4], 0, 64)
				maps[pid] = scriptMapping{start, start + n, pgoff}
			}
			continue
		}
		fs := strings.Fields(line)
		if len(fs) < 2 {
			continue
		}
		pid, err := strconv.ParseUint(fs[0], 10, 32)
		if err != nil {
			continue
		}
		mp, mapped := maps[pid]
		for _, field := range fs[2:] {
			m, ok := parseBrstack(field)
			if !ok {
				continue
			}
			from, to := m.from, m.to
			if from >= 0xffff800000000000 || to >= 0xffff800000000000 {
				continue
			}
			user++
			if !mapped || from < mp.start || from >= mp.end {
				continue
			}
			va, ok := v.vaddr(from - mp.start + mp.pgoff)
			if !ok || !v.calls[va] {
				continue
			}
			e := edge{PID: uint32(pid), Site: addrspace.Addr(from), Callee: addrspace.Addr(to)}
			c := edges[e]
			c.appearances++
			if m.mispred {
				c.mispredicted++
			}
			c.cycles += m.cycles
			edges[e] = c
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		t.Fatal(fmt.Errorf("read %s: %w", path, err))
	}
	return edges, user
}

type brstackEntry struct {
	from, to uint64
	mispred  bool
	cycles   uint64
}

// parseBrstack parses one entry of perf script's brstack field:
// 0xFROM(dso)/0xTO(dso)/M|P|-/X|-/A|-/CYCLES/ (the dso parts optional).
func parseBrstack(field string) (brstackEntry, bool) {
	if !strings.HasPrefix(field, "0x") {
		return brstackEntry{}, false
	}
	var b strings.Builder
	depth := 0
	for _, r := range field { // drop the (dso) parts, which hold slashes
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	p := strings.Split(b.String(), "/")
	if len(p) < 6 {
		return brstackEntry{}, false
	}
	from, err1 := strconv.ParseUint(strings.TrimPrefix(p[0], "0x"), 16, 64)
	to, err2 := strconv.ParseUint(strings.TrimPrefix(p[1], "0x"), 16, 64)
	cycles, err3 := strconv.ParseUint(p[5], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return brstackEntry{}, false
	}
	return brstackEntry{from: from, to: to, mispred: p[2] == "M", cycles: cycles}, true
}
