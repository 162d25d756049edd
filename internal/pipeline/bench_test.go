package pipeline

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/hwprof/hwprof/ccmap"
)

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPipeline hands 16-frame stacks to the pipeline and closes it
// (so every sample is folded and merged within the timing), for 1 and 2
// workers. The stacks are distinct random walks of a synthetic
// 2000-function program, 4096 of them (the target case) or 65536 (more
// than the workers' pending sums hold), drawn Zipf-like (s = 1.1) as
// samples of a real program repeat their hot stacks. It reports samples
// per wall-clock second and per CPU second of the process (producer,
// workers and merge together; the per-core rate).
func BenchmarkPipeline(b *testing.B) {
	for _, distinct := range []int{4096, 65536} {
		r := rand.New(rand.NewPCG(1, 1))
		p := newProgram(r, 2000)
		stacks := make([][]ccmap.Frame, distinct)
		for i := range stacks {
			stacks[i] = p.stack(r, 16)
		}
		z := rand.NewZipf(r, 1.1, 1, uint64(len(stacks)-1))
		seq := make([]int, 1<<16)
		for i := range seq {
			seq[i] = int(z.Uint64())
		}
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("stacks=%d/workers=%d", distinct, workers), func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.ResetTimer()
				pl := NewFolder(FoldOptions{Workers: workers})
				for i := range b.N {
					pl.Add(stacks[seq[i&(len(seq)-1)]], 1000)
				}
				m := pl.Close()
				b.StopTimer()
				if m.Totals().Stacks != uint64(b.N) {
					b.Fatalf("%d stacks folded, %d added", m.Totals().Stacks, b.N)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
				if cpu := cpuTime() - cpu0; cpu > 0 {
					b.ReportMetric(float64(b.N)/cpu.Seconds(), "samples/cpu-s")
				}
				b.ReportMetric(float64(pl.Stats().Stalls), "stalls")
			})
		}
	}
}
