package engine

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/pipeline"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// manyEventsFile writes a recording of n cpu-clock events (named by the
// Writer's EVENT_UPDATE records and EVENT_DESC) with one sample each.
func manyEventsFile(t testing.TB, n int) string {
	t.Helper()
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleID | perf.SampleCPU | perf.SamplePeriod
	attrs := make([]perfdata.EventAttr, n)
	for i := range attrs {
		a := perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, SamplePeriod: 1000, SampleType: st, Flags: perf.FlagSampleIDAll}
		attrs[i] = perfdata.EventAttr{Attr: a, IDs: []uint64{uint64(100 + i)}, Name: fmt.Sprintf("e%d", i)}
	}
	path := filepath.Join(t.TempDir(), "many.data")
	w, err := perfdata.Create(path, attrs)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for i := range n {
		b := make([]byte, 8, 56)
		le.PutUint32(b, uint32(perf.RecordSample))
		b = le.AppendUint64(b, 0x1000)        // IP
		b = le.AppendUint64(b, 1|1<<32)       // pid, tid
		b = le.AppendUint64(b, uint64(i+1))   // TIME
		b = le.AppendUint64(b, uint64(100+i)) // ID
		b = le.AppendUint64(b, 0)             // CPU
		b = le.AppendUint64(b, 1000)          // PERIOD
		le.PutUint16(b[6:], uint16(len(b)))
		if err := w.WriteRecord(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFinishedRound(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(perfdata.Features{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// readTime returns the least time of seven reads of path's records by
// the loader's pipeline (symbolization left out), checking every sample was folded.
func readTime(t *testing.T, path string, n int) time.Duration {
	t.Helper()
	best := time.Duration(1<<63 - 1)
	for range 7 {
		runtime.GC() // no collection of the previous run's garbage in this one
		t0 := time.Now()
		r, err := perfdata.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		l := newLoader(r, LoadOptions{}, testOptions{})
		if _, err := pipeline.Run(r, l, l.fold, pipeline.Options{}); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(t0))
		got := l.rec.Samples
		l.code.close()
		r.Close()
		if got != uint64(n) {
			t.Fatalf("%d samples read, want %d", got, n)
		}
	}
	return best
}

// TestManyEventsLinear holds the loader's cost linear in the number of
// events: it renewed its copy of the event table after each of the
// Writer's EVENT_UPDATE records (a copy of every event each time).
// 8 times the events must cost less than 32 times as much (linear: about
// 8, quadratic: 64; the old loader measured 57).
func TestManyEventsLinear(t *testing.T) {
	t1 := readTime(t, manyEventsFile(t, 1000), 1000)
	t8 := readTime(t, manyEventsFile(t, 8000), 8000)
	ratio := float64(t8) / float64(max(t1, time.Microsecond))
	t.Logf("1k events %v, 8k events %v: ratio %.1f", t1, t8, ratio)
	if ratio > 32 {
		t.Errorf("8,000 events took %.1f times as long as 1,000 (%v, %v): not linear", ratio, t8, t1)
	}
}
