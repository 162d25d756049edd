package ccmap

import (
	"cmp"
	"math"
	"slices"
)

// MatchOptions say when two edges (or contexts) of two profiles are the
// same.
type MatchOptions struct {
	// IgnoreSites matches edges by caller and callee only (and contexts
	// by their functions only), adding up the weights of different call
	// sites. Use it when the profiles locate call sites differently.
	IgnoreSites bool
}

// dcgKey is an edge of a DCG as the metrics match it.
type dcgKey struct {
	site   CallSite
	callee FuncID
}

func dcgWeights(g DCG, opt MatchOptions) map[dcgKey]uint64 {
	w := make(map[dcgKey]uint64, len(g.Edges))
	for _, e := range g.Edges {
		k := dcgKey{site: e.Site, callee: e.Callee}
		if opt.IgnoreSites {
			k.site.Addr = 0
		}
		w[k] += e.Weight
	}
	return w
}

// DCGOverlap is the degree of overlap of two call graphs: the sum over
// edges present in both of the smaller of the edge's two shares of its
// graph's total weight. 1 means the same distribution, 0 nothing in
// common (or an empty graph).
func DCGOverlap(a, b DCG, opt MatchOptions) float64 {
	return overlap(dcgWeights(a, opt), dcgWeights(b, opt))
}

// DCGHotCoverage is the hot-edge coverage of b by a at threshold t: of
// b's hot edges (weight ≥ t × b's hottest edge), the fraction that are
// also hot in a (weight ≥ t × a's hottest). 0 if b has no edges.
func DCGHotCoverage(a, b DCG, t float64, opt MatchOptions) float64 {
	return hotCoverage(dcgWeights(a, opt), dcgWeights(b, opt), t)
}

// cctKey is a context as the metrics match it: its function and call
// site under an interned parent context (Definition 1 of the adaptive
// bursting paper, with call-site labels unless ignored).
type cctKey struct {
	parent int32
	fn     FuncID
	site   uint64
	pruned bool
}

// cctWeights interns the contexts of a and b in one trie and returns each
// tree's weight per interned context.
func cctWeights(a, b CCT, opt MatchOptions) (wa, wb map[int32]uint64) {
	ids := make(map[cctKey]int32)
	weigh := func(t CCT) map[int32]uint64 {
		w := make(map[int32]uint64)
		nodes := make([]int32, len(t.Nodes))
		for i, n := range t.Nodes {
			k := cctKey{parent: -1, fn: n.Func, site: n.Site, pruned: n.Pruned}
			if n.Parent >= 0 {
				k.parent = nodes[n.Parent]
			}
			if opt.IgnoreSites {
				k.site = 0
			}
			id, ok := ids[k]
			if !ok {
				id = int32(len(ids))
				ids[k] = id
			}
			nodes[i] = id
			if n.Weight > 0 {
				w[id] += n.Weight
			}
		}
		return w
	}
	return weigh(a), weigh(b)
}

// CCTOverlap is the degree of overlap of two calling-context trees:
// as DCGOverlap with every context (root to node path) as an edge.
func CCTOverlap(a, b CCT, opt MatchOptions) float64 {
	return overlap(cctWeights(a, b, opt))
}

// CCTHotCoverage is the hot-edge coverage of b by a at threshold t, with
// every context as an edge.
func CCTHotCoverage(a, b CCT, t float64, opt MatchOptions) float64 {
	wa, wb := cctWeights(a, b, opt)
	return hotCoverage(wa, wb, t)
}

func overlap[K comparable](a, b map[K]uint64) float64 {
	ta, tb := sum(a), sum(b)
	if ta == 0 || tb == 0 {
		return 0
	}
	var terms []float64
	for k, x := range a {
		if y, ok := b[k]; ok {
			terms = append(terms, min(float64(x)/ta, float64(y)/tb))
		}
	}
	slices.Sort(terms) // a fixed order: the same inputs give the same bits
	var o float64
	for _, t := range terms {
		o += t
	}
	return min(o, 1)
}

func sum[K comparable](w map[K]uint64) float64 {
	var s uint64
	for _, x := range w {
		s += x
	}
	return float64(s)
}

func hottest[K comparable](w map[K]uint64) uint64 {
	var h uint64
	for _, x := range w {
		h = max(h, x)
	}
	return h
}

func hotCoverage[K comparable](a, b map[K]uint64, t float64) float64 {
	ha, hb := float64(hottest(a))*t, float64(hottest(b))*t
	var hot, both int
	for k, y := range b {
		if y == 0 || float64(y) < hb {
			continue
		}
		hot++
		if x := a[k]; x > 0 && float64(x) >= ha {
			both++
		}
	}
	if hot == 0 {
		return 0
	}
	return float64(both) / float64(hot)
}

// Pearson returns the Pearson correlation coefficient of x and y, or NaN
// if they differ in length, have fewer than two values, or one is
// constant.
func Pearson(x, y []float64) float64 {
	n := len(x)
	if n != len(y) || n < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range n {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for i := range n {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return max(-1, min(1, sxy/math.Sqrt(sxx*syy)))
}

// Spearman returns Spearman's rank correlation of x and y: Pearson's of
// their ranks, tied values sharing the average of their ranks. NaN as
// for Pearson.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) {
		return math.NaN()
	}
	return Pearson(ranks(x), ranks(y))
}

// ranks returns the 1-based ranks of v, ties averaged.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && v[idx[j]] == v[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}
