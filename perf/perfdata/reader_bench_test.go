package perfdata

import (
	"os"
	"testing"
)

// BenchmarkNext reads every record of the file named by HWPROF_BENCH_FILE
// (skipped without it) in time order and reports the cost per record:
// reusing buffers (reuse), and with SetKeepRecords (keep).
func BenchmarkNext(b *testing.B) {
	path := os.Getenv("HWPROF_BENCH_FILE")
	if path == "" {
		b.Skip("HWPROF_BENCH_FILE is not set")
	}
	for _, keep := range []bool{false, true} {
		name := "reuse"
		if keep {
			name = "keep"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var n int64
			for b.Loop() {
				r, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				r.SetKeepRecords(keep)
				n = 0
				var sum int
				for r.Next() {
					sum += len(r.Record().Raw)
					n++
				}
				if err := r.Err(); err != nil {
					b.Fatal(err)
				}
				r.Close()
				if n == 0 || sum == 0 {
					b.Fatal("no records")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*n), "ns/record")
			b.ReportMetric(float64(n), "records")
		})
	}
}
