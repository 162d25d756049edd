package unwind

import (
	"testing"
)

// BenchmarkUnwindDWARF unwinds every sample of a --call-graph dwarf
// recording of the deep recursion (about 40 frames a sample) with warm
// caches: the cost per sample of CFI unwinding from a 16 KB stack copy.
func BenchmarkUnwindDWARF(b *testing.B) {
	samples, maps := recurseSamples(b)
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
