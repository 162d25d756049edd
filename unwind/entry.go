package unwind

import (
	"encoding/binary"

	"github.com/hwprof/hwprof/perf"
)

// EntryReturnAddress returns the return address of a sample taken at a
// function's first instruction (a uprobe on its entry: the exact
// source's), before the function pushed anything: the u64 at the top of
// the user stack, from the sample's stack copy. ok is false when the
// sample has no (or too short a) stack copy.
func EntryReturnAddress(s *perf.Sample) (uint64, bool) {
	if !s.Has(perf.SampleStackUser) {
		return 0, false
	}
	b := s.StackUser.Valid()
	if len(b) < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b), true
}
