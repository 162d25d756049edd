package profile

import (
	"math"
	"reflect"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
)

// edge is one call edge of a test profile: caller -> callee from a call
// site at offset off in object obj, with weight w.
type edge struct {
	caller, callee string
	obj            string
	off            uint64
	w              uint64
}

// callsProfile is a profile counting calls (HasCalls) with the edges es;
// functions are numbered in order of first appearance, from funcs first
// (to give two profiles different FuncIDs for the same names), and each
// call site's address is off+base (runtime addresses differ from run to
// run; Sites maps them back).
func callsProfile(base uint64, funcs []string, es ...edge) *Profile {
	p := &Profile{Map: ccmap.New(), HasCalls: true, Sites: map[ccmap.CallSite]Site{}}
	for _, e := range es {
		site := ccmap.CallSite{Caller: p.id(funcs, e.caller), Addr: base + e.off}
		p.Sites[site] = Site{Object: e.obj, Offset: e.off}
		p.Map.AddEdge(site, p.id(funcs, e.callee), e.w)
	}
	return p
}

// timerProfile is a sampled profile: each edge is a two-frame stack
// (callee innermost) of weight w, so the edge's Self weight is w.
func timerProfile(base uint64, funcs []string, es ...edge) *Profile {
	p := &Profile{Map: ccmap.New(), Sites: map[ccmap.CallSite]Site{}}
	for _, e := range es {
		caller, callee := p.id(funcs, e.caller), p.id(funcs, e.callee)
		p.Sites[ccmap.CallSite{Caller: caller, Addr: base + e.off}] = Site{Object: e.obj, Offset: e.off}
		p.Map.AddStack([]ccmap.Frame{{Func: callee}, {Func: caller, Site: base + e.off}}, e.w)
	}
	return p
}

func (p *Profile) id(order []string, name string) ccmap.FuncID {
	if len(p.Funcs) == 0 {
		for _, n := range order {
			p.Funcs = append(p.Funcs, Func{Name: n})
		}
	}
	for i, f := range p.Funcs {
		if f.Name == name {
			return ccmap.FuncID(i)
		}
	}
	p.Funcs = append(p.Funcs, Func{Name: name})
	return ccmap.FuncID(len(p.Funcs) - 1)
}

const prog = "/bin/p"

