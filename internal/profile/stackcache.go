package profile

import (
	"slices"

	"github.com/hwprof/hwprof/ccmap"
)

// stackCache remembers the address-level frames of recent frame-pointer
// callchains, so a repeated stack (most samples of a hot loop) costs a
// hash and a compare instead of a mapping lookup, an object address and an
// intern per frame. An entry stays right while the process model does not
// change: the loader clears the cache at every record that maps code or
// execs, and when it holds maxStacks stacks (bounding its memory).
type stackCache struct {
	index   map[uint64]int32 // hash -> entry
	entries []stackEntry
	raw     []uint64      // the callchains, back to back
	frames  []ccmap.Frame // their frames, back to back
}

type stackEntry struct {
	pid            uint32
	raw, rawEnd    int32
	frame, frameTo int32
}

const maxStacks = 1 << 16

func newStackCache() *stackCache {
	return &stackCache{index: make(map[uint64]int32)}
}

func (c *stackCache) clear() {
	if len(c.entries) == 0 {
		return
	}
	clear(c.index)
	c.entries, c.raw, c.frames = c.entries[:0], c.raw[:0], c.frames[:0]
}

// hashChain hashes a process's callchain (FNV-1a over 64-bit words).
func hashChain(pid uint32, chain []uint64) uint64 {
	h := uint64(14695981039346656037) ^ uint64(pid)
	for _, w := range chain {
		h = (h ^ w) * 1099511628211
		h ^= h >> 29
	}
	return h
}

// get returns the frames cached for chain in process pid.
func (c *stackCache) get(h uint64, pid uint32, chain []uint64) ([]ccmap.Frame, bool) {
	i, ok := c.index[h]
	if !ok {
		return nil, false
	}
	e := &c.entries[i]
	if e.pid != pid || !slices.Equal(c.raw[e.raw:e.rawEnd], chain) {
		return nil, false
	}
	return c.frames[e.frame:e.frameTo], true
}

// put caches frames for chain (unless its hash is taken by another).
func (c *stackCache) put(h uint64, pid uint32, chain []uint64, frames []ccmap.Frame) {
	if _, taken := c.index[h]; taken {
		return
	}
	if len(c.entries) >= maxStacks {
		c.clear()
	}
	e := stackEntry{pid: pid, raw: int32(len(c.raw)), frame: int32(len(c.frames))}
	c.raw = append(c.raw, chain...)
	c.frames = append(c.frames, frames...)
	e.rawEnd, e.frameTo = int32(len(c.raw)), int32(len(c.frames))
	c.index[h] = int32(len(c.entries))
	c.entries = append(c.entries, e)
}
