package engine

import (
	"testing"

	"github.com/hwprof/hwprof/addrspace"
)

// TestLBREdges: an edge's runtime form finds its index until the process
// model changes (reset), after which it must be interned again; the same
// edge interned again keeps its index and its sum; two runtime forms in
// table slots that collide stay apart.
func TestLBREdges(t *testing.T) {
	e := newLBREdges()
	a := lbrRuntime{pid: 1, site: 0x401000, callee: 0x402000}
	ka := lbrKey{caller: 1, callee: 2, site: 0x1000}
	if _, ok := e.find(a); ok {
		t.Fatal("found an edge never put")
	}
	i := e.put(a, ka)
	e.sums[i].periods += 7
	if j, ok := e.find(a); !ok || j != i {
		t.Fatalf("find after put = %d, %v; want %d", j, ok, i)
	}
	e.reset()
	if _, ok := e.find(a); ok {
		t.Fatal("a runtime form found after the process model changed")
	}
	if j := e.put(a, ka); j != i || e.sums[j].periods != 7 {
		t.Fatalf("edge interned again: index %d sum %d, want %d and 7", j, e.sums[j].periods, i)
	}
	// another process, same addresses, another edge; and every slot
	// holder displaced by many other forms is still found through the map
	b := lbrRuntime{pid: 2, site: 0x401000, callee: 0x402000}
	ib := e.put(b, lbrKey{caller: 3, callee: 4, site: 0x1000})
	for n := range uint64(3 * lbrFrontSize) {
		e.put(lbrRuntime{pid: 3, site: addrspace.Addr(n), callee: addrspace.Addr(n + 1)}, lbrKey{caller: 5, callee: 6, site: n})
	}
	if j, ok := e.find(a); !ok || j != i {
		t.Errorf("find(a) = %d, %v after collisions; want %d", j, ok, i)
	}
	if j, ok := e.find(b); !ok || j != ib || ib == i {
		t.Errorf("find(b) = %d, %v; want %d (not %d)", j, ok, ib, i)
	}
	if len(e.keys) != 2+3*lbrFrontSize || len(e.sums) != len(e.keys) {
		t.Errorf("%d edges, %d sums; want %d", len(e.keys), len(e.sums), 2+3*lbrFrontSize)
	}
}
