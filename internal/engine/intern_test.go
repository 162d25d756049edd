package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
)

// TestAddrTableMemo interns addresses of several objects and processes,
// many more than the direct-mapped caches hold and many sharing a slot,
// in a random order with repeats: each must get the id a plain map gives
// (the first seen gets the next id), and each return address the answer
// its retTable's map holds (here, with no code to read, ra-1).
func TestAddrTableMemo(t *testing.T) {
	objs := []*addrspace.Object{
		{Path: "/a", Kind: addrspace.KindFile}, // no file to read
		{Path: "//anon", Kind: addrspace.KindJIT},
		nil,
	}
	code := newCodeReader(func(string) string { return "" })
	tab := newAddrTable(code)
	want := map[addrKey]ccmap.FuncID{}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		obj := objs[rng.IntN(len(objs))]
		pid := uint32(rng.IntN(3))
		// addresses 4096 apart share a slot more often than not
		a := addrspace.ObjAddr(1 + rng.IntN(64)*addrMemoSize + rng.IntN(64))
		k := newAddrKey(obj, pid, a)
		id, ok := want[k]
		if !ok {
			id = ccmap.FuncID(len(want))
			want[k] = id
		}
		if got := tab.id(k); got != id {
			t.Fatalf("id(%v, pid %d, %#x) = %d, want %d", obj, k.pid, a, got, id)
		}
		if r := tab.ret(obj, a); r.call != a-1 || r != tab.calls[addrKey{obj: obj, addr: a}] {
			t.Fatalf("ret(%v, %#x) = %+v, want call %#x as its map holds (%+v)", obj, a, r, a-1, tab.calls[addrKey{obj: obj, addr: a}])
		}
	}
	if len(tab.keys) != len(want) {
		t.Errorf("%d keys interned, want %d", len(tab.keys), len(want))
	}
}
