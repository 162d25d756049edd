package flamegraph

import (
	"cmp"
	"math"
	"slices"
)

// Change is how one function's shares changed from a base profile to a new
// one. Shares are of each profile's total weight; Total counts a stack
// once even when the function recurs on it.
type Change struct {
	Name, Object string
	Kind         Kind
	BaseSelf     float64 // share of the base's weight in stacks ending in the function
	NewSelf      float64
	BaseTotal    float64 // share of the base's weight in stacks through the function
	NewTotal     float64
}

// DeltaSelf is NewSelf − BaseSelf.
func (c Change) DeltaSelf() float64 { return c.NewSelf - c.BaseSelf }

// DeltaTotal is NewTotal − BaseTotal.
func (c Change) DeltaTotal() float64 { return c.NewTotal - c.BaseTotal }

// DiffTable returns every function of either profile with its shares under
// weight, the largest changes first: by the larger of |DeltaSelf| and
// |DeltaTotal|, then by name, object and kind. Functions whose shares did
// not change at all come last, in the same order of names.
func DiffTable(base, new []Stack, weight Weight) []Change {
	type acc struct{ self, total [2]float64 }
	fns := map[fnKey]*acc{}
	var sum [2]float64
	seen := map[fnKey]bool{}
	for p, stacks := range [2][]Stack{base, new} {
		for i := range stacks {
			s := &stacks[i]
			v := weight.of(s)
			sum[p] += v
			clear(seen)
			for j, f := range s.Frames {
				k := fnKey{f.Name, f.Object, f.Kind}
				a := fns[k]
				if a == nil {
					a = &acc{}
					fns[k] = a
				}
				if !seen[k] {
					seen[k] = true
					a.total[p] += v
				}
				if j == len(s.Frames)-1 {
					a.self[p] += v
				}
			}
		}
	}
	share := func(v float64, p int) float64 {
		if sum[p] == 0 {
			return 0
		}
		return v / sum[p]
	}
	out := make([]Change, 0, len(fns))
	for k, a := range fns {
		out = append(out, Change{
			Name: k.Name, Object: k.Object, Kind: k.Kind,
			BaseSelf: share(a.self[0], 0), NewSelf: share(a.self[1], 1),
			BaseTotal: share(a.total[0], 0), NewTotal: share(a.total[1], 1),
		})
	}
	mag := func(c Change) float64 { return max(math.Abs(c.DeltaSelf()), math.Abs(c.DeltaTotal())) }
	slices.SortFunc(out, func(a, b Change) int {
		return cmp.Or(cmp.Compare(mag(b), mag(a)), cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.Object, b.Object), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}