// The values are computed by hand in each row's comment: shares are of
// each profile's own total, overlap sums the smaller share of every edge
// the two have in common, hot coverage is the share of the reference's
// edges of at least 0.1 x its hottest that are that hot in the other too,
// and the correlations are over the calls into each aligned function.
func TestAgreement(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name     string
		ref, got *Profile
		want     Agreement
	}{{
		// exact: main->a @0x10 .6, main->a @0x20 .2, main->b @0x30 .2;
		// timer (other FuncIDs, other load address): a @0x10 .25, b @0x30
		// .75. Overlap min(.6,.25) + min(.2,.75) = .45; without sites a
		// min(.8,.25) + b min(.2,.75) = .45. Hot: all three of exact's;
		// a@10 and b@30 hot in timer: 2/3. Calls per function (main, a,
		// b): (0, 800, 200) and (0, 100, 300): Pearson
		// 6666.7/sqrt(346666.7*46666.7) = 0.052414; ranks (1, 3, 2) and
		// (1, 2, 3): Spearman 0.5.
		name: "exact vs timer",
		ref: callsProfile(0x1000, nil,
			edge{"main", "a", prog, 0x10, 600}, edge{"main", "a", prog, 0x20, 200}, edge{"main", "b", prog, 0x30, 200}),
		got: timerProfile(0x5000, []string{"b", "main", "a"},
			edge{"main", "a", prog, 0x10, 100}, edge{"main", "b", prog, 0x30, 300}),
		want: Agreement{Overlap: 0.45, OverlapNoSites: 0.45, HotCoverage: 2.0 / 3, Pearson: 0.052414, Spearman: 0.5, Edges: 2},
	}, {
		// the same edge from another call site: nothing in common with
		// sites, everything without; calls (0, 100) and (0, 50) are
		// perfectly correlated.
		name: "other call site",
		ref:  callsProfile(0, nil, edge{"main", "a", prog, 0x10, 100}),
		got:  callsProfile(0, nil, edge{"main", "a", prog, 0x20, 50}),
		want: Agreement{Overlap: 0, OverlapNoSites: 1, HotCoverage: 0, Pearson: 1, Spearman: 1, Edges: 1},
	}, {
		// the same offset in another object is another call site
		name: "other object",
		ref:  callsProfile(0, nil, edge{"main", "a", "/lib/libx.so", 0x10, 100}),
		got:  callsProfile(0, nil, edge{"main", "a", "/lib/liby.so", 0x10, 100}),
		want: Agreement{Overlap: 0, OverlapNoSites: 1, HotCoverage: 0, Pearson: 1, Spearman: 1, Edges: 1},
	}, {
		// disjoint callees: calls over (main, a, b) (0, 100, 0) and (0,
		// 0, 100): covariance -3333.3 over variance 6666.7: Pearson -0.5;
		// ranks (1.5, 3, 1.5) and (1.5, 1.5, 3): Spearman -0.5.
		name: "disjoint",
		ref:  callsProfile(0, nil, edge{"main", "a", prog, 0x10, 100}),
		got:  callsProfile(0, nil, edge{"main", "b", prog, 0x20, 100}),
		want: Agreement{Pearson: -0.5, Spearman: -0.5, Edges: 1},
	}, {
		// two functions, one of them never called: the counts of main
		// do not vary, so neither correlation is defined.
		name: "one function called",
		ref:  callsProfile(0, nil, edge{"main", "main", prog, 0x10, 7}),
		got:  callsProfile(0, nil, edge{"main", "main", prog, 0x10, 3}),
		want: Agreement{Overlap: 1, OverlapNoSites: 1, HotCoverage: 1, Pearson: nan, Spearman: nan, Edges: 1},
	}, {
		// hot edges at 0.1 x the hottest: ref's a (900) and b (100) are
		// hot, c (9) is not; got has a (100) hot and b (5) below 0.1 x
		// 100: 1 of 2 covered. Shares: ref .8920, .0991, .0089; got .9524,
		// .0476, 0: overlap .8920 + .0476 = .9396. Calls over (main, a,
		// b, c): ranks (1, 4, 3, 2) and (1.5, 4, 3, 1.5): deviations from
		// 2.5 (-1.5, 1.5, .5, -.5) and (-1, 1.5, .5, -1): Spearman
		// 4.5/sqrt(5*4.5) = 0.9487.
		name: "hot threshold",
		ref: callsProfile(0, nil,
			edge{"main", "a", prog, 0x10, 900}, edge{"main", "b", prog, 0x20, 100}, edge{"main", "c", prog, 0x30, 9}),
		got: callsProfile(0, nil, edge{"main", "a", prog, 0x10, 100}, edge{"main", "b", prog, 0x20, 5}),
		want: Agreement{Overlap: 900.0/1009 + 5.0/105, OverlapNoSites: 900.0/1009 + 5.0/105, HotCoverage: 0.5,
			Pearson: pearson4(0, 900, 100, 9, 0, 100, 5, 0), Spearman: 4.5 / math.Sqrt(5*4.5), Edges: 2},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			a := align([]*Profile{tc.ref, tc.got})
			got := a.Agreement(1)
			if !closeAgreement(got, tc.want) {
				t.Errorf("agreement %+v, want %+v", got, tc.want)
			}
			self := a.Agreement(0)
			if self.Overlap != 1 || self.OverlapNoSites != 1 || self.HotCoverage != 1 {
				t.Errorf("the reference against itself: %+v", self)
			}
		})
	}
}

