package pipeline

import (
	"math/bits"
	"slices"

	"github.com/hwprof/hwprof/ccmap"
)

// pending sums the weights of repeated stacks on their way to a worker's
// shard, so that a stack sampled a thousand times is folded into the
// CC-Map once, with the sum of their weights and their count
// (ccmap.AddStacks), instead of a thousand times: samples of a real
// program repeat their hot stacks, and a hit here is one hash and one
// comparison of the frames, where folding walks the stack's path and
// updates four nodes per frame. The map is the same either way.
//
// It is 4-way set associative by a hash of the frames: a hit adds to its
// slot and moves it one place up in its set; a new stack enters at the top
// and the slot at the bottom leaves, its sum folded. flush folds every
// sum; the pipeline calls it before a shard is read (Snapshot, Close).
// A worker's pending is touched only by that worker, or by the producer
// while the workers are idle.
type pending struct {
	slots []pendSlot
}

const (
	pendWays = 4
	pendSets = 1 << 10
)

type pendSlot struct {
	hash   uint64
	weight uint64 // sum of the weights not folded yet
	count  uint64 // samples in that sum; 0: nothing pending
	frames []ccmap.Frame
}

func newPending() *pending {
	return &pending{slots: make([]pendSlot, pendWays*pendSets)}
}

// add sums count samples of frames (non-empty) of weight weight into its
// slot, folding into m the sum of the slot it displaces.
func (p *pending) add(m *ccmap.Map, frames []ccmap.Frame, weight, count uint64) {
	h := hashFrames(frames)
	set := p.slots[(h&(pendSets-1))*pendWays:][:pendWays]
	for i := range set {
		s := &set[i]
		if s.hash == h && s.frames != nil && slices.Equal(s.frames, frames) {
			s.weight += weight
			s.count += count
			if i > 0 {
				set[i-1], set[i] = set[i], set[i-1]
			}
			return
		}
	}
	last := set[pendWays-1]
	if last.count > 0 {
		m.AddStacks(last.frames, last.weight, last.count)
	}
	copy(set[1:], set[:pendWays-1])
	set[0] = pendSlot{hash: h, weight: weight, count: count, frames: append(last.frames[:0], frames...)}
}

// flush folds every pending sum into m; the stacks stay, with nothing
// pending.
func (p *pending) flush(m *ccmap.Map) {
	for i := range p.slots {
		s := &p.slots[i]
		if s.count > 0 {
			m.AddStacks(s.frames, s.weight, s.count)
			s.weight, s.count = 0, 0
		}
	}
}

// hashFrames hashes a stack's functions and call sites.
func hashFrames(frames []ccmap.Frame) uint64 {
	h := uint64(len(frames)) * 0x9e3779b97f4a7c15
	for i := range frames {
		f := &frames[i]
		h = bits.RotateLeft64(h^f.Site, 23) * 0x94d049bb133111eb
		h = bits.RotateLeft64(h^uint64(f.Func), 29) * 0xbf58476d1ce4e5b9
	}
	return h ^ h>>31
}
