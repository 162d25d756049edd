package symbolize

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/testprog"
)

// mapping is one executable mapping of a perf MMAP2 record.
type mapping struct{ start, pgoff uint64 }

// objectAddr converts a runtime address in m to an address of the ELF
// file's own address space, through the PT_LOAD segment holding pgoff.
func objectAddr(t *testing.T, path string, m mapping, ip uint64) (addrspace.ObjAddr, bool) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && m.pgoff >= p.Off && m.pgoff < p.Off+p.Filesz {
			return addrspace.ObjAddr(ip - m.start + m.pgoff - p.Off + p.Vaddr), true
		}
	}
	return 0, false
}

// TestAgainstPerfScript records a program that spends its time in libc
// with perf record -e cpu-clock (no hardware PMU needed) and compares the
// symbol+offset perf script gives each sampled address, in the program,
// in libc and in the kernel (through /proc/kallsyms), with this package's.
func TestAgainstPerfScript(t *testing.T) {
	t.Parallel() // its own programs and files; it measures no time
	need(t, "gcc", "perf")
	dir := t.TempDir()
	bin := testprog.Build(t, "c/libcheavy.c", "-O2", "-g")
	data := filepath.Join(dir, "perf.data")
	rec := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-c", "100000", "-o", data, bin, "1000")
	if out, err := rec.CombinedOutput(); err != nil {
		t.Skipf("perf record cannot sample here (root or kernel.perf_event_paranoid <= 1 needed): %v\n%s", err, out)
	}
	out := run(t, dir, nil, "perf", "script", "-i", data, "-F", "ip,sym,symoff,dso", "--show-mmap-events")
	mmap := regexp.MustCompile(`PERF_RECORD_MMAP2 \d+/\d+: \[0x([0-9a-f]+)\(0x[0-9a-f]+\) @ (0x[0-9a-f]+|0) .*\]: r-xp (/\S+)$`)
	sample := regexp.MustCompile(`^\s*([0-9a-f]+) (.+)\+0x([0-9a-f]+) \((\S+)\)$`)
	maps := map[string]mapping{}
	wants := map[ObjectKey]map[addrspace.ObjAddr]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := mmap.FindStringSubmatch(line); m != nil {
			start, _ := strconv.ParseUint(m[1], 16, 64)
			pgoff, _ := strconv.ParseUint(strings.TrimPrefix(m[2], "0x"), 16, 64)
			maps[m[3]] = mapping{start, pgoff}
			continue
		}
		m := sample.FindStringSubmatch(line)
		if m == nil || (m[4] != bin && !strings.Contains(m[4], "/libc.so") && m[4] != KernelPath) {
			continue
		}
		ip, _ := strconv.ParseUint(m[1], 16, 64)
		a := addrspace.ObjAddr(ip) // kernel addresses are kallsyms addresses
		if m[4] != KernelPath {
			mp, ok := maps[m[4]]
			if !ok {
				continue
			}
			if a, ok = objectAddr(t, m[4], mp, ip); !ok {
				continue
			}
		}
		key := ObjectKey{Path: m[4]}
		if wants[key] == nil {
			wants[key] = map[addrspace.ObjAddr]string{}
		}
		wants[key][a] = m[2] + "+0x" + m[3]
	}
	req := map[ObjectKey][]addrspace.ObjAddr{}
	total := 0
	for key, w := range wants {
		for a := range w {
			req[key] = append(req[key], a)
		}
		total += len(w)
	}
	if total < 50 {
		t.Fatalf("only %d symbolized sample addresses in perf script's output", total)
	}
	if _, err := loadKallsyms("/proc/kallsyms"); err != nil {
		delete(req, ObjectKey{Path: KernelPath}) // perf shows no names then either
	}
	bad := 0
	for key, addrs := range req {
		r, err := resolver(key, Options{})
		if err != nil {
			t.Fatalf("%s: %v", key.Path, err)
		}
		for _, loc := range r.Symbolize(addrs) {
			got := "[unknown]"
			if off, ok := loc.Offset(); ok {
				got = loc.Symbol.Name.Short + "+0x" + strconv.FormatUint(off, 16)
			}
			w := wants[key][loc.Addr]
			// perf 6.1 names IRELATIVE PLT entries "@plt", newer perf
			// and this package after their resolver.
			if strings.HasPrefix(w, "@plt+") && strings.Contains(got, "@plt+") && strings.HasSuffix(got, strings.TrimPrefix(w, "@plt")) {
				continue
			}
			if got != w {
				bad++
				if bad <= 10 {
					t.Errorf("%s %#x: %s, perf script %s", filepath.Base(key.Path), uint64(loc.Addr), got, w)
				}
			}
		}
	}
	t.Logf("%d sampled addresses in %d objects, %d differ from perf script", total, len(req), bad)
}
