package ccmap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// An op is one fold: a stack, a call edge, or a call edge in context.
type op struct {
	kind    opKind
	frames  []Frame // the stack, or the caller's context
	site    CallSite
	callee  FuncID
	weight  uint64
	context bool
}

type opKind uint8

const (
	opStack opKind = iota
	opEdge
	opEdgeInContext
)

func (o op) apply(m *Map) {
	switch o.kind {
	case opStack:
		m.AddStack(o.frames, o.weight)
	case opEdge:
		m.AddEdge(o.site, o.callee, o.weight)
	case opEdgeInContext:
		m.AddEdgeInContext(o.frames, o.site, o.callee, o.weight)
	}
}

// randomOps draws n ops over a small program (so stacks share paths and
// recurse), with weights from 0 up.
func randomOps(r *rand.Rand, n int) []op {
	p := newProgram(r, 12)
	ops := make([]op, n)
	for i := range ops {
		w := uint64(r.IntN(1000))
		fr := p.stack(r, 1+r.IntN(10))
		switch k := r.IntN(10); {
		case k < 6:
			ops[i] = op{kind: opStack, frames: fr, weight: w}
		case k < 8 || len(fr) < 2:
			ops[i] = op{kind: opEdge, site: CallSite{fr[len(fr)-1].Func, fr[len(fr)-1].Site}, callee: FuncID(r.IntN(12)), weight: w}
		default:
			// the innermost frame is the callee; drop the caller's
			// frame sometimes, as a function-entry probe does
			callee, ctx := fr[0].Func, fr[1:]
			site := CallSite{ctx[0].Func, ctx[0].Site}
			if r.IntN(3) == 0 && len(ctx) > 1 {
				ctx = ctx[1:]
			}
			ops[i] = op{kind: opEdgeInContext, frames: slices.Clone(ctx), site: site, callee: callee, weight: w}
		}
	}
	return ops
}

func build(ops []op) *Map {
	m := New()
	for _, o := range ops {
		o.apply(m)
	}
	return m
}

// ref is a naive model of the CC-Map built from the definitions, with
// maps and a pointer trie.
type ref struct {
	funcs map[FuncID]*Weights
	sites map[CallSite]*Weights
	edges map[dcgKey]*Weights
	roots map[FuncID]*refNode
	tot   Totals
}

type refKey struct {
	site uint64
	fn   FuncID
}

type refNode struct {
	w    Weights
	kids map[refKey]*refNode
}

func newRef() *ref {
	return &ref{funcs: map[FuncID]*Weights{}, sites: map[CallSite]*Weights{}, edges: map[dcgKey]*Weights{}, roots: map[FuncID]*refNode{}}
}

func get[K comparable](m map[K]*Weights, k K) *Weights {
	w, ok := m[k]
	if !ok {
		w = new(Weights)
		m[k] = w
	}
	return w
}

func (r *ref) node(parent *refNode, k refKey) *refNode {
	n, ok := parent.kids[k]
	if !ok {
		n = &refNode{kids: map[refKey]*refNode{}}
		parent.kids[k] = n
	}
	return n
}

// walk creates the general nodes and the context path of frames
// (innermost first) and returns the nodes from the root down.
func (r *ref) walk(frames []Frame) []*refNode {
	n := len(frames)
	root, ok := r.roots[frames[n-1].Func]
	if !ok {
		root = &refNode{kids: map[refKey]*refNode{}}
		r.roots[frames[n-1].Func] = root
	}
	get(r.funcs, frames[n-1].Func)
	path := []*refNode{root}
	for k := n - 2; k >= 0; k-- {
		s := CallSite{frames[k+1].Func, frames[k+1].Site}
		get(r.funcs, frames[k].Func)
		get(r.sites, s)
		get(r.edges, dcgKey{s, frames[k].Func})
		path = append(path, r.node(path[len(path)-1], refKey{s.Addr, frames[k].Func}))
	}
	return path
}

