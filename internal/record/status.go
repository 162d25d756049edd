package record

import (
	"time"

	"github.com/hwprof/hwprof/perf"
)

// StatusInterval is how often Options.Status is called.
const StatusInterval = 500 * time.Millisecond

// Status is what a recording has written so far, for a live status line.
type Status struct {
	Elapsed time.Duration // since the program started (or the targets were attached)
	Samples uint64
	Lost    uint64 // samples lost so far (ring full and kernel)
	// Periods holds each event's sampling period in force, in
	// Options.Events order: the adaptive controller's latest for tuned
	// events, the fixed period of the others, 0 for an event sampling at
	// a frequency (Freqs has it).
	Periods []uint64
	Freqs   []uint64
}

// status is the recording's Status after elapsed.
func (r *recorder) status(elapsed time.Duration) Status {
	st := Status{
		Elapsed: elapsed,
		Samples: r.stats.Samples,
		Lost:    r.stats.Lost + r.stats.LostSamples,
		Periods: make([]uint64, len(r.o.Events)),
		Freqs:   make([]uint64, len(r.o.Events)),
	}
	for i := range r.o.Events {
		a := &r.o.Events[i].Attr
		switch {
		case r.adaptive != nil && r.adaptive.tuners[i].ctl != nil:
			st.Periods[i] = r.adaptive.tuners[i].ctl.Period()
		case a.Flags.Has(perf.FlagFreq):
			st.Freqs[i] = a.SamplePeriod
		default:
			st.Periods[i] = a.SamplePeriod
		}
	}
	return st
}
