package perfdata

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hwprof/hwprof/perf"
)

// BenchmarkNext reads every record of the file named by HWPROF_BENCH_FILE
// (skipped without it) and reports the cost per record, wall and CPU time
// (see BenchmarkNextRuns): in time order reusing buffers (time/reuse) and
// with SetKeepRecords (time/keep), and in file order (file/reuse).
func BenchmarkNext(b *testing.B) {
	path := os.Getenv("HWPROF_BENCH_FILE")
	if path == "" {
		b.Skip("HWPROF_BENCH_FILE is not set")
	}
	for _, c := range []struct {
		name            string
		fileOrder, keep bool
	}{{"time/reuse", false, false}, {"time/keep", false, true}, {"file/reuse", true, false}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int64
			cpu0 := cpuTime(b)
			for b.Loop() {
				r, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				r.SetKeepRecords(c.keep)
				r.SetFileOrder(c.fileOrder)
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
			recs := float64(int64(b.N) * n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/recs, "ns/record")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/recs, "cpu-ns/record")
			b.ReportMetric(float64(n), "records")
		})
	}
}

// writeCPURuns writes a file-mode recording shaped like perf record's: in
// every round, each of cpus CPUs contributes a run of perRun callchain
// samples sorted by time (one ring buffer read), the CPUs' times
// interleaved; every 50th time repeats the one before (ties). It returns
// the path and the number of records.
func writeCPURuns(tb testing.TB, rounds, cpus, perRun int) (string, int) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "runs.data")
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod | perf.SampleCallchain
	w, err := Create(path, []EventAttr{{Attr: cpuClockAttr(st), Name: "cpu-clock"}})
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range rounds {
		base := uint64(k+1) * 10_000_000
		for c := range cpus {
			tm := base + uint64(c)*7
			for i := range perRun {
				if i%50 != 49 {
					tm += 1 + rng.Uint64N(2000)
				}
				if err := w.WriteRecord(callchainSample(tm, 3+rng.IntN(8))); err != nil {
					tb.Fatal(err)
				}
				n++
			}
		}
		if err := w.WriteFinishedRound(); err != nil {
			tb.Fatal(err)
		}
		n++
	}
	if err := w.Close(Features{}); err != nil {
		tb.Fatal(err)
	}
	return path, n + 1 // the writer's EVENT_UPDATE naming the event
}

// BenchmarkNextRuns reads a generated recording of 200,000 samples in
// rounds of 2 or 8 CPUs' runs, in time order and in file order, and
// reports the cost per record of Open and Next alone: wall time, and CPU
// time of the process (user+sys, the garbage collector's included; on a
// shared machine the steadier figure).
func BenchmarkNextRuns(b *testing.B) {
	for _, cpus := range []int{2, 8} {
		path, n := writeCPURuns(b, 100, cpus, 2000/cpus)
		for _, fileOrder := range []bool{false, true} {
			name := fmt.Sprintf("cpus=%d/time", cpus)
			if fileOrder {
				name = fmt.Sprintf("cpus=%d/file", cpus)
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime(b)
				for b.Loop() {
					r, err := Open(path)
					if err != nil {
						b.Fatal(err)
					}
					r.SetFileOrder(fileOrder)
					got := 0
					for r.Next() {
						got++
					}
					if err := r.Err(); err != nil || got != n {
						b.Fatalf("%d records of %d: %v", got, n, err)
					}
					r.Close()
				}
				recs := float64(int64(b.N) * int64(n))
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/recs, "ns/record")
				b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/recs, "cpu-ns/record")
			})
		}
	}
}

// cpuTime returns the CPU time (user+sys) the process has used.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
