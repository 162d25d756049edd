package symbolize

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
)

// spread returns n distinct addresses spread evenly over bin's .text.
func spread(b *testing.B, bin string, n int) []addrspace.ObjAddr {
	b.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	if text == nil || text.Size < uint64(n) {
		b.Skipf("%s: .text too small", bin)
	}
	addrs := make([]addrspace.ObjAddr, n)
	step := text.Size / uint64(n)
	for i := range addrs {
		addrs[i] = addrspace.ObjAddr(text.Addr + uint64(i)*step)
	}
	return addrs
}

var (
	hwprofOnce sync.Once
	hwprofBin  string
	hwprofErr  error
)

// benchBinaries are big binaries: hwprof itself (a Go binary with DWARF,
// built from ../cmd/hwprof) and the system libc with its debug file.
func benchBinaries(b *testing.B) map[string]string {
	hwprofOnce.Do(func() {
		dir, err := os.MkdirTemp("", "symbolize-bench")
		if err != nil {
			hwprofErr = err
			return
		}
		hwprofBin = filepath.Join(dir, "hwprof")
		out, err := exec.Command("go", "build", "-o", hwprofBin, "../cmd/hwprof").CombinedOutput()
		if err != nil {
			hwprofErr = fmt.Errorf("go build ../cmd/hwprof: %v\n%s", err, out)
		}
	})
	bins := map[string]string{"libc-debug-package": "/lib/x86_64-linux-gnu/libc.so.6"}
	if hwprofErr == nil {
		bins["hwprof-binary"] = hwprofBin
	} else {
		b.Logf("no hwprof binary: %v", hwprofErr)
	}
	return bins
}

// BenchmarkSymbolize100k symbolizes 100,000 unique addresses of a big
// binary opened once.
func BenchmarkSymbolize100k(b *testing.B) {
	for name, bin := range benchBinaries(b) {
		b.Run(name, func(b *testing.B) {
			if _, err := os.Stat(bin); err != nil {
				b.Skip(err)
			}
			o, err := Open(ObjectKey{Path: bin}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if !o.HasDWARF() {
				b.Skipf("%s: no DWARF", bin)
			}
			addrs := spread(b, bin, 100_000)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				o.Symbolize(addrs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(addrs)), "ns/addr")
		})
	}
}

// BenchmarkOpen opens a big binary and builds its tables.
func BenchmarkOpen(b *testing.B) {
	for name, bin := range benchBinaries(b) {
		b.Run(name, func(b *testing.B) {
			if _, err := os.Stat(bin); err != nil {
				b.Skip(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Open(ObjectKey{Path: bin}, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseKallsyms parses the running kernel's kallsyms text, read
// once (what reading a saved kallsyms costs; /proc/kallsyms adds the
// kernel's formatting of every line).
func BenchmarkParseKallsyms(b *testing.B) {
	data, err := os.ReadFile("/proc/kallsyms")
	if err != nil || len(data) == 0 {
		b.Skipf("no /proc/kallsyms: %v", err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseKallsyms(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKallsymsFor resolves 1000 kernel addresses with the running
// kernel's kallsyms text, read once (what a report does at its end).
func BenchmarkKallsymsFor(b *testing.B) {
	data, err := os.ReadFile("/proc/kallsyms")
	if err != nil || len(data) == 0 {
		b.Skipf("no /proc/kallsyms: %v", err)
	}
	k, err := parseKallsyms(bytes.NewReader(data))
	if err != nil {
		b.Skip(err)
	}
	addrs := make([]addrspace.ObjAddr, 0, 1000)
	for i := range 1000 {
		s := k.table.syms[i*len(k.table.syms)/1000]
		addrs = append(addrs, addrspace.ObjAddr(s.start+uint64(i%16)))
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := kallsymsFor(data, addrs); err != nil {
			b.Fatal(err)
		}
	}
}