func (r *ref) apply(o op) {
	w := o.weight
	switch o.kind {
	case opStack:
		fr := o.frames
		if len(fr) == 0 {
			return
		}
		r.tot.Samples += w
		r.tot.Stacks++
		for _, n := range r.walk(fr) {
			n.w.Total += w
		}
		seenF := map[FuncID]bool{}
		seenS := map[CallSite]bool{}
		seenE := map[dcgKey]bool{}
		for k, f := range fr {
			if !seenF[f.Func] {
				seenF[f.Func] = true
				r.funcs[f.Func].Total += w
			}
			if k == 0 {
				continue
			}
			s := CallSite{f.Func, f.Site}
			e := dcgKey{s, fr[k-1].Func}
			if !seenS[s] {
				seenS[s] = true
				r.sites[s].Total += w
			}
			if !seenE[e] {
				seenE[e] = true
				r.edges[e].Total += w
			}
		}
		r.funcs[fr[0].Func].Self += w
		p := r.walk(fr)
		p[len(p)-1].w.Self += w
		if len(fr) > 1 {
			s := CallSite{fr[1].Func, fr[1].Site}
			r.sites[s].Self += w
			r.edges[dcgKey{s, fr[0].Func}].Self += w
		}
	case opEdge, opEdgeInContext:
		r.tot.Calls += w
		r.tot.Edges++
		get(r.funcs, o.site.Caller)
		get(r.funcs, o.callee).Calls += w
		get(r.sites, o.site).Calls += w
		get(r.edges, dcgKey{o.site, o.callee}).Calls += w
		if o.kind == opEdge {
			return
		}
		r.tot.ContextCalls += w
		fr := []Frame{{Func: o.callee}, {Func: o.site.Caller, Site: o.site.Addr}}
		if len(o.frames) > 0 && o.frames[0].Func == o.site.Caller {
			fr = append(fr, o.frames[1:]...)
		} else {
			fr = append(fr, o.frames...)
		}
		p := r.walk(fr)
		p[len(p)-1].w.Calls += w
	}
}

// compare checks m against the model through m's queries.
func (r *ref) compare(t *testing.T, m *Map) {
	t.Helper()
	if m.Totals() != r.tot {
		t.Errorf("totals %+v, model %+v", m.Totals(), r.tot)
	}
	if got := len(m.Functions(Self)); got != len(r.funcs) {
		t.Errorf("%d functions, model %d", got, len(r.funcs))
	}
	for id, w := range r.funcs {
		if f, ok := m.Function(id); !ok || f.Weights != *w {
			t.Errorf("function %d: %+v, model %+v", id, f.Weights, *w)
		}
	}
	if got := len(m.Edges(Self)); got != len(r.edges) {
		t.Errorf("%d edges, model %d", got, len(r.edges))
	}
	for k, w := range r.edges {
		if e, ok := m.Edge(k.site, k.callee); !ok || e.Weights != *w {
			t.Errorf("edge %+v: %+v, model %+v", k, e.Weights, *w)
		}
	}
	if got := m.Size().CallSites; got != len(r.sites) {
		t.Errorf("%d call sites, model %d", got, len(r.sites))
	}
	for k, w := range r.sites {
		if s, ok := m.Site(k, Self); !ok || s.Weights != *w {
			t.Errorf("site %+v: %+v, model %+v", k, s.Weights, *w)
		}
	}
	roots := m.Roots(Total)
	if len(roots) != len(r.roots) {
		t.Errorf("%d roots, model %d", len(roots), len(r.roots))
	}
	n := 0
	for _, c := range roots {
		n += r.compareTree(t, m, c, r.roots[c.Func])
	}
	if n != m.Size().Contexts {
		t.Errorf("%d contexts reached, %d in the map", n, m.Size().Contexts)
	}
}

func (r *ref) compareTree(t *testing.T, m *Map, c Context, n *refNode) int {
	t.Helper()
	if n == nil {
		t.Errorf("context %v not in the model", m.Path(c.ID))
		return 1
	}
	if c.Weights != n.w {
		t.Errorf("context %v: %+v, model %+v", m.Path(c.ID), c.Weights, n.w)
	}
	kids := m.Children(c.ID, Total)
	if len(kids) != len(n.kids) {
		t.Errorf("context %v: %d children, model %d", m.Path(c.ID), len(kids), len(n.kids))
	}
	count := 1
	for _, k := range kids {
		count += r.compareTree(t, m, k, n.kids[refKey{k.Site, k.Func}])
	}
	return count
}

func TestAgainstModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		ops := randomOps(r, 300)
		m := build(ops)
		model := newRef()
		for _, o := range ops {
			model.apply(o)
		}
		if err := m.Check(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		model.compare(t, m)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

// TestRecursion: a function on the stack twice counts once in its Total
// (and so does an edge), while the context tree keeps both levels.
func TestRecursion(t *testing.T) {
	m := New()
	// A→B→A→B, innermost first
	m.AddStack([]Frame{{fB, 0}, {fA, atA}, {fB, 0xb1}, {fA, atA}}, 5)
	for _, tc := range []struct {
		name string
		f    FuncID
		want Weights
	}{
		{"A", fA, Weights{Total: 5}},
		{"B", fB, Weights{Self: 5, Total: 5}},
	} {
		if f, _ := m.Function(tc.f); f.Weights != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, f.Weights, tc.want)
		}
	}
	if e, _ := m.Edge(CallSite{fA, atA}, fB); e.Weights != (Weights{Self: 5, Total: 5}) {
		t.Errorf("A→B: %+v, want once", e.Weights)
	}
	if got := len(m.EdgeContexts(CallSite{fA, atA}, fB, Total)); got != 2 {
		t.Errorf("A→B in %d contexts, want 2", got)
	}
	if got := m.PathWeights([]Frame{{fA, atA}, {fB, 0}}).Total; got != 10 {
		t.Errorf("A→B sequence %d, want 10 (twice on the one stack)", got)
	}
	if m.Size().Contexts != 4 {
		t.Errorf("%d contexts, want 4", m.Size().Contexts)
	}
}

func TestAddEdgeInContext(t *testing.T) {
	caller := CallSite{Caller: fC, Addr: atC}
	tests := []struct {
		name    string
		context []Frame
		want    []Frame // path of the callee's context
	}{
		{"caller innermost", []Frame{{fC, 0}, {fB, atB}, {fA, atA}}, path(fA, fB, fC, fD)},
		{"caller's site ignored", []Frame{{fC, 0x999}, {fB, atB}, {fA, atA}}, path(fA, fB, fC, fD)},
		{"caller missing, as at a function-entry probe", []Frame{{fB, atB}, {fA, atA}}, path(fA, fB, fC, fD)},
		{"no context", nil, path(fC, fD)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			id := m.AddEdgeInContext(tc.context, caller, fD, 3)
			if p := m.Path(id); !slices.Equal(p, tc.want) {
				t.Errorf("path %v, want %v", p, tc.want)
			}
			if c, _ := m.Context(id); c.Weights != (Weights{Calls: 3}) {
				t.Errorf("context weights %+v", c.Weights)
			}
			if got, want := m.Totals(), (Totals{Calls: 3, Edges: 1, ContextCalls: 3}); got != want {
				t.Errorf("totals %+v, want %+v", got, want)
			}
			if f, _ := m.Function(fD); f.Weights != (Weights{Calls: 3}) {
				t.Errorf("D: %+v", f.Weights)
			}
			if err := m.Check(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestAddEdgeOnlyGeneral: an edge without context counts in the general
// nodes and nowhere in the tree.
func TestAddEdgeOnlyGeneral(t *testing.T) {
	m := New()
	m.AddEdge(CallSite{fA, atA}, fB, 4)
	if e, _ := m.Edge(CallSite{fA, atA}, fB); e.Calls != 4 {
		t.Errorf("edge %+v", e)
	}
	if m.Size().Contexts != 0 || len(m.EdgeContexts(CallSite{fA, atA}, fB, Calls)) != 0 {
		t.Error("AddEdge made contexts")
	}
	if err := m.Check(); err != nil {
		t.Error(err)
	}
}

func TestEmptyStackIgnored(t *testing.T) {
	m := New()
	m.AddStack(nil, 7)
	if m.Totals() != (Totals{}) || m.Size() != (Size{}) {
		t.Errorf("empty stack counted: %+v %+v", m.Totals(), m.Size())
	}
}

// TestAddStacksSumsSamples: folding each stack's samples summed with
// AddStacks gives the map that folding every sample with AddStack gives,
// Totals.Stacks included.
func TestAddStacksSumsSamples(t *testing.T) {
	stacks, seq := zipfStacks(5, 300, 500, 12, 20000)
	one := New()
	sum := make([]uint64, len(stacks))
	count := make([]uint64, len(stacks))
	for k, i := range seq {
		w := uint64(1 + k%7)
		one.AddStack(stacks[i], w)
		sum[i] += w
		count[i]++
	}
	summed := New()
	for i := len(stacks) - 1; i >= 0; i-- { // another order too
		summed.AddStacks(stacks[i], sum[i], count[i])
	}
	if err := summed.Check(); err != nil {
		t.Fatal(err)
	}
	if summed.Totals() != one.Totals() {
		t.Fatalf("totals %+v, want %+v", summed.Totals(), one.Totals())
	}
	if !Equal(summed, one) {
		t.Fatal("summed stacks give another map")
	}
	summed.AddStacks(stacks[0], 100, 0)
	summed.AddStacks(nil, 100, 3)
	if summed.Totals() != one.Totals() {
		t.Fatalf("count 0 or no frames changed the totals: %+v", summed.Totals())
	}
}
