package ccmap

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestDCGView(t *testing.T) {
	m := buildFigure2b(1)
	e := func(caller, callee FuncID, w uint64) DCGEdge {
		return DCGEdge{Site: CallSite{caller, siteOf[caller]}, Callee: callee, Weight: w}
	}
	tests := []struct {
		name  string
		by    Measure
		total uint64
		want  []DCGEdge
	}{
		{"adjacent frames, ties by caller", Total, 42, []DCGEdge{e(fB, fC, 15), e(fC, fD, 8), e(fA, fB, 7), e(fC, fF, 7), e(fE, fB, 5)}},
		{"innermost edges", Self, 15, []DCGEdge{e(fC, fD, 8), e(fC, fF, 7)}},
		{"no call events", Calls, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := m.DCG(tc.by)
			if g.Measure != tc.by || g.Total != tc.total || !slices.Equal(g.Edges, tc.want) {
				t.Errorf("got %+v, want total %d edges %+v", g, tc.total, tc.want)
			}
		})
	}
}

// cctRow is a CCT node without its ContextID (which depends on the order
// of insertion).
type cctRow struct {
	parent, depth int
	fn            FuncID
	pruned        bool
	weight, incl  uint64
}

func rows(t CCT) []cctRow {
	var r []cctRow
	for _, n := range t.Nodes {
		r = append(r, cctRow{n.Parent, n.Depth, n.Func, n.Pruned, n.Weight, n.Inclusive})
	}
	return r
}

func TestCCTView(t *testing.T) {
	m := buildFigure2b(1)
	want := []cctRow{
		{-1, 0, fA, false, 0, 7},
		{0, 1, fB, false, 0, 7},
		{1, 2, fC, false, 0, 7},
		{2, 3, fD, false, 6, 6},
		{2, 3, fF, false, 1, 1},
		{-1, 0, fE, false, 0, 5},
		{5, 1, fB, false, 0, 5},
		{6, 2, fC, false, 0, 5},
		{7, 3, fF, false, 5, 5},
		{-1, 0, fB, false, 0, 3},
		{9, 1, fC, false, 0, 3},
		{10, 2, fD, false, 2, 2},
		{10, 2, fF, false, 1, 1},
	}
	c := m.CCT(Self)
	if got := rows(c); !slices.Equal(got, want) {
		t.Errorf("CCT(Self):\n got %+v\nwant %+v", got, want)
	}
	if c.Total != 15 {
		t.Errorf("total %d, want 15", c.Total)
	}
	for _, n := range c.Nodes {
		if p := m.Path(n.Context); p[len(p)-1].Func != n.Func || len(p) != n.Depth+1 {
			t.Errorf("node %+v: context path %v", n, p)
		}
		if n.Depth > 0 && n.Site != siteOf[c.Nodes[n.Parent].Func] {
			t.Errorf("node %+v: site %#x", n, n.Site)
		}
	}
}

