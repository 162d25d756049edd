package ccmap

import "math/bits"

// childIndex finds a CalleeRef by parent context, call-site address and
// callee. It is an open-addressing hash table with linear probing whose
// 8-byte slots hold a 32-bit tag (the high half of the key's hash) and
// the child's index: the key itself is read back from the child node, so
// an entry costs 8 bytes over the load factor (at most 3/4), where a Go
// map of the key would take 24-byte slots. A key's home slot is its tag
// modulo the table size, so growing rehashes from the tags alone.
// Entries are never removed (Prune rebuilds).
type childIndex struct {
	slots []uint64 // 0: empty; else tag<<32 | child+1
	n     int
}

const minIndexSlots = 1 << 10

func hashKid(parent int32, callee FuncID, addr uint64) uint64 {
	h := (uint64(uint32(parent))<<32 | uint64(callee)) * 0x9e3779b97f4a7c15
	h ^= bits.RotateLeft64(addr*0xbf58476d1ce4e5b9, 31)
	h *= 0x94d049bb133111eb
	return h ^ h>>29
}

// findChild returns the CalleeRef for a call from context c at address
// addr to callee, or none; it creates nothing.
func (m *Map) findChild(c int32, addr uint64, callee FuncID) int32 {
	x := &m.kids
	if len(x.slots) == 0 {
		return none
	}
	tag := hashKid(c, callee, addr) >> 32
	mask := uint64(len(x.slots) - 1)
	for i := tag & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return none
		}
		if s>>32 != tag {
			continue
		}
		k := int32(uint32(s)) - 1
		if m.ctxs[k].parent != c {
			continue
		}
		e := &m.edges[m.ctxs[k].edge]
		if m.funcs[e.callee].id == callee && m.sites[e.site].site.Addr == addr {
			return k
		}
	}
}

// indexChild adds CalleeRef k (not yet in the index) to the index.
func (m *Map) indexChild(k int32) {
	x := &m.kids
	if 4*(x.n+1) > 3*len(x.slots) {
		m.growIndex()
	}
	e := &m.edges[m.ctxs[k].edge]
	x.put(hashKid(m.ctxs[k].parent, m.funcs[e.callee].id, m.sites[e.site].site.Addr)>>32<<32 | uint64(uint32(k+1)))
	x.n++
}

// put stores slot value s at the first free slot from its tag's home.
func (x *childIndex) put(s uint64) {
	mask := uint64(len(x.slots) - 1)
	i := s >> 32 & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = s
}

func (m *Map) growIndex() {
	x := &m.kids
	old := x.slots
	x.slots = make([]uint64, max(minIndexSlots, 2*len(old)))
	for _, s := range old {
		if s != 0 {
			x.put(s)
		}
	}
}

func (x childIndex) clone() childIndex {
	return childIndex{slots: append([]uint64(nil), x.slots...), n: x.n}
}
