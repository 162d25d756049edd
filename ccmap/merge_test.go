package ccmap

import (
	"math/rand/v2"
	"testing"
)

// shard splits ops at random into k maps.
func shard(r *rand.Rand, ops []op, k int) []*Map {
	ms := make([]*Map, k)
	for i := range ms {
		ms[i] = New()
	}
	for _, o := range ops {
		o.apply(ms[r.IntN(k)])
	}
	return ms
}

func mustCheck(t *testing.T, what string, m *Map) {
	t.Helper()
	if err := m.Check(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestMergeProperties: folding ops into shards and merging them gives the
// map folding all of them into one gives, whatever the order and grouping
// of the merges.
func TestMergeProperties(t *testing.T) {
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 11))
		ops := randomOps(r, 200)
		whole := build(ops)
		s := shard(r, ops, 3)
		a, b, c := s[0], s[1], s[2]
		cases := []struct {
			name string
			m    *Map
		}{
			{"a+b+c", Merge(a, b, c)},
			{"c+b+a", Merge(c, b, a)},
			{"(a+b)+c", Merge(Merge(a, b), c)},
			{"a+(b+c)", Merge(a, Merge(b, c))},
			{"(c+a)+b", Merge(Merge(c, a), b)},
			{"b into a clone, then c", func() *Map { m := a.Clone(); m.Merge(b); m.Merge(c); return m }()},
		}
		for _, tc := range cases {
			mustCheck(t, tc.name, tc.m)
			if !Equal(tc.m, whole) {
				t.Fatalf("seed %d: %s differs from folding everything into one map", seed, tc.name)
			}
		}
		if !Equal(Merge(a, b), Merge(b, a)) {
			t.Fatalf("seed %d: a+b != b+a", seed)
		}
		for i, m := range s {
			if !Equal(m, m.Clone()) {
				t.Fatalf("seed %d: shard %d differs from its clone", seed, i)
			}
		}
	}
}

// TestMergeIntoItself doubles every weight.
func TestMergeIntoItself(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ops := randomOps(r, 100)
	m := build(ops)
	want := Merge(m, m)
	m.Merge(m)
	mustCheck(t, "m+m", m)
	if !Equal(m, want) {
		t.Error("m.Merge(m) differs from Merge(m, m)")
	}
	if m.Totals().Samples != 2*build(ops).Totals().Samples {
		t.Error("samples not doubled")
	}
}

// TestMergeKeepsIDs: ContextIDs of the receiving map stay valid.
func TestMergeKeepsIDs(t *testing.T) {
	m := buildFigure2b(1)
	hot := m.HotContexts(Self, 1)[0]
	before := m.Path(hot.ID)
	m.Merge(buildFigure2b(1))
	if p := m.Path(hot.ID); len(p) != len(before) || p[len(p)-1] != before[len(before)-1] {
		t.Errorf("path of context %d changed: %v → %v", hot.ID, before, p)
	}
	if c, _ := m.Context(hot.ID); c.Self != 2*hot.Self {
		t.Errorf("merged self %d, want %d", c.Self, 2*hot.Self)
	}
}

// TestEqualDetects: Equal notices a change of any one kind.
func TestEqualDetects(t *testing.T) {
	base := buildFigure2b(1)
	tests := []struct {
		name string
		op   func(m *Map)
	}{
		{"one more sample", func(m *Map) { m.AddStack(stack(fA, fB, fC, fD), 1) }},
		{"an edge event", func(m *Map) { m.AddEdge(CallSite{fA, atA}, fB, 1) }},
		{"a zero-weight stack adds nodes", func(m *Map) { m.AddStack(stack(fE, fB, fC, fD), 0) }},
		{"a call in context", func(m *Map) { m.AddEdgeInContext(stack(fA, fB, fC), CallSite{fC, atC}, fD, 1) }},
		{"pruning", func(m *Map) { m.Prune(0.1) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := base.Clone()
			tc.op(m)
			if Equal(m, base) || Equal(base, m) {
				t.Error("Equal missed the change")
			}
		})
	}
}
