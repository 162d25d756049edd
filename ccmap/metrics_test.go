package ccmap

import (
	"math"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func dcg(edges ...DCGEdge) DCG {
	g := DCG{Edges: edges}
	for _, e := range edges {
		g.Total += e.Weight
	}
	return g
}

func de(caller FuncID, addr uint64, callee FuncID, w uint64) DCGEdge {
	return DCGEdge{Site: CallSite{caller, addr}, Callee: callee, Weight: w}
}

// Hand-computed: a = {e1: 6, e2: 3, e3: 1}, b = {e1: 5, e3: 3, e4: 2}.
// overlap = min(.6, .5) + min(.1, .3) = .6. At T = 0.5 a's hot edges are
// e1, e2 (≥ 3) and b's e1, e3 (≥ 2.5): coverage of b by a = 1/2.
func TestDCGMetrics(t *testing.T) {
	a := dcg(de(1, 0x10, 2, 6), de(1, 0x20, 3, 3), de(2, 0x10, 3, 1))
	b := dcg(de(1, 0x10, 2, 5), de(2, 0x10, 3, 3), de(3, 0x10, 4, 2))
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"overlap", DCGOverlap(a, b, MatchOptions{}), 0.6},
		{"overlap is symmetric", DCGOverlap(b, a, MatchOptions{}), 0.6},
		{"overlap with itself", DCGOverlap(a, a, MatchOptions{}), 1},
		{"overlap with an empty graph", DCGOverlap(a, DCG{}, MatchOptions{}), 0},
		{"hot-edge coverage of b by a at 0.5", DCGHotCoverage(a, b, 0.5, MatchOptions{}), 0.5},
		{"hot-edge coverage of a by b at 0.5", DCGHotCoverage(b, a, 0.5, MatchOptions{}), 0.5},
		{"hot-edge coverage at 0.1", DCGHotCoverage(a, b, 0.1, MatchOptions{}), 2.0 / 3},
		{"hot-edge coverage at 1: hottest edges only", DCGHotCoverage(a, b, 1, MatchOptions{}), 1},
		{"hot-edge coverage of an empty graph", DCGHotCoverage(a, DCG{}, 0.1, MatchOptions{}), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !near(tc.got, tc.want) {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

// Two call sites of the same caller→callee count as one edge when sites
// are ignored: a = {1@0x10→2: 5, 1@0x20→2: 5}, b = {1@0x30→2: 10}.
func TestDCGIgnoreSites(t *testing.T) {
	a := dcg(de(1, 0x10, 2, 5), de(1, 0x20, 2, 5))
	b := dcg(de(1, 0x30, 2, 10))
	if got := DCGOverlap(a, b, MatchOptions{}); got != 0 {
		t.Errorf("by site: %v, want 0", got)
	}
	if got := DCGOverlap(a, b, MatchOptions{IgnoreSites: true}); got != 1 {
		t.Errorf("ignoring sites: %v, want 1", got)
	}
	if got := DCGHotCoverage(a, b, 0.9, MatchOptions{IgnoreSites: true}); got != 1 {
		t.Errorf("coverage ignoring sites: %v, want 1", got)
	}
}

// adaptiveBurstingFigure1 is the call sequence of Figure 1 of the
// adaptive bursting paper as its text describes it (the figure is a
// drawing; the sequence is ours): A calls B and D; B calls C twice and
// each C calls E; D calls C twice and those C call nothing. Both edges
// into C weigh 2 in the call graph; only the CCT shows that C calls E
// only under A⇒B⇒C. Folded as exact call events.
func adaptiveBurstingFigure1() *Map {
	m := New()
	a := []Frame{{fA, 0}}
	ab := []Frame{{fB, 0}, {fA, atA}}
	abc := []Frame{{fC, 0}, {fB, atB}, {fA, atA}}
	ad := []Frame{{fD, 0}, {fA, 0xa1}}
	m.AddEdgeInContext(a, CallSite{fA, atA}, fB, 1)
	for range 2 {
		m.AddEdgeInContext(ab, CallSite{fB, atB}, fC, 1)
		m.AddEdgeInContext(abc, CallSite{fC, atC}, fE, 1)
	}
	m.AddEdgeInContext(a, CallSite{fA, 0xa1}, fD, 1)
	for range 2 {
		m.AddEdgeInContext(ad, CallSite{fD, 0xd0}, fC, 1)
	}
	return m
}

func TestAdaptiveBurstingFigure1(t *testing.T) {
	exact := adaptiveBurstingFigure1()
	mustCheck(t, "exact", exact)
	g := exact.DCG(Calls)
	want := []DCGEdge{
		de(fB, atB, fC, 2), de(fC, atC, fE, 2), de(fD, 0xd0, fC, 2),
		de(fA, atA, fB, 1), de(fA, 0xa1, fD, 1),
	}
	if !slices.Equal(g.Edges, want) {
		t.Errorf("DCG %+v, want %+v", g.Edges, want)
	}
	ctxs := exact.EdgeContexts(CallSite{fC, atC}, fE, Calls)
	if len(ctxs) != 1 || !slices.Equal(exact.Path(ctxs[0].ID), []Frame{{fA, atA}, {fB, atB}, {fC, atC}, {fE, 0}}) {
		t.Errorf("C→E contexts %+v, want only A⇒B⇒C", ctxs)
	}

	// A timer sampling the same run sees where time goes: three stacks in
	// E under A⇒B⇒C, one in C under A⇒D.
	sampled := New()
	for range 3 {
		sampled.AddStack([]Frame{{fE, 0}, {fC, atC}, {fB, atB}, {fA, atA}}, 1)
	}
	sampled.AddStack([]Frame{{fC, 0}, {fD, 0xd0}, {fA, 0xa1}}, 1)

	// Exact CCT by calls (total 8): A⇒B 1, A⇒B⇒C 2, A⇒B⇒C⇒E 2, A⇒D 1,
	// A⇒D⇒C 2. Sampled CCT by self (total 4): A⇒B⇒C⇒E 3, A⇒D⇒C 1.
	// overlap = min(3/4, 2/8) + min(1/4, 2/8) = 1/2.
	// Hot at T = 0.9: exact ≥ 1.8: A⇒B⇒C, A⇒B⇒C⇒E, A⇒D⇒C; sampled ≥ 2.7:
	// A⇒B⇒C⇒E. Coverage of exact by sampled: 1/3; at T = 0.5 every exact
	// context is hot (≥ 1): 1/5.
	// DCG, sampled by Total (total 11): A→B 3, B→C 3, C→E 3, A→D 1, D→C 1
	// against exact by Calls (1, 2, 2, 1, 2 of 8): overlap
	// 1/8 + 2/8 + 2/8 + 1/11 + 1/11 = 5/8 + 2/11.
	sc, ec := sampled.CCT(Self), exact.CCT(Calls)
	tests := []struct {
		name      string
		got, want float64
	}{
		{"CCT overlap", CCTOverlap(sc, ec, MatchOptions{}), 0.5},
		{"CCT overlap with itself", CCTOverlap(ec, ec, MatchOptions{}), 1},
		{"CCT hot-edge coverage at 0.9", CCTHotCoverage(sc, ec, 0.9, MatchOptions{}), 1.0 / 3},
		{"CCT hot-edge coverage at 0.5", CCTHotCoverage(sc, ec, 0.5, MatchOptions{}), 1.0 / 5},
		{"DCG overlap, innermost edges", DCGOverlap(sampled.DCG(Self), exact.DCG(Calls), MatchOptions{}), 0.5},
		{"DCG overlap, adjacent frames", DCGOverlap(sampled.DCG(Total), exact.DCG(Calls), MatchOptions{}), 5.0/8 + 2.0/11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !near(tc.got, tc.want) {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

// TestCCTOverlapSites: contexts reached through different call sites are
// different contexts unless sites are ignored.
func TestCCTOverlapSites(t *testing.T) {
	a, b := New(), New()
	a.AddStack([]Frame{{fB, 0}, {fA, 0x10}}, 1)
	b.AddStack([]Frame{{fB, 0}, {fA, 0x20}}, 1)
	if got := CCTOverlap(a.CCT(Self), b.CCT(Self), MatchOptions{}); got != 0 {
		t.Errorf("by site: %v, want 0", got)
	}
	if got := CCTOverlap(a.CCT(Self), b.CCT(Self), MatchOptions{IgnoreSites: true}); got != 1 {
		t.Errorf("ignoring sites: %v, want 1", got)
	}
}

func TestOverlapScaleFree(t *testing.T) {
	a := buildFigure2b(1)
	b := buildFigure2b(1000)
	if got := CCTOverlap(a.CCT(Self), b.CCT(Self), MatchOptions{}); !near(got, 1) {
		t.Errorf("CCT overlap %v, want 1", got)
	}
	if got := DCGOverlap(a.DCG(Total), b.DCG(Total), MatchOptions{}); !near(got, 1) {
		t.Errorf("DCG overlap %v, want 1", got)
	}
}

func TestCorrelation(t *testing.T) {
	tests := []struct {
		name              string
		x, y              []float64
		pearson, spearman float64
	}{
		{"proportional", []float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10}, 1, 1},
		{"reversed", []float64{1, 2, 3, 4, 5}, []float64{10, 8, 6, 4, 2}, -1, -1},
		// dx = -2..2, dy = -1,-2,1,0,2: 8/sqrt(10·10)
		{"two swaps", []float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}, 0.8, 0.8},
		// monotone but not linear: dx = ±1.5, ±.5; dy = -24, -17, 2, 39:
		// 104/sqrt(5·2390); the ranks agree fully
		{"cubes", []float64{1, 2, 3, 4}, []float64{1, 8, 27, 64}, 104 / math.Sqrt(5*2390), 1},
		// Pearson: dx = -1, 0, 0, 1; dy = ±1.5, ±.5: 3/sqrt(2·5). Ranks of
		// x are 1, 2.5, 2.5, 4: 4.5/sqrt(4.5·5), the same value
		{"tie averaged", []float64{1, 2, 2, 3}, []float64{1, 2, 3, 4}, 3 / math.Sqrt(10), 3 / math.Sqrt(10)},
		// ties in both. Pearson: dx = -1.25, -1.25, -.25, 2.75; dy = -1.75,
		// .25, .25, 1.25: 5.25/sqrt(10.75·4.75). Ranks: x 1.5, 1.5, 3, 4;
		// y 1, 2.5, 2.5, 4; dx = -1, -1, .5, 1.5; dy = -1.5, 0, 0, 1.5:
		// 3.75/sqrt(4.5·4.5)
		{"ties in both", []float64{5, 5, 6, 9}, []float64{1, 3, 3, 4}, 5.25 / math.Sqrt(10.75*4.75), 3.75 / 4.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Pearson(tc.x, tc.y); !near(got, tc.pearson) {
				t.Errorf("Pearson %v, want %v", got, tc.pearson)
			}
			if got := Spearman(tc.x, tc.y); !near(got, tc.spearman) {
				t.Errorf("Spearman %v, want %v", got, tc.spearman)
			}
		})
	}
	for _, tc := range []struct {
		name string
		x, y []float64
	}{
		{"constant", []float64{1, 1, 1}, []float64{1, 2, 3}},
		{"one value", []float64{1}, []float64{2}},
		{"lengths differ", []float64{1, 2}, []float64{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !math.IsNaN(Pearson(tc.x, tc.y)) || !math.IsNaN(Spearman(tc.x, tc.y)) {
				t.Error("want NaN")
			}
		})
	}
}
