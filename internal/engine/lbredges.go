package engine

import "github.com/hwprof/hwprof/addrspace"

// lbrEdges sums the appearances of each call edge of the branch stacks
// (branches), indexed so that an edge seen before costs one probe of a
// direct-mapped table: a sample of a 32-entry branch stack has up to 32
// calls, most of them edges seen many times, and interning both ends
// through the process model and a struct-keyed map for each was most of
// the time of a report on an LBR recording.
//
// An edge is found by its runtime form (process, call site and callee
// addresses), which names the same edge while the process model does not
// change: reset, called where the loader empties its stack cache (a
// record that maps code or an exec), makes every runtime form found before
// stale (a generation number: no table is cleared).
type lbrEdges struct {
	index map[lbrKey]int32 // edge → its position in keys and sums
	keys  []lbrKey
	sums  []lbrSum
	// runtime forms: the map of every one seen, the table of recent ones
	byAddr map[lbrRuntime]lbrRef
	front  *[lbrFrontSize]lbrFront
	gen    uint32 // the generation of the current process model (from 1)
}

// lbrRuntime is an edge as a branch stack gives it.
type lbrRuntime struct {
	pid          uint32
	site, callee addrspace.Addr
}

type lbrRef struct {
	edge int32
	gen  uint32
}

type lbrFront struct {
	key lbrRuntime
	lbrRef
}

const (
	lbrFrontBits = 12
	lbrFrontSize = 1 << lbrFrontBits
)

func newLBREdges() lbrEdges {
	return lbrEdges{index: map[lbrKey]int32{}, byAddr: map[lbrRuntime]lbrRef{}, gen: 1}
}

// reset makes the runtime forms found so far stale.
func (e *lbrEdges) reset() { e.gen++ }

// find returns the edge of runtime form k, if found in this generation.
func (e *lbrEdges) find(k lbrRuntime) (int32, bool) {
	if e.front == nil {
		e.front = new([lbrFrontSize]lbrFront)
	}
	f := &e.front[lbrSlot(k)]
	if f.gen == e.gen && f.key == k {
		return f.edge, true
	}
	if r, ok := e.byAddr[k]; ok && r.gen == e.gen {
		*f = lbrFront{k, r}
		return r.edge, true
	}
	return 0, false
}

// put notes that runtime form k is edge key, and returns the edge.
func (e *lbrEdges) put(k lbrRuntime, key lbrKey) int32 {
	i, ok := e.index[key]
	if !ok {
		i = int32(len(e.keys))
		e.index[key] = i
		e.keys = append(e.keys, key)
		e.sums = append(e.sums, lbrSum{})
	}
	r := lbrRef{edge: i, gen: e.gen}
	e.byAddr[k] = r
	e.front[lbrSlot(k)] = lbrFront{k, r}
	return i
}

func lbrSlot(k lbrRuntime) uint64 {
	h := (uint64(k.site)*0x9e3779b97f4a7c15 ^ uint64(k.callee)) * 0xff51afd7ed558ccd
	h ^= uint64(k.pid) * 0xc4ceb9fe1a85ec53
	return h >> (64 - lbrFrontBits)
}
