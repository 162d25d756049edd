package engine

import (
	"encoding/binary"

	"github.com/hwprof/hwprof/ccmap"
)

// stackCache remembers the address-level frames of recent frame-pointer
// callchains, so a repeated stack (most samples of a hot loop) costs a
// hash and a compare instead of a mapping lookup, an object address and an
// intern per frame. An entry stays right while the process model does not
// change: the loader clears the cache at every record that maps code or
// execs, and when it holds maxStacks stacks (bounding its memory).
//
// Each entry also sums the weight of its samples not yet handed to the
// folder (pending) and counts them, so that a stack seen a thousand times
// is folded once with the sum of its weights and their count
// (ccmap.AddStacks): folding a stack n times with weights w_i gives the
// map folding it once with their sum and n gives. flush hands the sums
// over; the loader calls it before every clear and at the end.
type stackCache struct {
	limit   int     // stacks held at most (maxStacks; tests set less)
	slots   []int32 // open addressing by hash: entry+1, 0 empty
	entries []stackEntry
	raw     []uint64      // the callchains, back to back
	frames  []ccmap.Frame // their frames, back to back
}

type stackEntry struct {
	hash           uint64
	pending        uint64 // weight not yet folded
	count          uint64 // samples in pending
	pid            uint32
	shape          stackShape // broken or cut
	raw, rawEnd    int32
	frame, frameTo int32
}

const (
	maxStacks = 1 << 16
	maxWords  = 1 << 24 // callchain words and frames, each
	slotBits  = 17      // twice maxStacks slots: probes stay short
)

func newStackCache() *stackCache {
	return &stackCache{limit: maxStacks}
}

// clear forgets every stack; pending weights must have been flushed.
func (c *stackCache) clear() {
	if len(c.entries) == 0 {
		return
	}
	clear(c.slots)
	c.entries, c.raw, c.frames = c.entries[:0], c.raw[:0], c.frames[:0]
}

// flush hands every pending weight and its count of samples to add with
// the entry's frames (which add must copy) and zeroes them.
func (c *stackCache) flush(add func(frames []ccmap.Frame, weight, count uint64)) {
	for i := range c.entries {
		e := &c.entries[i]
		if e.count > 0 {
			add(c.frames[e.frame:e.frameTo], e.pending, e.count)
			e.pending, e.count = 0, 0
		}
	}
}

// hashChain hashes a process's callchain (FNV-1a-like over 64-bit words).
func hashChain(pid uint32, chain []uint64) uint64 {
	h := chainSeed(pid)
	for _, w := range chain {
		h = mixChain(h, w)
	}
	return h
}

// chainSeed and mixChain are the steps of hashChain and hashChainBytes,
// which must agree.
func chainSeed(pid uint32) uint64 { return uint64(14695981039346656037) ^ uint64(pid) }

func mixChain(h, w uint64) uint64 {
	h = (h ^ w) * 1099511628211
	return h ^ h>>29
}

func (c *stackCache) slot(h uint64) uint64 {
	return (h * 0x9e3779b97f4a7c15) >> (64 - slotBits)
}

// find returns the entry of chain in process pid (hash h), or -1.
func (c *stackCache) find(h uint64, pid uint32, chain []uint64) int {
	return c.lookup(h, pid, func(e *stackEntry) bool { return equalChain(c.raw[e.raw:e.rawEnd], chain) })
}

// lookup returns the entry of hash h and process pid that same accepts,
// or -1.
func (c *stackCache) lookup(h uint64, pid uint32, same func(*stackEntry) bool) int {
	if c.slots == nil {
		return -1
	}
	mask := uint64(len(c.slots) - 1)
	for i := c.slot(h); ; i = (i + 1) & mask {
		s := c.slots[i]
		if s == 0 {
			return -1
		}
		e := &c.entries[s-1]
		if e.hash == h && e.pid == pid && same(e) {
			return int(s - 1)
		}
	}
}

func equalChain(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// put caches frames for chain (not cached yet) and returns its entry, or
// -1 when the cache is full: the caller must flush and clear it first.
func (c *stackCache) put(h uint64, pid uint32, chain []uint64, frames []ccmap.Frame, shape stackShape) int {
	if len(c.entries) >= c.limit || len(c.raw)+len(chain) > maxWords || len(c.frames)+len(frames) > maxWords {
		return -1
	}
	if c.slots == nil {
		c.slots = make([]int32, 1<<slotBits)
	}
	e := stackEntry{hash: h, pid: pid, shape: shape, raw: int32(len(c.raw)), frame: int32(len(c.frames))}
	c.raw = append(c.raw, chain...)
	c.frames = append(c.frames, frames...)
	e.rawEnd, e.frameTo = int32(len(c.raw)), int32(len(c.frames))
	mask := uint64(len(c.slots) - 1)
	i := c.slot(h)
	for c.slots[i] != 0 {
		i = (i + 1) & mask
	}
	c.entries = append(c.entries, e)
	c.slots[i] = int32(len(c.entries))
	return len(c.entries) - 1
}

// hashChainBytes is hashChain of a callchain as it sits in a record:
// little-endian u64s.
func hashChainBytes(pid uint32, chain []byte) uint64 {
	h := chainSeed(pid)
	for i := 0; i+8 <= len(chain); i += 8 {
		h = mixChain(h, binary.LittleEndian.Uint64(chain[i:]))
	}
	return h
}

// findBytes is find for a callchain as it sits in a record.
func (c *stackCache) findBytes(h uint64, pid uint32, chain []byte) int {
	return c.lookup(h, pid, func(e *stackEntry) bool { return equalChainBytes(c.raw[e.raw:e.rawEnd], chain) })
}

func equalChainBytes(a []uint64, b []byte) bool {
	if 8*len(a) != len(b) {
		return false
	}
	for i, w := range a {
		if w != binary.LittleEndian.Uint64(b[8*i:]) {
			return false
		}
	}
	return true
}
