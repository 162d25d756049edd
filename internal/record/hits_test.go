package record

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// hitPaths are the paths marked, sorted.
func hitPaths(h *hits) []string {
	var p []string
	for k := range h.hit {
		p = append(p, k)
	}
	slices.Sort(p)
	return p
}

// TestHitsMark: an address marks the object its process had mapped
// there, or its parent (fork) had; stack words outside every mapping,
// addresses of other processes and of gaps mark nothing.
func TestHitsMark(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(h *hits)
		want []string
	}{
		{"program and library", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			h.addMapping(10, 0x7f0000000000, 0x20000, "/lib/libc.so.6")
			h.addMapping(10, 0x7f1000000000, 0x20000, "/lib/libunused.so")
			h.mark(10, 0x400800)
			h.mark(10, 0x7f0000010000)
		}, []string{"/bin/prog", "/lib/libc.so.6"}},
		{"end is outside, gap marks nothing", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			h.addMapping(10, 0x500000, 0x1000, "/bin/other")
			h.mark(10, 0x401000)
			h.mark(10, 0x4fffff)
			h.mark(10, 0x3fffff)
		}, nil},
		{"another process's mapping", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			h.mark(11, 0x400800)
		}, nil},
		{"forked child inherits", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			h.addFork(11, 10)
			h.addFork(12, 11)
			h.addMapping(12, 0x600000, 0x1000, "/bin/exec")
			h.mark(12, 0x400010)
		}, []string{"/bin/prog"}},
		{"a mapping within a larger one", func(h *hits) {
			h.addMapping(10, 0x400000, 0x100000, "/bin/big")
			h.addMapping(10, 0x410000, 0x1000, "/bin/small")
			h.mark(10, 0x480000) // after small, in big
		}, []string{"/bin/big"}},
		{"live: an address before its mapping", func(h *hits) {
			h.live = true
			h.markOrWait(10, 0x400800)
			h.markOrWait(10, 0xffffffff81000000) // the kernel's: not kept waiting
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			if len(h.pending) != 1 {
				t.Errorf("pending %v, want the user address alone", h.pending)
			}
			h.done()
		}, []string{"/bin/prog"}},
		{"stack words", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			for _, w := range []uint64{0, 42, 0x7ffc00001000, 0x400123} {
				h.markWord(10, w)
			}
		}, []string{"/bin/prog"}},
	} {
		h := newHits()
		tc.run(h)
		if got := hitPaths(h); !slices.Equal(got, tc.want) {
			t.Errorf("%s: marked %v, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkHitsReadBack times the end-of-recording pass over the samples
// of a recording named by $HWPROF_BENCH_FILE (one hwprof wrote: record
// -o FILE), its mappings noted first as record notes them while it runs:
//
//	HWPROF_BENCH_FILE=x.data go test -run XXX -bench HitsReadBack ./internal/record/
func BenchmarkHitsReadBack(b *testing.B) {
	path := os.Getenv("HWPROF_BENCH_FILE")
	if path == "" {
		b.Skip("set HWPROF_BENCH_FILE to a recording")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	h := newHits()
	rd, err := perfdata.NewReader(f, fi.Size())
	if err != nil {
		b.Fatal(err)
	}
	rd.SetFileOrder(true)
	note := func(misc uint16, pid uint32, addr, n uint64, name string) { // as noteMapping
		if misc&perf.MiscMmapData == 0 && strings.HasPrefix(name, "/") && !isAnonExec(name) {
			h.addMapping(pid, addr, n, name)
		}
	}
	for rd.Next() {
		switch d, _ := rd.Decode(); d := d.(type) {
		case *perf.Mmap2:
			note(d.Misc, d.PID, d.Addr, d.Len, d.Filename)
		case *perf.Mmap:
			note(d.Misc, d.PID, d.Addr, d.Len, d.Filename)
		case *perf.Fork:
			h.addFork(d.PID, d.PPID)
		}
	}
	rd.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := h.readSamples(f, fi.Size()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rd.Count(perf.RecordSample)), "samples")
	b.ReportMetric(float64(len(h.hit)), "objects")
}
