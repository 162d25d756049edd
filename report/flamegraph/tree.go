package flamegraph

import (
	"cmp"
	"fmt"
	"slices"
)

// The weights a tree node carries, in this order; a differential tree has
// a second set for the base profile.
const (
	wTime = iota
	wSamples
	wCalls
	wOffCPU
	numW
)

// fnKey identifies a function on the page: frames with equal keys share one
// entry of the function table.
type fnKey struct {
	Name, Object string
	Kind         Kind
}

// childKey finds a node's child by function.
type childKey struct {
	parent int32
	fn     int32
}

// tree is the stacks merged by calling context. Node 0 is the root; every
// node's parent has a smaller index, so a reverse pass over the nodes sees
// children before their parents.
type tree struct {
	funcs  []fnKey
	fnIdx  map[fnKey]int32
	parent []int32
	fn     []int32
	self   [2][numW][]float64 // [profile][weight][node]; profile 1 is the base of a diff
	child  map[childKey]int32
}

func newTree() *tree {
	t := &tree{fnIdx: map[fnKey]int32{}, child: map[childKey]int32{}}
	t.addNode(-1, t.funcID(fnKey{Name: "all"}))
	return t
}

func (t *tree) funcID(k fnKey) int32 {
	if id, ok := t.fnIdx[k]; ok {
		return id
	}
	id := int32(len(t.funcs))
	t.funcs = append(t.funcs, k)
	t.fnIdx[k] = id
	return id
}

func (t *tree) addNode(parent, fn int32) int32 {
	id := int32(len(t.fn))
	t.parent = append(t.parent, parent)
	t.fn = append(t.fn, fn)
	for p := range t.self {
		for w := range t.self[p] {
			t.self[p][w] = append(t.self[p][w], 0)
		}
	}
	return id
}

// add merges stacks into the tree as profile p (0: shown, 1: base).
func (t *tree) add(p int, stacks []Stack) {
	for i := range stacks {
		s := &stacks[i]
		n := int32(0)
		for _, f := range s.Frames {
			fn := t.funcID(fnKey{f.Name, f.Object, f.Kind})
			c, ok := t.child[childKey{n, fn}]
			if !ok {
				c = t.addNode(n, fn)
				t.child[childKey{n, fn}] = c
			}
			n = c
		}
		t.self[p][wTime][n] += s.Time
		t.self[p][wSamples][n] += float64(s.Samples)
		t.self[p][wCalls][n] += s.Calls
		t.self[p][wOffCPU][n] += s.OffCPU
	}
}

// totals returns every node's total (self plus descendants) per profile
// and weight.
func (t *tree) totals() [2][numW][]float64 {
	var tot [2][numW][]float64
	for p := range tot {
		for w := range tot[p] {
			v := slices.Clone(t.self[p][w])
			for n := len(v) - 1; n > 0; n-- {
				v[t.parent[n]] += v[n]
			}
			tot[p][w] = v
		}
	}
	return tot
}

// flat is a tree laid out for the page: nodes in depth-first order with
// siblings sorted by name, narrow siblings merged.
type flat struct {
	funcs []fnKey
	depth []int32
	fn    []int32
	self  [2][numW][]float64
}

// flatten lays out t. A child is narrow when its total is below minShare
// of the root's total under every weight in shown (for profile 0); narrow
// siblings become one "[N narrow frames]" node holding their totals. With
// dropEmpty, children without weight in profile 0 are left out (the frames
// of a diff's base that the new profile lacks); their weight in profile 1
// is added to their parent's self weight there, so that every total of
// the base, the root's included, stays whole.
func (t *tree) flatten(shown []int, minShare float64, dropEmpty bool) *flat {
	tot := t.totals()
	kids := make([][]int32, len(t.fn))
	for n := 1; n < len(t.fn); n++ {
		kids[t.parent[n]] = append(kids[t.parent[n]], int32(n))
	}
	f := &flat{}
	fnMap := map[int32]int32{} // tree function id → flat function id
	fnIdx := map[fnKey]int32{}
	flatFn := func(k fnKey) int32 {
		if id, ok := fnIdx[k]; ok {
			return id
		}
		id := int32(len(f.funcs))
		f.funcs = append(f.funcs, k)
		fnIdx[k] = id
		return id
	}
	narrow := func(n int32) bool {
		for _, w := range shown {
			if tot[0][w][n] >= minShare*tot[0][w][0] && tot[0][w][n] > 0 {
				return false
			}
		}
		return true
	}
	empty := func(n int32) bool {
		for w := range numW {
			if tot[0][w][n] != 0 {
				return false
			}
		}
		return true
	}
	push := func(fn, depth int32, self func(p, w int) float64) {
		f.depth = append(f.depth, depth)
		f.fn = append(f.fn, fn)
		for p := range f.self {
			for w := range f.self[p] {
				f.self[p][w] = append(f.self[p][w], self(p, w))
			}
		}
	}
	var walk func(n, depth int32)
	walk = func(n, depth int32) {
		id, ok := fnMap[t.fn[n]]
		if !ok {
			id = flatFn(t.funcs[t.fn[n]])
			fnMap[t.fn[n]] = id
		}
		at := len(f.depth)
		push(id, depth, func(p, w int) float64 { return t.self[p][w][n] })
		c := kids[n]
		slices.SortFunc(c, func(a, b int32) int {
			fa, fb := t.funcs[t.fn[a]], t.funcs[t.fn[b]]
			return cmp.Or(cmp.Compare(fa.Name, fb.Name), cmp.Compare(fa.Object, fb.Object), cmp.Compare(fa.Kind, fb.Kind))
		})
		var merged []int32
		for _, k := range c {
			switch {
			case dropEmpty && empty(k):
				// Not drawn, but the base's weight stays in its parent so
				// that the base's totals, and its shares, are whole.
				for w := range numW {
					f.self[1][w][at] += tot[1][w][k]
				}
			case minShare >= 0 && narrow(k):
				merged = append(merged, k)
			default:
				walk(k, depth+1)
			}
		}
		if len(merged) > 0 {
			name := fmt.Sprintf("[%d narrow frames]", len(merged))
			if len(merged) == 1 {
				name = "[1 narrow frame]"
			}
			id := flatFn(fnKey{Name: name, Kind: kindNarrow})
			push(id, depth+1, func(p, w int) float64 {
				s := 0.0
				for _, k := range merged {
					s += tot[p][w][k]
				}
				return s
			})
		}
	}
	walk(0, 0)
	return f
}

// kindNarrow marks the merged narrow frames on the page; it is not a Kind
// of the input.
const kindNarrow = numKinds
