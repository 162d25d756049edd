package profile

import (
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/unwind"
)

// LeafStats counts what the leaf repair (unwind.RepairCallchain) found in
// the samples of frame-pointer events that carry a stack copy: samples
// checked, samples whose chain had skipped the caller of the running
// function (restored), and samples the CFI could not judge (kept as the
// kernel wrote them).
type LeafStats struct {
	Checked  uint64
	Inserted uint64
	Unknown  uint64
}

// repairLeaf replaces s's callchain by the one with the caller of its first
// user frame restored, when the sample carries the registers and stack
// copy to check it (the timer source records them), and counts the
// outcome. Samples without a stack copy are left alone.
func (l *loader) repairLeaf(s *perf.Sample) {
	if !s.Has(perf.SampleStackUser) || !s.Has(perf.SampleCallchain) {
		return
	}
	chain, r := l.unwinder.RepairCallchain(l.leafChain, s, l.maps)
	switch r {
	case unwind.LeafNotChecked:
		return
	case unwind.LeafInserted:
		// The decoder refills s.Callchain's array with the next sample:
		// hand it the raw chain's array and keep that one for the next
		// repair, so neither overwrites the other.
		l.leafChain = s.Callchain[:0]
		s.Callchain = chain
		l.rec.Leaf.Inserted++
	case unwind.LeafUnknown:
		l.rec.Leaf.Unknown++
	}
	l.rec.Leaf.Checked++
}
