package profile

import (
	"os"
	"testing"
)

// BenchmarkLoad loads the recording named by $HWPROF_BENCH_FILE (for
// example one made by scripts/bench-report.sh), to profile the loader:
//
//	HWPROF_BENCH_FILE=big.data go test ./internal/profile -run XXX -bench Load -cpuprofile cpu.out
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
