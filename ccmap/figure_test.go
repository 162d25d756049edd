package ccmap

import (
	"slices"
	"testing"
)

// The functions and call sites of the CC-Map paper's Figure 2: A and E
// call B, B calls C, C calls D or F. "There is only one call site for
// each method in this example", so C's one site is polymorphic.
const (
	fA FuncID = iota + 1
	fB
	fC
	fD
	fE
	fF
)

const (
	atA = 0xa0 // A's call of B
	atB = 0xb0 // B's call of C
	atC = 0xc0 // C's call of D or F
	atE = 0xe0 // E's call of B
)

var siteOf = map[FuncID]uint64{fA: atA, fB: atB, fC: atC, fE: atE}

// stack builds a stack from outermost to innermost function names,
// returned innermost first as AddStack wants.
func stack(funcs ...FuncID) []Frame {
	fr := make([]Frame, len(funcs))
	for i, f := range funcs {
		fr[len(funcs)-1-i] = Frame{Func: f}
		if i < len(funcs)-1 {
			fr[len(funcs)-1-i].Site = siteOf[f]
		}
	}
	return fr
}

// path builds a root-first path as Path returns it.
func path(funcs ...FuncID) []Frame {
	p := stack(funcs...)
	slices.Reverse(p)
	return p
}

// figure2b is the paper's Figure 2b: the samples (partial stacks, so some
// are rooted at B) in which B→C→D runs 8 times in all but only under A
// (and B-rooted samples), while under E the hot path is E→B→C→F. The
// figure is a drawing; the counts here are ours, chosen to match every
// statement of the text.
var figure2b = []struct {
	funcs []FuncID
	n     int
}{
	{[]FuncID{fA, fB, fC, fD}, 6},
	{[]FuncID{fA, fB, fC, fF}, 1},
	{[]FuncID{fE, fB, fC, fF}, 5},
	{[]FuncID{fB, fC, fD}, 2},
	{[]FuncID{fB, fC, fF}, 1},
}

func buildFigure2b(weight uint64) *Map {
	m := New()
	for _, s := range figure2b {
		for range s.n {
			m.AddStack(stack(s.funcs...), weight)
		}
	}
	return m
}

