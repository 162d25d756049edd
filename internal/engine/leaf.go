package engine

import (
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/unwind"
)

// repairLeaf repairs s's callchain (repairChain, with the loader's
// buffer) and counts the outcome.
func (l *loader) repairLeaf(s *perf.Sample) {
	l.countLeaf(l.repairChain(&l.leafChain, s))
}

// repairChain replaces s's callchain by the one with the caller of its
// first user frame restored, when the sample carries the registers and
// stack copy to check it (hwprof's frame-pointer call graphs record them:
// source.AddLeafCopy), and says what it found. Samples without a stack
// copy are left alone. The repaired chain is built in *buf, which then
// takes s's raw chain's array: the decoder refills s.Callchain's array
// with the next sample, so neither overwrites the other.
func (l *loader) repairChain(buf *[]uint64, s *perf.Sample) unwind.LeafRepair {
	if !s.Has(perf.SampleStackUser) || !s.Has(perf.SampleCallchain) {
		return unwind.LeafNotChecked
	}
	l.cutLeafCopy(s)
	chain, r := l.unwinder.RepairCallchain(*buf, s, l.maps)
	if r == unwind.LeafInserted {
		*buf = s.Callchain[:0]
		s.Callchain = chain
	}
	return r
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
