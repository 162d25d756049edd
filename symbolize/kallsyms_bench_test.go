package symbolize

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
)

// procKallsyms skips b unless /proc/kallsyms is readable with its
// addresses shown (a machine fact, checked here without the package: the
// first line's address is not all zeros).
func procKallsyms(b *testing.B) {
	b.Helper()
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		b.Skipf("no /proc/kallsyms: %v", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		b.Skipf("no /proc/kallsyms: %v", err)
	}
	if addr, _, _ := strings.Cut(line, " "); strings.Trim(addr, "0") == "" {
		b.Skip("/proc/kallsyms addresses are hidden (kernel.kptr_restrict)")
	}
}

// BenchmarkReadKallsyms reads /proc/kallsyms as a report's preloading
// does (the kernel's formatting of its lines is most of the time).
func BenchmarkReadKallsyms(b *testing.B) {
	procKallsyms(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadKallsyms("/proc/kallsyms"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadKallsymsFor reads /proc/kallsyms and keeps the symbols of
// 1000 kernel addresses, as a report of kernel samples does.
func BenchmarkReadKallsymsFor(b *testing.B) {
	procKallsyms(b)
	k, err := loadKallsyms("/proc/kallsyms")
	if err != nil {
		b.Fatal(err)
	}
	addrs := make([]addrspace.ObjAddr, 0, 1000)
	for i := range 1000 {
		s := k.table.syms[i*len(k.table.syms)/1000]
		addrs = append(addrs, addrspace.ObjAddr(s.start+uint64(i%16)))
	}
	b.ReportAllocs()
	for b.Loop() {
		text, err := ReadKallsyms("/proc/kallsyms")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := text.For(addrs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadKallsymsFile reads a saved kallsyms (a copy of
// /proc/kallsyms, as perf record saves it in its build-id cache), the
// file a report reads for a recording made by perf on this kernel.
func BenchmarkReadKallsymsFile(b *testing.B) {
	procKallsyms(b)
	data, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "kallsyms")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadKallsyms(path); err != nil {
			b.Fatal(err)
		}
	}
}
