package engine

import (
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/profile"
)

// periodHistory is the recording's time span and each event's period
// history: per event and thread the last period seen, per event the
// periods seen at all (see notePeriod).
type periodHistory struct {
	first, last  uint64 // times of the first and last samples
	timed        bool   // a sample had a time
	lastPeriod   map[evTID]uint64
	periodsSeen  []map[uint64]bool
	recent       evTID // the last sample's thread and period
	recentPeriod uint64
	hasRecent    bool
}

// evTID names one thread's samples of one event.
type evTID struct {
	ev  int
	tid uint32
}

// notePeriod keeps the recording's duration and each event's period
// history: its first period and every change, from the samples' PERIOD
// field. A change is a thread whose samples' period differs from its
// previous ones, or a thread that starts with a period the event has not
// had before: the copies of an event that threads inherited before its
// period changed keep the old period (PERF_EVENT_IOC_PERIOD reaches only
// the event it is given), and a thread may sample through either in
// turns, so an event's threads may sample at two periods at once, which
// is not a change each time their samples interleave. Frequency-mode
// events (whose period the kernel adjusts sample by sample) keep their
// first period only.
func (l *loader) notePeriod(s *perf.Sample, ev int, period uint64) {
	l.notePeriodAt(ev, s.TID, s.Time, s.Has(perf.SampleTime), period)
}

// notePeriodAt is notePeriod for a sample of thread tid at time t (when
// timed).
func (l *loader) notePeriodAt(ev int, tid uint32, t uint64, timed bool, period uint64) {
	if timed {
		if !l.per.timed {
			l.per.first, l.per.timed = t, true
		}
		l.per.first = min(l.per.first, t)
		l.per.last = max(l.per.last, t)
	}
	if period == 0 {
		return
	}
	if l.per.lastPeriod == nil {
		l.per.lastPeriod = map[evTID]uint64{}
	}
	k := evTID{ev, tid}
	if l.per.hasRecent && k == l.per.recent && period == l.per.recentPeriod {
		return // the common case: the same thread at the same period
	}
	l.per.recent, l.per.recentPeriod, l.per.hasRecent = k, period, true
	prev, known := l.per.lastPeriod[k]
	if prev == period {
		return
	}
	l.per.lastPeriod[k] = period
	seen := l.per.periodsSeen[ev]
	if (!known && seen[period]) || (len(seen) > 0 && l.ev.format.Attr(ev).Freq()) {
		return
	}
	if seen[period] && l.lastChange(ev) == period {
		// another thread (or CPU-wide event) reaching the period the
		// event changed to last: the same change, not another one
		return
	}
	seen[period] = true
	var since uint64
	if timed && t > l.per.first {
		since = t - l.per.first
	}
	l.rec.Periods = append(l.rec.Periods, profile.PeriodChange{TimeNS: since, Event: l.ev.attrs[ev].Name, Period: period})
}

// lastChange is the period of event ev's latest entry in the period
// history (0 if none).
func (l *loader) lastChange(ev int) uint64 {
	name := l.ev.attrs[ev].Name
	for i := len(l.rec.Periods) - 1; i >= 0; i-- {
		if l.rec.Periods[i].Event == name {
			return l.rec.Periods[i].Period
		}
	}
	return 0
}
