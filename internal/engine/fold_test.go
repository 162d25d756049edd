package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
)

// TestProjectEqualsFoldingByFunction folds random address-level stacks and
// edges as the loader does, projects the map with a many-to-one id
// mapping (ccmap.Project, as the loader's finish), and compares it with
// folding the same events with function ids from the start: every
// function, edge and context weight must be equal.
func TestProjectEqualsFoldingByFunction(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const addrs, funcs = 60, 12
	f := func(a ccmap.FuncID) ccmap.FuncID { return a % funcs } // several addresses per function, recursion appears
	byAddr, byFunc := ccmap.New(), ccmap.New()
	var fa, ff []ccmap.Frame
	for range 3000 {
		depth := 1 + rng.IntN(8)
		fa, ff = fa[:0], ff[:0]
		for i := range depth {
			a := ccmap.FuncID(rng.IntN(addrs))
			site := uint64(0)
			if i > 0 {
				site = 0x1000 + uint64(rng.IntN(4))
			}
			fa = append(fa, ccmap.Frame{Func: a, Site: site})
			ff = append(ff, ccmap.Frame{Func: f(a), Site: site})
		}
		w := 1 + uint64(rng.IntN(1000))
		switch rng.IntN(3) {
		case 0:
			byAddr.AddStack(fa, w)
			byFunc.AddStack(ff, w)
		case 1:
			site := ccmap.CallSite{Caller: fa[0].Func, Addr: 0x2000}
			callee := ccmap.FuncID(rng.IntN(addrs))
			byAddr.AddEdge(site, callee, w)
			byFunc.AddEdge(ccmap.CallSite{Caller: f(site.Caller), Addr: site.Addr}, f(callee), w)
		case 2:
			// the context holds the caller (as the loader passes it)
			caller := fa[0].Func
			callee := ccmap.FuncID(rng.IntN(addrs))
			byAddr.AddEdgeInContext(fa, ccmap.CallSite{Caller: caller, Addr: 0x3000}, callee, w)
			byFunc.AddEdgeInContext(ff, ccmap.CallSite{Caller: f(caller), Addr: 0x3000}, f(callee), w)
		}
	}
	got := ccmap.Project(byAddr, f)
	if err := got.Check(); err != nil {
		t.Fatal(err)
	}
	for _, by := range []ccmap.Measure{ccmap.Self, ccmap.Total, ccmap.Calls} {
		gf, wf := got.Functions(by), byFunc.Functions(by)
		if len(gf) != len(wf) {
			t.Fatalf("%v: %d functions, want %d", by, len(gf), len(wf))
		}
		for i := range gf {
			if gf[i] != wf[i] {
				t.Errorf("%v: function %d: %+v, want %+v", by, i, gf[i], wf[i])
			}
		}
		gd, wd := got.DCG(by), byFunc.DCG(by)
		if len(gd.Edges) != len(wd.Edges) || gd.Total != wd.Total {
			t.Fatalf("%v: %d edges (total %d), want %d (%d)", by, len(gd.Edges), gd.Total, len(wd.Edges), wd.Total)
		}
		for i := range gd.Edges {
			if gd.Edges[i] != wd.Edges[i] {
				t.Errorf("%v: edge %d: %+v, want %+v", by, i, gd.Edges[i], wd.Edges[i])
			}
		}
		if o := ccmap.CCTOverlap(got.CCT(by), byFunc.CCT(by), ccmap.MatchOptions{}); o < 1-1e-9 && by != ccmap.Total {
			t.Errorf("%v: CCT overlap %v, want 1", by, o)
		}
	}
	gt, wt := got.Totals(), byFunc.Totals()
	if gt.Samples != wt.Samples || gt.Calls != wt.Calls || gt.ContextCalls != wt.ContextCalls {
		t.Errorf("totals %+v, want %+v", gt, wt)
	}
}

// TestCallLenBefore finds the call instruction that ends at a return
// address, from the bytes before it (as objdump decodes them).
func TestCallLenBefore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes []byte // the 7 bytes before the return address
		want  int
	}{
		{"call rel32", []byte{0x48, 0x89, 0xc7, 0xe8, 0x10, 0x20, 0x00, 0x00}[1:], 5},
		{"call *%rax", []byte{0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xd0}, 2},
		{"call *0x8(%rax)", []byte{0x90, 0x90, 0x90, 0x90, 0xff, 0x50, 0x08}, 3},
		{"call *0x2fe2(%rip)", []byte{0x90, 0xff, 0x15, 0xe2, 0x2f, 0x00, 0x00}, 6},
		{"no call: mov then nops", []byte{0x48, 0x89, 0xc7, 0x90, 0x90, 0x90, 0x90}, 1},
	} {
		if got := callLenBefore(tc.bytes); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