func TestFigure2bGeneralNodes(t *testing.T) {
	const w = 10 // every sample's period
	m := buildFigure2b(w)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Totals(), (Totals{Samples: 15 * w, Stacks: 15}); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
	if got, want := m.Size(), (Size{Functions: 6, CallSites: 4, Callees: 5, CallSiteRefs: 8, Contexts: 13}); got != want {
		t.Errorf("size %+v, want %+v", got, want)
	}

	funcs := []struct {
		name        string
		f           FuncID
		self, total uint64
	}{
		{"A", fA, 0, 7},
		{"B", fB, 0, 15},
		{"C", fC, 0, 15},
		{"D", fD, 8, 8},
		{"E", fE, 0, 5},
		{"F", fF, 7, 7},
	}
	for _, tc := range funcs {
		t.Run("MethodProfile "+tc.name, func(t *testing.T) {
			got, ok := m.Function(tc.f)
			want := Function{Func: tc.f, Weights: Weights{Self: tc.self * w, Total: tc.total * w}}
			if !ok || got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}

	edges := []struct {
		name           string
		caller, callee FuncID
		self, total    uint64
	}{
		{"A→B", fA, fB, 0, 7},
		{"E→B", fE, fB, 0, 5},
		{"B→C", fB, fC, 0, 15},
		{"C→D", fC, fD, 8, 8},
		{"C→F", fC, fF, 7, 7},
	}
	for _, tc := range edges {
		t.Run("Callee "+tc.name, func(t *testing.T) {
			site := CallSite{Caller: tc.caller, Addr: siteOf[tc.caller]}
			got, ok := m.Edge(site, tc.callee)
			want := Edge{Site: site, Callee: tc.callee, Weights: Weights{Self: tc.self * w, Total: tc.total * w}}
			if !ok || got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}

	t.Run("CallSite C", func(t *testing.T) {
		s, ok := m.Site(CallSite{Caller: fC, Addr: atC}, Total)
		if !ok {
			t.Fatal("no call site in C")
		}
		if s.Weights != (Weights{Self: 15 * w, Total: 15 * w}) {
			t.Errorf("weights %+v", s.Weights)
		}
		want := []Target{{fD, Weights{Self: 8 * w, Total: 8 * w}}, {fF, Weights{Self: 7 * w, Total: 7 * w}}}
		if !slices.Equal(s.Targets, want) {
			t.Errorf("targets %+v, want %+v", s.Targets, want)
		}
		if s.Monomorphic(Total) {
			t.Error("C's site is polymorphic in general")
		}
		if d, share := s.Dominant(Total); d.Callee != fD || share != 8.0/15 {
			t.Errorf("dominant %d share %v, want D 8/15", d.Callee, share)
		}
	})

	t.Run("callers and callees", func(t *testing.T) {
		var callers []FuncID
		for _, e := range m.Callers(fB, Total) {
			callers = append(callers, e.Site.Caller)
		}
		if !slices.Equal(callers, []FuncID{fA, fE}) {
			t.Errorf("callers of B %v, want A, E", callers)
		}
		var callees []FuncID
		for _, e := range m.Callees(fC, Total) {
			callees = append(callees, e.Callee)
		}
		if !slices.Equal(callees, []FuncID{fD, fF}) {
			t.Errorf("callees of C %v, want D, F", callees)
		}
	})
}

// ctxWant is one context with its expected weights (in samples).
type ctxWant struct {
	path               []FuncID
	self, total, calls uint64
}

func checkContexts(t *testing.T, m *Map, got []Context, want []ctxWant, w uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d contexts, want %d: %+v", len(got), len(want), got)
	}
	for i, c := range got {
		wp := path(want[i].path...)
		if p := m.Path(c.ID); !slices.Equal(p, wp) {
			t.Errorf("context %d: path %v, want %v", i, p, wp)
		}
		ww := Weights{Self: want[i].self * w, Total: want[i].total * w, Calls: want[i].calls * w}
		if c.Weights != ww {
			t.Errorf("context %d %v: weights %+v, want %+v", i, want[i].path, c.Weights, ww)
		}
		if c.Depth != len(want[i].path)-1 {
			t.Errorf("context %d: depth %d", i, c.Depth)
		}
	}
}

func TestFigure2bContexts(t *testing.T) {
	const w = 10
	m := buildFigure2b(w)

	// The back-links of every Callee lead to all its contexts.
	links := []struct {
		name           string
		caller, callee FuncID
		want           []ctxWant
	}{
		{"A→B", fA, fB, []ctxWant{{[]FuncID{fA, fB}, 0, 7, 0}}},
		{"E→B", fE, fB, []ctxWant{{[]FuncID{fE, fB}, 0, 5, 0}}},
		{"B→C", fB, fC, []ctxWant{
			{[]FuncID{fA, fB, fC}, 0, 7, 0},
			{[]FuncID{fE, fB, fC}, 0, 5, 0},
			{[]FuncID{fB, fC}, 0, 3, 0},
		}},
		{"C→D", fC, fD, []ctxWant{
			{[]FuncID{fA, fB, fC, fD}, 6, 6, 0},
			{[]FuncID{fB, fC, fD}, 2, 2, 0},
		}},
		{"C→F", fC, fF, []ctxWant{
			{[]FuncID{fE, fB, fC, fF}, 5, 5, 0},
			{[]FuncID{fA, fB, fC, fF}, 1, 1, 0},
			{[]FuncID{fB, fC, fF}, 1, 1, 0},
		}},
	}
	for _, tc := range links {
		t.Run("Context links of "+tc.name, func(t *testing.T) {
			got := m.EdgeContexts(CallSite{Caller: tc.caller, Addr: siteOf[tc.caller]}, tc.callee, Total)
			checkContexts(t, m, got, tc.want, w)
		})
	}

	t.Run("trees rooted at A, E, B", func(t *testing.T) {
		checkContexts(t, m, m.Roots(Total), []ctxWant{
			{[]FuncID{fA}, 0, 7, 0},
			{[]FuncID{fE}, 0, 5, 0},
			{[]FuncID{fB}, 0, 3, 0},
		}, w)
	})

	t.Run("hottest paths", func(t *testing.T) {
		checkContexts(t, m, m.HotContexts(Self, 0), []ctxWant{
			{[]FuncID{fA, fB, fC, fD}, 6, 6, 0},
			{[]FuncID{fE, fB, fC, fF}, 5, 5, 0},
			{[]FuncID{fB, fC, fD}, 2, 2, 0},
			{[]FuncID{fA, fB, fC, fF}, 1, 1, 0},
			{[]FuncID{fB, fC, fF}, 1, 1, 0},
		}, w)
	})

	t.Run("B→C→D runs 8 times in all", func(t *testing.T) {
		if got := m.PathWeights(path(fB, fC, fD)); got != (Weights{Self: 8 * w, Total: 8 * w}) {
			t.Errorf("B→C→D %+v, want 8 samples", got)
		}
		if got := m.PathWeights(path(fE, fB, fC, fF)); got.Total != 5*w {
			t.Errorf("E→B→C→F %+v, want 5 samples", got)
		}
		if got := m.PathWeights(path(fE, fB, fC, fD)); got != (Weights{}) {
			t.Errorf("E→B→C→D %+v, want none", got)
		}
	})

	t.Run("CallSiteRefs of C's site", func(t *testing.T) {
		got := m.SiteContexts(CallSite{Caller: fC, Addr: atC}, Total)
		type ref struct {
			ctx     []FuncID
			targets []Target
		}
		want := []ref{
			{[]FuncID{fA, fB, fC}, []Target{{fD, Weights{6 * w, 6 * w, 0}}, {fF, Weights{w, w, 0}}}},
			{[]FuncID{fE, fB, fC}, []Target{{fF, Weights{5 * w, 5 * w, 0}}}},
			{[]FuncID{fB, fC}, []Target{{fD, Weights{2 * w, 2 * w, 0}}, {fF, Weights{w, w, 0}}}},
		}
		if len(got) != len(want) {
			t.Fatalf("%d CallSiteRefs, want %d", len(got), len(want))
		}
		for i := range want {
			if p := m.Path(got[i].Context); !slices.Equal(p, path(want[i].ctx...)) {
				t.Errorf("ref %d: context %v, want %v", i, p, want[i].ctx)
			}
			if !slices.Equal(got[i].Targets, want[i].targets) {
				t.Errorf("ref %d: targets %+v, want %+v", i, got[i].Targets, want[i].targets)
			}
		}
		// In E's context C's call is monomorphic: devirtualize there.
		if !got[1].Monomorphic(Total) {
			t.Error("under E, C's site should be monomorphic")
		}
		if d, share := got[0].Dominant(Total); d.Callee != fD || share != 6.0/7 {
			t.Errorf("under A: dominant %d share %v, want D 6/7", d.Callee, share)
		}
	})

	t.Run("contexts of F", func(t *testing.T) {
		checkContexts(t, m, m.FuncContexts(fF, Self), []ctxWant{
			{[]FuncID{fE, fB, fC, fF}, 5, 5, 0},
			{[]FuncID{fA, fB, fC, fF}, 1, 1, 0},
			{[]FuncID{fB, fC, fF}, 1, 1, 0},
		}, w)
	})

	t.Run("move down from A", func(t *testing.T) {
		c := m.Roots(Total)[0]
		for _, want := range []FuncID{fB, fC} {
			kids := m.Children(c.ID, Total)
			if len(kids) != 1 || kids[0].Func != want {
				t.Fatalf("children %+v, want %d", kids, want)
			}
			c = kids[0]
		}
		kids := m.Children(c.ID, Total)
		if len(kids) != 2 || kids[0].Func != fD || kids[1].Func != fF {
			t.Errorf("children of A→B→C %+v, want D then F", kids)
		}
		sites := m.ContextSites(c.ID, Total)
		if len(sites) != 1 || sites[0].Site != (CallSite{fC, atC}) || sites[0].Total != 7*w {
			t.Errorf("CallSiteRefs of A→B→C %+v", sites)
		}
	})
}

// TestFigure2a: in Figure 2a B→C→D is the hottest path (8) although no
// single tree shows more than 3 of it.
func TestFigure2a(t *testing.T) {
	m := New()
	for _, s := range []struct {
		funcs []FuncID
		n     int
	}{
		{[]FuncID{fA, fB, fC, fD}, 3},
		{[]FuncID{fA, fB, fC, fF}, 1},
		{[]FuncID{fE, fB, fC, fD}, 3},
		{[]FuncID{fE, fB, fC, fF}, 1},
		{[]FuncID{fB, fC, fD}, 2},
	} {
		for range s.n {
			m.AddStack(stack(s.funcs...), 1)
		}
	}
	if hot := m.HotContexts(Self, 1); hot[0].Self != 3 {
		t.Errorf("hottest single context %+v, want 3 samples", hot[0])
	}
	if got := m.PathWeights(path(fB, fC, fD)).Total; got != 8 {
		t.Errorf("B→C→D in all contexts %d, want 8", got)
	}
	var trees int
	for _, c := range m.EdgeContexts(CallSite{fC, atC}, fD, Total) {
		trees++
		if c.Total > 3 {
			t.Errorf("context %v holds %d", m.Path(c.ID), c.Total)
		}
	}
	if trees != 3 {
		t.Errorf("C→D in %d trees, want 3 (rooted at A, E, B)", trees)
	}
}