// pearson4 is the Pearson correlation of (x0..x3) and (y0..y3), written
// out.
func pearson4(x0, x1, x2, x3, y0, y1, y2, y3 float64) float64 {
	mx, my := (x0+x1+x2+x3)/4, (y0+y1+y2+y3)/4
	xs, ys := []float64{x0 - mx, x1 - mx, x2 - mx, x3 - mx}, []float64{y0 - my, y1 - my, y2 - my, y3 - my}
	var sxy, sxx, syy float64
	for i := range xs {
		sxy += xs[i] * ys[i]
		sxx += xs[i] * xs[i]
		syy += ys[i] * ys[i]
	}
	return sxy / math.Sqrt(sxx*syy)
}

func closeAgreement(a, b Agreement) bool {
	near := func(x, y float64) bool {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.IsNaN(x) && math.IsNaN(y)
		}
		return math.Abs(x-y) < 1e-5
	}
	return near(a.Overlap, b.Overlap) && near(a.OverlapNoSites, b.OverlapNoSites) && near(a.HotCoverage, b.HotCoverage) &&
		near(a.Pearson, b.Pearson) && near(a.Spearman, b.Spearman) && a.Edges == b.Edges
}

// AlignKindsTo puts both profiles in one space: functions by name whatever their
// ids, sites by object and offset whatever their runtime address, and a
// site missing from Sites by its address.
func TestAlign(t *testing.T) {
	ref := callsProfile(0x1000, nil, edge{"main", "a", prog, 0x10, 3}, edge{"a", "b", prog, 0x40, 1})
	got := callsProfile(0x9000, []string{"b", "a", "main"}, edge{"main", "a", prog, 0x10, 1})
	got.Map.AddEdge(ccmap.CallSite{Caller: 1, Addr: 0x77}, 0, 1) // a -> b, site unknown to Sites
	a := align([]*Profile{ref, got})
	if want := []string{"main", "a", "b"}; !reflect.DeepEqual(a.Funcs, want) {
		t.Errorf("funcs %q, want %q", a.Funcs, want)
	}
	if want := []EdgeKey{{Object: prog, Offset: 0x10}, {Object: prog, Offset: 0x40}, {Offset: 0x77}}; !reflect.DeepEqual(a.Sites, want) {
		t.Errorf("sites %+v, want %+v", a.Sites, want)
	}
	wantShares := []map[EdgeKey]float64{
		{{"main", "a", prog, 0x10}: 0.75, {"a", "b", prog, 0x40}: 0.25},
		{{"main", "a", prog, 0x10}: 0.5, {"a", "b", "", 0x77}: 0.5},
	}
	if !reflect.DeepEqual(a.Shares, wantShares) {
		t.Errorf("shares %+v, want %+v", a.Shares, wantShares)
	}
	if want := [][]float64{{0, 3, 1}, {0, 1, 1}}; !reflect.DeepEqual(a.Counts, want) {
		t.Errorf("counts %v, want %v", a.Counts, want)
	}
	// the main -> a edges of both are one aligned edge
	if a.DCGs[0].Edges[0].Site != a.DCGs[1].Edges[0].Site && a.DCGs[0].Edges[0].Site != a.DCGs[1].Edges[1].Site {
		t.Errorf("main -> a not aligned: %+v and %+v", a.DCGs[0].Edges, a.DCGs[1].Edges)
	}
	if n := got.FuncName(9); n != "[func 9]" {
		t.Errorf("FuncName of an unknown id: %q", n)
	}
}

