package unwind

import (
	"slices"
	"testing"

	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
)

// BenchmarkUnwindDWARF unwinds every sample of a --call-graph dwarf
// recording of the deep recursion (about 40 frames a sample) with warm
// caches: the cost per sample of CFI unwinding from a 16 KB stack copy.
func BenchmarkUnwindDWARF(b *testing.B) {
	dir := b.TempDir()
	prog := testprog.Build(b, "c/recurse.c", "-O1", "-g", "-fomit-frame-pointer")
	data := recordDWARF(b, dir, prog, "150")
	var samples []perf.Sample
	var maps *procmap.Map
	replay(b, data, func(s *perf.Sample, m *procmap.Map) {
		c := *s
		c.Callchain = slices.Clone(s.Callchain)
		c.RegsUser.Values = slices.Clone(s.RegsUser.Values)
		c.StackUser.Data = slices.Clone(s.StackUser.Data)
		samples = append(samples, c)
		maps = m
	})
	if len(samples) == 0 {
		b.Fatal("no samples")
	}
	u := New(Options{})
	var frames []Frame
	nframes := 0
	for i := range samples {
		frames, _ = u.Append(frames[:0], &samples[i], maps)
		nframes += len(frames)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		frames, _ = u.Append(frames[:0], &samples[i%len(samples)], maps)
	}
	b.ReportMetric(float64(nframes)/float64(len(samples)), "frames/sample")
}
