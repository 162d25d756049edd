package engine

import (
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/unwind"
)

// repairLeaf replaces s's callchain by the one with the caller of its first
// user frame restored, when the sample carries the registers and stack
// copy to check it (the timer source records them), and counts the
// outcome. Samples without a stack copy are left alone.
func (l *loader) repairLeaf(s *perf.Sample) {
	if !s.Has(perf.SampleStackUser) || !s.Has(perf.SampleCallchain) {
		return
	}
	l.cutLeafCopy(s)
	chain, r := l.unwinder.RepairCallchain(l.leafChain, s, l.maps)
	if r == unwind.LeafInserted {
		// The decoder refills s.Callchain's array with the next sample:
		// hand it the raw chain's array and keep that one for the next
		// repair, so neither overwrites the other.
		l.leafChain = s.Callchain[:0]
		s.Callchain = chain
	}
	l.countLeaf(r)
}

// cutLeafCopy cuts s's stack copy to testOptions.leafCut bytes, if set.
func (l *loader) cutLeafCopy(s *perf.Sample) {
	if n := l.test.leafCut; n > 0 && uint64(n) < s.StackUser.DynSize {
		s.StackUser.DynSize = uint64(n)
	}
}

// countLeaf counts the outcome of a leaf repair.
func (l *loader) countLeaf(r unwind.LeafRepair) {
	switch r {
	case unwind.LeafNotChecked:
		return
	case unwind.LeafInserted:
		l.rec.Leaf.Inserted++
	case unwind.LeafUnknown:
		l.rec.Leaf.Unknown++
	}
	l.rec.Leaf.Checked++
}