func TestPrune(t *testing.T) {
	m := buildFigure2b(1)
	before := m.Clone()
	st := m.Prune(0.25) // below 3.75 samples goes
	mustCheck(t, "pruned", m)
	if want := (PruneStats{Contexts: 5, CallSiteRefs: 2, Moved: Weights{Self: 4, Total: 4}}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	if m.Totals() != before.Totals() {
		t.Errorf("totals changed")
	}
	if !slices.Equal(m.Functions(Self), before.Functions(Self)) || !slices.Equal(m.Edges(Self), before.Edges(Self)) {
		t.Error("general nodes changed")
	}
	want := []cctRow{
		{-1, 0, fA, false, 0, 7},
		{0, 1, fB, false, 0, 7},
		{1, 2, fC, false, 0, 7},
		{2, 3, fD, false, 6, 6},
		{2, 3, 0, true, 1, 1},
		{-1, 0, fE, false, 0, 5},
		{5, 1, fB, false, 0, 5},
		{6, 2, fC, false, 0, 5},
		{7, 3, fF, false, 5, 5},
		{-1, 0, 0, true, 3, 3},
	}
	c := m.CCT(Self)
	if got := rows(c); !slices.Equal(got, want) {
		t.Errorf("CCT after pruning:\n got %+v\nwant %+v", got, want)
	}
	if c.Total != 15 {
		t.Errorf("CCT total %d, want 15", c.Total)
	}
	if got := m.EdgeContexts(CallSite{fC, atC}, fF, Self); len(got) != 1 || !slices.Equal(m.Path(got[0].ID), path(fE, fB, fC, fF)) {
		t.Errorf("contexts of C→F after pruning: %+v", got)
	}
	// folding again after pruning re-creates pruned paths
	m.AddStack(stack(fB, fC, fD), 1)
	mustCheck(t, "pruned then folded", m)
	if got := len(m.Roots(Total)); got != 3 {
		t.Errorf("%d roots, want 3", got)
	}
}

func TestPruneZeroDropsEmptyOnly(t *testing.T) {
	m := New()
	m.AddStack(stack(fA, fB), 0)
	m.AddStack(stack(fA, fC), 2)
	m.AddEdgeInContext(stack(fE, fB), CallSite{fB, atB}, fC, 1) // zero-sample path with calls below
	st := m.Prune(0)
	mustCheck(t, "pruned", m)
	if st.Contexts != 1 || st.Moved != (Weights{}) {
		t.Errorf("stats %+v, want only A→B (weightless) gone", st)
	}
	if got := m.PathWeights(path(fE, fB, fC)); got.Calls != 1 {
		t.Errorf("call context lost: %+v", got)
	}
}

// TestViewsDeterministic: the order stacks arrive in does not change the
// views, only ContextIDs.
func TestViewsDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	ops := randomOps(r, 500)
	a := build(ops)
	r.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	b := build(ops)
	if !Equal(a, b) {
		t.Fatal("maps differ")
	}
	for _, by := range []Measure{Self, Total, Calls} {
		if !reflect.DeepEqual(a.DCG(by), b.DCG(by)) {
			t.Errorf("DCG(%v) differs", by)
		}
		if !slices.Equal(rows(a.CCT(by)), rows(b.CCT(by))) {
			t.Errorf("CCT(%v) differs", by)
		}
		if !slices.Equal(a.Functions(by), b.Functions(by)) || !slices.Equal(a.Edges(by), b.Edges(by)) {
			t.Errorf("functions or edges by %v differ", by)
		}
		ha, hb := a.HotContexts(by, 20), b.HotContexts(by, 20)
		if len(ha) != len(hb) {
			t.Fatalf("hot contexts by %v: %d vs %d", by, len(ha), len(hb))
		}
		for i := range ha {
			if !slices.Equal(a.Path(ha[i].ID), b.Path(hb[i].ID)) || ha[i].Weights != hb[i].Weights {
				t.Errorf("hot context %d by %v differs", i, by)
			}
		}
	}
}

// TestCacheFallback: a cached leaf that is not the stack's (a hash
// collision) is detected, every weight added on the way taken back, and
// the stack inserted normally.
func TestCacheFallback(t *testing.T) {
	m := buildFigure2b(1)
	want := m.Clone()
	abcd := m.HotContexts(Self, 1)[0].ID // A→B→C→D
	for _, tc := range []struct {
		name  string
		funcs []FuncID
	}{
		{"differs at the root", []FuncID{fE, fB, fC, fD}},
		{"differs at the leaf", []FuncID{fA, fB, fC, fF}},
		{"shorter", []FuncID{fB, fC, fD}},
		{"longer", []FuncID{fE, fA, fB, fC, fD}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m.seq++
			if m.addCached(int32(abcd), stack(tc.funcs...), 1) {
				t.Fatal("accepted a wrong leaf")
			}
			if !Equal(m, want) {
				t.Error("weights not taken back")
			}
		})
	}

	// Poison every cache slot with the wrong leaf: folding must still
	// match the model.
	r := rand.New(rand.NewPCG(9, 9))
	ops := randomOps(r, 400)
	m = New()
	model := newRef()
	for i, o := range ops {
		if i%3 == 0 && m.cache != nil && m.Size().Contexts > 0 {
			for j := range m.cache {
				if m.cache[j].leaf > 0 {
					m.cache[j].leaf = int32(r.IntN(m.Size().Contexts)) + 1
				}
			}
		}
		o.apply(m)
		model.apply(o)
	}
	mustCheck(t, "poisoned", m)
	model.compare(t, m)
}