// TopEdges sorts by share, then by names, object and offset, and cuts.
func TestTopEdges(t *testing.T) {
	p := callsProfile(0, nil,
		edge{"main", "b", prog, 0x20, 1}, edge{"main", "a", prog, 0x30, 1}, edge{"main", "a", prog, 0x10, 1}, edge{"x", "y", prog, 0x50, 5})
	a := align([]*Profile{p})
	want := []EdgeShare{
		{EdgeKey{"x", "y", prog, 0x50}, 0.625},
		{EdgeKey{"main", "a", prog, 0x10}, 0.125},
		{EdgeKey{"main", "a", prog, 0x30}, 0.125},
		{EdgeKey{"main", "b", prog, 0x20}, 0.125},
	}
	if got := a.TopEdges(0, -1); !reflect.DeepEqual(got, want) {
		t.Errorf("all: %+v, want %+v", got, want)
	}
	if got := a.TopEdges(0, 2); !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("top 2: %+v, want %+v", got, want[:2])
	}
}

func TestSource(t *testing.T) {
	for _, s := range []Source{Timer, LBR, Calls, Exact, Mixed} {
		got, err := ParseSource(s.String())
		if err != nil || got != s {
			t.Errorf("ParseSource(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseSource("cycles"); err == nil {
		t.Error("ParseSource(cycles) gave no error")
	}
	if got := Source(9).String(); got != "source(9)" {
		t.Errorf("Source(9) is %q", got)
	}
	if !Exact.CountsCalls() || Timer.CountsCalls() || Mixed.CountsCalls() {
		t.Error("CountsCalls wrong")
	}
}

// AlignKindsTo compares on what a reference that counted the calls into
// some functions measured: the other profile's edges into other functions
// are left out and its shares are of what is left; the reference's own
// callees are in scope even when the scope misses their name (an alias);
// the correlations count the functions in scope only.
func TestAlignKindsTo(t *testing.T) {
	// The reference probed a and b (b under another name): main -> a 3,
	// a -> b 1.
	ref := callsProfile(0x1000, nil, edge{"main", "a", prog, 0x10, 3}, edge{"a", "b", prog, 0x40, 1})
	// The other saw everything: main -> a 3, a -> b 1, main -> c 4,
	// start -> main 2.
	all := callsProfile(0x1000, nil, edge{"main", "a", prog, 0x10, 3}, edge{"a", "b", prog, 0x40, 1},
		edge{"main", "c", prog, 0x20, 4}, edge{"start", "main", prog, 0x5, 2})
	ps, kinds := []*Profile{ref, all}, []DCGKind{CallCounts, CallCounts}
	whole := AlignKindsTo(ps, kinds, nil).Agreement(1)
	if math.Abs(whole.Overlap-0.4) > 1e-9 { // min(.75, .3) + min(.25, .1)
		t.Errorf("unrestricted overlap %v, want 0.4", whole.Overlap)
	}
	a := AlignKindsTo(ps, kinds, map[string]bool{"a": true, "b_alias": true})
	got := a.Agreement(1)
	if got.Overlap != 1 || got.HotCoverage != 1 || got.Edges != 2 {
		t.Errorf("restricted to a and b: %+v; want overlap 1, hot coverage 1, 2 edges", got)
	}
	want := map[EdgeKey]float64{{"main", "a", prog, 0x10}: 0.75, {"a", "b", prog, 0x40}: 0.25}
	if !reflect.DeepEqual(a.Shares[1], want) {
		t.Errorf("restricted shares %v, want %v", a.Shares[1], want)
	}
	var counted []string
	for _, id := range a.Counted {
		counted = append(counted, a.Funcs[id])
	}
	if !reflect.DeepEqual(counted, []string{"a", "b"}) {
		t.Errorf("counted %q, want a and b", counted)
	}
	if got.Pearson != 1 {
		t.Errorf("pearson over a and b %v, want 1", got.Pearson)
	}
}

// align aligns ps, each by the papers' DCG of its source.
func align(ps []*Profile) *Alignment {
	kinds := make([]DCGKind, len(ps))
	for i, p := range ps {
		kinds[i] = p.DCGKind()
	}
	return AlignKindsTo(ps, kinds, nil)
}
