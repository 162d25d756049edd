package ccmap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func identity(id FuncID) FuncID { return id }

// projectOp returns o with every FuncID replaced by f(id).
func projectOp(o op, f func(FuncID) FuncID) op {
	p := o
	p.frames = slices.Clone(o.frames)
	for i := range p.frames {
		p.frames[i].Func = f(p.frames[i].Func)
	}
	p.site.Caller = f(o.site.Caller)
	p.callee = f(o.callee)
	return p
}

// joinsInsertedCaller reports whether o is an edge in a context that
// lacks the caller's frame whose first function f maps to the caller's:
// the one case where Project and a direct fold of projected ops differ.
func joinsInsertedCaller(o op, f func(FuncID) FuncID) bool {
	return o.kind == opEdgeInContext && len(o.frames) > 0 &&
		o.frames[0].Func != o.site.Caller && f(o.frames[0].Func) == f(o.site.Caller)
}

func TestProjectIdentity(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for trial := range 20 {
		m := build(randomOps(r, 300))
		p := Project(m, identity)
		mustCheck(t, "projection", p)
		if !Equal(p, m) || !Equal(m, p) {
			t.Fatalf("trial %d: Project(identity) differs from the map", trial)
		}
		m.Prune(0.02)
		mustCheck(t, "pruned", m)
		p = Project(m, identity)
		mustCheck(t, "projection of the pruned map", p)
		if !Equal(p, m) {
			t.Fatalf("trial %d: Project(identity) of a pruned map differs from it", trial)
		}
	}
}

// TestProjectEqualsDirectFold: projecting a fold of random stacks (with
// recursion) and edges by a random many-to-one f gives the fold of the
// projected input.
func TestProjectEqualsDirectFold(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for trial := range 50 {
		table := make([]FuncID, 12)
		nf := 1 + r.IntN(8)
		for i := range table {
			table[i] = FuncID(100 + r.IntN(nf))
		}
		f := func(id FuncID) FuncID { return table[id] }
		var ops, pops []op
		for _, o := range randomOps(r, 400) {
			if joinsInsertedCaller(o, f) {
				continue
			}
			ops = append(ops, o)
			pops = append(pops, projectOp(o, f))
		}
		m := build(ops)
		got := Project(m, f)
		want := build(pops)
		mustCheck(t, "projection", got)
		if !Equal(got, want) {
			t.Fatalf("trial %d (%d functions): Project differs from folding the projected input\ngot  %+v %+v\nwant %+v %+v",
				trial, nf, got.Totals(), got.Size(), want.Totals(), want.Size())
		}
		if got.Totals() != m.Totals() {
			t.Fatalf("totals %+v, want %+v", got.Totals(), m.Totals())
		}
		// Projecting in two steps is projecting once.
		if !Equal(Project(Project(m, func(id FuncID) FuncID { return id % 6 }), func(id FuncID) FuncID { return table[id] }), Project(m, func(id FuncID) FuncID { return table[id%6] })) {
			t.Fatalf("trial %d: two projections differ from their composition", trial)
		}
	}
}

// TestProjectRecursion is the case sums cannot do: two addresses of one
// function on one stack count once in its Total.
func TestProjectRecursion(t *testing.T) {
	// main(1) calls A at address 10 (id 2) which calls A again from
	// address 11 (id 3) which calls leaf (4); A's ids 2, 3 are function 20.
	m := New()
	m.AddStack([]Frame{{Func: 4}, {Func: 3, Site: 0x30}, {Func: 2, Site: 0x20}, {Func: 1, Site: 0x10}}, 100)
	m.AddStack([]Frame{{Func: 3}, {Func: 2, Site: 0x20}, {Func: 1, Site: 0x10}}, 7)
	f := func(id FuncID) FuncID {
		if id == 2 || id == 3 {
			return 20
		}
		return id
	}
	p := Project(m, f)
	mustCheck(t, "projection", p)
	a, _ := p.Function(20)
	if a.Total != 107 || a.Self != 7 {
		t.Fatalf("A: %+v, want Total 107 (once per stack), Self 7", a.Weights)
	}
	e, _ := p.Edge(CallSite{Caller: 20, Addr: 0x20}, 20)
	if e.Total != 107 || e.Self != 7 {
		t.Fatalf("A→A: %+v", e.Weights)
	}
	if ctx := p.HotContexts(Self, 1); len(ctx) != 1 || ctx[0].Self != 100 || ctx[0].Depth != 3 {
		t.Fatalf("hottest context %+v", ctx)
	}
}

// TestProjectPruned: on a pruned map Self and Calls stay exact, Totals
// are kept, and a node's Total is at least the exact one (from a direct
// fold) and at most that plus the pruned weight.
func TestProjectPruned(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	for trial := range 30 {
		table := make([]FuncID, 12)
		for i := range table {
			table[i] = FuncID(r.IntN(4))
		}
		f := func(id FuncID) FuncID { return table[id] }
		var ops, pops []op
		for _, o := range randomOps(r, 300) {
			if !joinsInsertedCaller(o, f) {
				ops = append(ops, o)
				pops = append(pops, projectOp(o, f))
			}
		}
		m := build(ops)
		st := m.Prune(0.05)
		if st.Contexts == 0 {
			continue
		}
		got := Project(m, f)
		want := build(pops)
		mustCheck(t, "projection of a pruned map", got)
		if got.Totals() != want.Totals() {
			t.Fatalf("totals %+v, want %+v", got.Totals(), want.Totals())
		}
		slack := st.Moved.Total
		for _, w := range want.Functions(Self) {
			g, _ := got.Function(w.Func)
			if g.Self != w.Self || g.Calls != w.Calls || g.Total < w.Total || g.Total > w.Total+slack {
				t.Fatalf("trial %d: function %d: %+v, exact %+v (pruned weight %d)", trial, w.Func, g.Weights, w.Weights, slack)
			}
		}
		for _, w := range want.Edges(Self) {
			g, _ := got.Edge(w.Site, w.Callee)
			if g.Self != w.Self || g.Calls != w.Calls || g.Total < w.Total || g.Total > w.Total+slack {
				t.Fatalf("trial %d: edge %v→%d: %+v, exact %+v", trial, w.Site, w.Callee, g.Weights, w.Weights)
			}
		}
		if len(got.Functions(Self)) != len(want.Functions(Self)) || len(got.Edges(Self)) != len(want.Edges(Self)) {
			t.Fatalf("trial %d: %+v nodes, direct fold %+v", trial, got.Size(), want.Size())
		}
	}
}

// BenchmarkProject projects a map of 16-frame stacks (4096 distinct, ids
// of a 2000-function program) onto 500 functions.
func BenchmarkProject(b *testing.B) {
	stacks, seq := zipfStacks(1, 2000, 4096, 16, 1<<16)
	m := New()
	for _, i := range seq {
		m.AddStack(stacks[i], 1000)
	}
	f := func(id FuncID) FuncID { return id % 500 }
	b.ReportAllocs()
	for b.Loop() {
		Project(m, f)
	}
	b.ReportMetric(float64(m.Size().Contexts), "contexts")
}
