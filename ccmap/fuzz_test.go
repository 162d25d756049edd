package ccmap

import (
	"testing"
)

// decodeOps turns fuzz input into ops over a tiny alphabet (8 functions,
// 3 call sites each), so that paths collide and recurse, each op tagged
// with one of three shards. It never fails: short input just ends.
func decodeOps(data []byte) (ops []op, shards []int) {
	next := func() (byte, bool) {
		if len(data) == 0 {
			return 0, false
		}
		b := data[0]
		data = data[1:]
		return b, true
	}
	for {
		h, ok := next()
		if !ok {
			return ops, shards
		}
		d, _ := next()
		frames := make([]Frame, int(d%12))
		for i := range frames {
			b, _ := next()
			frames[i] = Frame{Func: FuncID(b % 8), Site: uint64(b>>3%3) * 0x10}
		}
		wb, _ := next()
		o := op{frames: frames, weight: uint64(wb)}
		switch h % 3 {
		case 0:
			o.kind = opStack
		case 1, 2:
			o.kind = opEdge
			if h%3 == 2 {
				o.kind = opEdgeInContext
			}
			b, _ := next()
			o.site = CallSite{Caller: FuncID(b % 8), Addr: uint64(b>>3%3) * 0x10}
			c, _ := next()
			o.callee = FuncID(c % 8)
		}
		ops = append(ops, o)
		shards = append(shards, int(h/3%3))
	}
}

// FuzzMerge checks, for any sequence of folds split over three shards:
// every map passes Check; merging the shards in any order and grouping
// equals folding everything into one map; and pruning at any fraction
// keeps the invariants and every total, before and after further merges.
func FuzzMerge(f *testing.F) {
	f.Add([]byte{0, 4, 1, 2, 3, 4, 9})
	f.Add([]byte{0, 3, 9, 10, 11, 1, 3, 4, 1, 2, 3, 5, 7, 7, 200})
	f.Add([]byte{2, 2, 1, 9, 40, 1, 2, 5, 3, 3, 8, 16, 24, 100, 1, 0, 30, 2})
	f.Fuzz(checkFolds)
}

func checkFolds(t *testing.T, data []byte) {
	ops, which := decodeOps(data)
	whole := New()
	s := []*Map{New(), New(), New()}
	for i, o := range ops {
		o.apply(whole)
		o.apply(s[which[i]])
	}
	mustCheck(t, "whole", whole)
	for _, m := range s {
		mustCheck(t, "shard", m)
	}
	ab := Merge(s[0], s[1])
	for _, tc := range []struct {
		name string
		m    *Map
	}{
		{"(a+b)+c", Merge(ab, s[2])},
		{"a+(b+c)", Merge(s[0], Merge(s[1], s[2]))},
		{"c+b+a", Merge(s[2], s[1], s[0])},
	} {
		mustCheck(t, tc.name, tc.m)
		if !Equal(tc.m, whole) {
			t.Fatalf("%s differs from the whole", tc.name)
		}
	}
	if !Equal(ab, Merge(s[1], s[0])) {
		t.Fatal("a+b != b+a")
	}

	frac := 0.0
	if len(data) > 0 {
		frac = float64(data[len(data)-1]) / 512
	}
	p := whole.Clone()
	p.Prune(frac)
	mustCheck(t, "pruned", p)
	if p.Totals() != whole.Totals() {
		t.Fatalf("pruning changed totals: %+v → %+v", whole.Totals(), p.Totals())
	}
	p.Merge(s[0])
	mustCheck(t, "pruned+a", p)
	q := s[1].Clone()
	q.Merge(p)
	mustCheck(t, "b+pruned", q)
	p.Prune(frac)
	mustCheck(t, "pruned twice", p)
	for _, o := range ops {
		o.apply(p)
	}
	mustCheck(t, "pruned then folded", p)
}
