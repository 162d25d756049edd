package record

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// twoLoops is mainloop.c with a second thread, started first thing: both
// threads run a tight loop without calls (but the clock's) until each
// has used the CPU milliseconds given of its own CPU time. The second
// thread exists, with its inherited copies of the events, before any
// period change.
const twoLoops = `#include <pthread.h>
#include <stdlib.h>
#include <time.h>
static long ms;
static long thread_ms(void) {
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
static void *loop(void *arg) {
	volatile unsigned long s = 0;
	for (unsigned long i = 0; (i & 0xffff) || thread_ms() < ms; i++)
		s += i;
	return arg;
}
int main(int argc, char **argv) {
	ms = atol(argv[1]);
	pthread_t t;
	if (pthread_create(&t, 0, loop, 0) != 0)
		return 1;
	loop(0);
	pthread_join(t, 0);
	return 0;
}
`

// TestAdaptivePeriodExistingThreads pins what a period change does when
// the program has a thread that existed before it (see adaptive): the
// change reaches the events hwprof opened, not the copies that thread
// inherited, and the kernel swaps a process's event contexts between its
// threads as they take turns on a CPU, so each event keeps its own
// period while the threads may sample through both kinds in turns (on a
// loaded machine they do; with a CPU each they need not). A
// sample's STREAM_ID names the event that took it: after the change the
// events hwprof opened sample at no less than the new period and carry it
// in their PERIOD fields (corrected by the recorder), the inherited
// copies keep the old period and its field.
func TestAdaptivePeriodExistingThreads(t *testing.T) {
	needPerfEvents(t)
	events, p, tuned := adaptiveCPUClock(t)
	start := events[0].Attr.SamplePeriod
	prog := testprog.BuildText(t, "twoloops.c", twoLoops, "-O1", "-fno-omit-frame-pointer", "-pthread")
	out := filepath.Join(t.TempDir(), "two.data")
	// 1.5 s of CPU per thread: the first judgement comes after 1000
	// samples (about 0.15 s of each thread's CPU at the start period).
	st := recordAdaptive(t, Options{Events: events, Argv: []string{prog, "1500"}, Output: out, Adaptive: &p, Tuned: tuned})
	if len(st.Periods) == 0 {
		t.Fatalf("no period change in %d samples", st.Samples)
	}
	for _, c := range st.Periods {
		t.Logf("%.3fs period %d: %s", c.Time.Seconds(), c.Period, c.Reason)
	}
	first := st.Periods[0]
	if first.Period < 2*start {
		t.Fatalf("period went %d → %d; want a loop without calls to grow it twofold or more", start, first.Period)
	}
	mid := (start + first.Period) / 2
	opened := map[uint64]bool{}
	r, err := perfdata.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, a := range r.Attrs() {
		for _, id := range a.IDs {
			opened[id] = true
		}
	}
	// The samples between the first change (and 100 ms for it to take
	// hold) and the next change or the end, by event (STREAM_ID).
	from := uint64(first.Time + 100*time.Millisecond)
	until := uint64(1 << 63)
	if len(st.Periods) > 1 {
		until = uint64(st.Periods[1].Time)
	}
	type stream struct {
		last, minGap uint64
		short        int // gaps under 0.9 of the new period
		samples      int
		fields       map[uint64]int // PERIOD field: samples
		threads      map[uint32]int
	}
	streams := map[uint64]*stream{}
	var s perf.Sample
	var t0 uint64
	for r.Next() {
		if r.Record().Type() != perf.RecordSample {
			continue
		}
		if err := r.DecodeSample(&s); err != nil {
			t.Fatal(err)
		}
		if t0 == 0 {
			t0 = s.Time
		}
		if at := s.Time - t0; at < from || at >= until {
			continue
		}
		k := streams[s.StreamID]
		if k == nil {
			k = &stream{minGap: 1 << 63, fields: map[uint64]int{}, threads: map[uint32]int{}}
			streams[s.StreamID] = k
		}
		if k.samples > 0 {
			k.minGap = min(k.minGap, s.Time-k.last)
			if s.Time-k.last < first.Period*9/10 {
				k.short++
			}
		}
		k.last = s.Time
		k.samples++
		k.fields[s.Period]++
		k.threads[s.TID]++
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	var changed, inherited int
	for id, k := range streams {
		t.Logf("stream %d (opened %v): %d samples, smallest gap %d ns (%d under the new period), PERIOD fields %v, by thread %v",
			id, opened[id], k.samples, k.minGap, k.short, k.fields, k.threads)
		if k.samples < 10 {
			continue // too few to show a gap
		}
		if opened[id] {
			changed += k.samples
			if k.fields[first.Period] != k.samples {
				t.Errorf("stream %d, an event hwprof changed: PERIOD fields %v, want all %d", id, k.fields, first.Period)
			}
			// An hrtimer forwarded by the period never fires sooner;
			// but an event that was not on its CPU when its period
			// changed keeps the time left of its old period (the
			// kernel saved it when the event last went off the CPU)
			// and fires that much after it comes back, once: at most
			// one gap shorter than the new period (seen in about 1
			// run of 10).
			if k.short > 1 {
				t.Errorf("stream %d, an event hwprof changed: %d gaps shorter than the new period %d (the smallest %d ns), want at most one", id, k.short, first.Period, k.minGap)
			}
			continue
		}
		inherited += k.samples
		if k.fields[start] != k.samples {
			t.Errorf("stream %d, an inherited copy: PERIOD fields %v, want all %d (its own period)", id, k.fields, start)
		}
		// Back-to-back samples of a thread that runs on: the old period.
		if k.minGap >= mid {
			t.Errorf("stream %d, an inherited copy: no two samples less than %d ns apart (smallest %d): did the change reach it?", id, mid, k.minGap)
		}
	}
	if changed == 0 || inherited == 0 {
		t.Errorf("after the change %d samples of the events hwprof opened and %d of inherited copies; want both", changed, inherited)
	}
}
