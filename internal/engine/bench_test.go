package engine

import (
	"os"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/pipeline"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// BenchmarkLoad loads the recording named by $HWPROF_BENCH_FILE (for
// example one made by scripts/bench-report.sh), to profile the loader:
//
//	HWPROF_BENCH_FILE=big.data go test ./internal/engine -run XXX -bench Load -cpuprofile cpu.out
func BenchmarkLoad(b *testing.B) {
	file := os.Getenv("HWPROF_BENCH_FILE")
	if file == "" {
		b.Skip("set HWPROF_BENCH_FILE to a recording")
	}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Load(file, LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(p.Recording.Samples), "samples/op")
	}
}

// BenchmarkProject projects the address-level map of $HWPROF_BENCH_FILE
// onto functions (ccmap.Project, as the loader does). On a 1M-sample
// recording (about 11k address-level contexts) it took 2.1 ms, a third of
// the loader's former replay of every context through AddStack (6.6 ms).
func BenchmarkProject(b *testing.B) {
	file := os.Getenv("HWPROF_BENCH_FILE")
	if file == "" {
		b.Skip("set HWPROF_BENCH_FILE to a recording")
	}
	r, err := perfdata.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	l := newLoader(r, LoadOptions{}, testOptions{})
	defer l.code.close()
	m, err := pipeline.Run(r, l, l.fold, pipeline.Options{})
	if err != nil {
		b.Fatal(err)
	}
	l.growEvents()
	_, fmap, _ := l.functions(l.symbolize())
	f := func(id ccmap.FuncID) ccmap.FuncID { return fmap[id] }
	b.Logf("%d contexts", m.Size().Contexts)
	b.ReportAllocs()
	for b.Loop() {
		ccmap.Project(m, f)
	}
}
