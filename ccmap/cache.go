package ccmap

import "math/bits"

// The stack cache remembers the leaf context of recently folded stacks,
// as runtime/pprof's profMap hashes whole stacks: a repeated stack is
// found by one hash and counted by following parent links from its leaf
// to the root, checking every frame on the way, without a child lookup
// per frame. It is 4-way set associative (a set is one 64-byte cache
// line), a hit moves one place up in its set and a new stack enters at
// the top; a miss or a mismatch only costs the normal insertion.
const (
	cacheWays = 4
	cacheSets = 1 << 10
	cacheSize = cacheWays * cacheSets
)

type cacheSlot struct {
	hash uint64
	leaf int32 // leaf context + 1; 0 is empty
}

// cacheSet returns the set of hash h, allocating the cache on first use.
func (m *Map) cacheSet(h uint64) []cacheSlot {
	if m.cache == nil {
		m.cache = make([]cacheSlot, cacheSize)
	}
	return m.cache[(h&(cacheSets-1))*cacheWays:][:cacheWays]
}

// cachedPath returns the context node of frames if the cache holds it
// (hash h), checking it against the tree, or none. It adds no weight.
func (m *Map) cachedPath(h uint64, frames []Frame) int32 {
	set := m.cacheSet(h)
	for i := range set {
		if set[i].hash == h && set[i].leaf > 0 && m.isPath(set[i].leaf-1, frames) {
			return set[i].leaf - 1
		}
	}
	return none
}

// isPath reports whether context c is the node of frames.
func (m *Map) isPath(c int32, frames []Frame) bool {
	if int(c) >= len(m.ctxs) {
		return false
	}
	n := len(frames)
	for k := 0; k < n-1; k++ {
		cn := &m.ctxs[c]
		if cn.parent == none || m.funcs[m.ctxl[c].fn].id != frames[k].Func || m.siteAddr(c) != frames[k+1].Site {
			return false
		}
		c = cn.parent
	}
	return m.ctxs[c].parent == none && m.funcs[m.ctxl[c].fn].id == frames[n-1].Func
}

// cached folds frames (hash h) through the cache if it holds their leaf,
// and returns the leaf context, or none.
func (m *Map) cached(h uint64, frames []Frame, weight uint64) int32 {
	set := m.cacheSet(h)
	for i := range set {
		sl := set[i]
		if sl.hash != h || sl.leaf == 0 {
			continue
		}
		if !m.addCached(sl.leaf-1, frames, weight) {
			return none
		}
		if i > 0 {
			set[i-1], set[i] = set[i], set[i-1]
		}
		return sl.leaf - 1
	}
	return none
}

// remember puts the leaf of a stack (hash h) into the cache.
func (m *Map) remember(h uint64, leaf int32) {
	set := m.cacheSet(h)
	for i := range set {
		if set[i].hash == h {
			set[i].leaf = leaf + 1
			return
		}
	}
	copy(set[1:], set[:cacheWays-1])
	set[0] = cacheSlot{hash: h, leaf: leaf + 1}
}

// hashStack hashes what identifies a stack's path: every frame's
// function and every frame's call site except the leaf's (ignored).
// Two lanes keep the multiply chains short.
func hashStack(frames []Frame) uint64 {
	a := uint64(len(frames))*0x9e3779b97f4a7c15 ^ uint64(frames[0].Func)
	b := uint64(0x2545f4914f6cdd1d)
	for i := 1; i < len(frames); i++ {
		f := &frames[i]
		x := f.Site ^ uint64(f.Func)<<40 ^ uint64(f.Func)
		if i&1 == 0 {
			a = bits.RotateLeft64(a^x, 27) * 0x94d049bb133111eb
		} else {
			b = bits.RotateLeft64(b^x, 27) * 0xbf58476d1ce4e5b9
		}
	}
	h := (a ^ bits.RotateLeft64(b, 32)) * 0x9e3779b97f4a7c15
	return h ^ h>>29
}

// addCached adds weight along the path from context c, the cached leaf of
// frames, to its root, checking each frame on the way. If the path turns
// out not to be frames, it takes back what it added and returns false.
func (m *Map) addCached(c int32, frames []Frame, weight uint64) bool {
	if int(c) >= len(m.ctxs) {
		return false
	}
	seq := m.seq
	n := len(frames)
	leaf := c
	for k := 0; k < n-1; k++ {
		cn := &m.ctxs[c]
		if cn.parent == none {
			m.undo(leaf, k, weight)
			return false
		}
		e := &m.edges[cn.edge]
		fn := &m.funcs[e.callee]
		s := &m.sites[e.site]
		if fn.id != frames[k].Func || s.site.Addr != frames[k+1].Site {
			m.undo(leaf, k, weight)
			return false
		}
		cn.total += weight
		if e.stamp != seq {
			e.stamp = seq
			e.w.Total += weight
		}
		if fn.stamp != seq {
			fn.stamp = seq
			fn.w.Total += weight
		}
		if s.stamp != seq {
			s.stamp = seq
			s.w.Total += weight
		}
		c = cn.parent
	}
	if m.ctxs[c].parent != none || m.funcs[m.ctxl[c].fn].id != frames[n-1].Func {
		m.undo(leaf, n-1, weight)
		return false
	}
	m.touchRoot(c, weight, seq)
	return true
}

// undo takes back the weight addCached added to the k CalleeRefs from
// leaf up, and to their general nodes (those stamped with this stack's
// seq, which it clears so the insertion that follows counts them again).
func (m *Map) undo(c int32, k int, weight uint64) {
	seq := m.seq
	for ; k > 0; k-- {
		cn := &m.ctxs[c]
		cn.total -= weight
		e := &m.edges[cn.edge]
		if e.stamp == seq {
			e.stamp = 0
			e.w.Total -= weight
		}
		if fn := &m.funcs[e.callee]; fn.stamp == seq {
			fn.stamp = 0
			fn.w.Total -= weight
		}
		if s := &m.sites[e.site]; s.stamp == seq {
			s.stamp = 0
			s.w.Total -= weight
		}
		c = cn.parent
	}
}
