package ccmap

import (
	"testing"
)

// BenchmarkAddStack folds 16-frame stacks drawn Zipf-like from 4096
// distinct stacks of a 2000-function synthetic program, into a map that
// already holds them (steady state).
func BenchmarkAddStack(b *testing.B) {
	stacks, seq := zipfStacks(1, 2000, 4096, 16, 1<<16)
	m := New()
	for _, i := range seq {
		m.AddStack(stacks[i], 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		m.AddStack(stacks[seq[i&(len(seq)-1)]], 1000)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}
