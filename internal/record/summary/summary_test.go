package summary

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/tuning"
)

func TestEventCounts(t *testing.T) {
	evs := func(n int) []perf.Event {
		e := make([]perf.Event, n)
		for i := range e {
			e[i].Name = fmt.Sprintf("e%d", i)
		}
		return e
	}
	for _, c := range []struct {
		n       int
		samples []uint64
		want    string
	}{
		{1, []uint64{5}, "e0 5"},
		{2, []uint64{0, 7}, "e0 0, e1 7"},
		{8, []uint64{1, 9, 0, 3, 3, 8, 2, 4}, "e1 9, e5 8, e7 4, e3 3, e4 3, e6 2, and 2 more events"},
	} {
		if got := eventCounts(evs(c.n), c.samples); got != c.want {
			t.Errorf("%d events %v: %q, want %q", c.n, c.samples, got, c.want)
		}
	}
}

// The own-CPU line gives a cost per 100k samples only for a recording
// whose samples, not its fixed cost, make most of hwprof's CPU time.
func TestSummaryCostPerSample(t *testing.T) {
	for _, c := range []struct {
		samples uint64
		want    string
	}{
		{729, "hwprof: own CPU time 63.0 ms\n"},
		{50000, "hwprof: own CPU time 63.0 ms, 126.0 ms per 100k samples\n"},
	} {
		var b strings.Builder
		Write(&b, record.Options{Output: "x.data"}, record.Stats{Samples: c.samples, CPU: 63 * time.Millisecond})
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%d samples:\n%s\nwant a line %q", c.samples, b.String(), c.want)
		}
	}
}

// The adaptive period's summary says, per tuned event, the trade its rate
// made against perf's default, in one line; an event not tuned has none.
func TestSummaryTrade(t *testing.T) {
	p := tuning.DefaultPolicy()
	o := record.Options{
		Output:   "x.data",
		Events:   []perf.Event{{Name: "cpu-clock"}, {Name: "task-clock"}},
		Adaptive: &p,
		Tuned:    []bool{true, false},
	}
	trade := "below perf's rate: 3597 samples/s per CPU against perf's 4000, where its bigger samples (leaf copy, key registers) cost what perf's do"
	var b strings.Builder
	Write(&b, o, record.Stats{Samples: 3600, EventSamples: []uint64{3600, 0}, Trades: []string{trade, ""}})
	if !strings.Contains(b.String(), "hwprof: cpu-clock: "+trade+"\n") {
		t.Errorf("summary:\n%s\nwant the trade line for cpu-clock", b.String())
	}
	if strings.Contains(b.String(), "task-clock: \n") || strings.Count(b.String(), "perf's rate") != 1 {
		t.Errorf("summary:\n%s\nwant one trade line, none for the event not tuned", b.String())
	}
}