// TestManyStacks: more distinct stacks than the cache holds.
func TestManyStacks(t *testing.T) {
	stacks, seq := zipfStacks(3, 300, 8000, 12, 20000)
	m := New()
	model := newRef()
	for _, i := range seq {
		o := op{kind: opStack, frames: stacks[i], weight: uint64(i%7 + 1)}
		o.apply(m)
		model.apply(o)
	}
	mustCheck(t, "many", m)
	model.compare(t, m)
}

// TestComparePaths: the tie-break order of contexts is the lexicographic
// order of their paths (function, then call site, frame by frame; a
// prefix first).
func TestComparePaths(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	m := build(randomOps(r, 300))
	byPath := func(a, b int32) int {
		return slices.CompareFunc(m.Path(ContextID(a)), m.Path(ContextID(b)), func(x, y Frame) int {
			if c := cmp.Compare(x.Func, y.Func); c != 0 {
				return c
			}
			return cmp.Compare(x.Site, y.Site)
		})
	}
	n := int32(m.Size().Contexts)
	for range 5000 {
		a, b := r.Int32N(n), r.Int32N(n)
		if got, want := m.comparePaths(a, b), byPath(a, b); got != want {
			t.Fatalf("%v vs %v: %d, want %d", m.Path(ContextID(a)), m.Path(ContextID(b)), got, want)
		}
	}
}

// TestCCTStacks: every context counts the stacks that end in it, as
// AddStacks was told (not the weight), through Merge, Project and Prune,
// and the counts add up to Totals.Stacks.
func TestCCTStacks(t *testing.T) {
	a := New()
	a.AddStacks([]Frame{{Func: 3}, {Func: 2, Site: 0x20}, {Func: 1, Site: 0x10}}, 3000, 3) // 1 → 2 → 3
	a.AddStack([]Frame{{Func: 2}, {Func: 1, Site: 0x10}}, 700)                             // 1 → 2
	b := New()
	b.AddStacks([]Frame{{Func: 3}, {Func: 2, Site: 0x20}, {Func: 1, Site: 0x10}}, 50, 2)
	b.AddStacks([]Frame{{Func: 4}, {Func: 1, Site: 0x18}}, 1, 1) // 1 → 4, cold
	m := Merge(a, b)
	mustCheck(t, "merged", m)
	stacks := func(m *Map) map[FuncID]uint64 {
		out := map[FuncID]uint64{}
		for _, n := range m.CCT(Total).Nodes {
			if n.Pruned {
				out[0] += n.Stacks
			} else {
				out[n.Func] += n.Stacks
			}
		}
		return out
	}
	want := map[FuncID]uint64{1: 0, 2: 1, 3: 5, 4: 1}
	if got := stacks(m); !reflect.DeepEqual(got, want) || m.Totals().Stacks != 7 {
		t.Errorf("merged: stacks by leaf %v (Totals.Stacks %d), want %v and 7", got, m.Totals().Stacks, want)
	}
	p := Project(m, func(id FuncID) FuncID { return min(id, 3) }) // 4 becomes 3
	mustCheck(t, "projected", p)
	if got, want := stacks(p), map[FuncID]uint64{1: 0, 2: 1, 3: 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("projected: stacks by leaf %v, want %v", got, want)
	}
	m.Prune(0.01) // 1 → 4 (weight 1 of 3751) goes
	mustCheck(t, "pruned", m)
	if got, want := stacks(m), map[FuncID]uint64{0: 1, 1: 0, 2: 1, 3: 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("pruned: stacks by leaf (0: pruned) %v, want %v", got, want)
	}
}
