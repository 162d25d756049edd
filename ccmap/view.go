package ccmap

import (
	"cmp"
	"slices"
)

// A DCG is the dynamic call graph read from a map: every edge with its
// weight by one measure, as plain data.
type DCG struct {
	Measure Measure
	Total   uint64    // sum of the edges' weights
	Edges   []DCGEdge // weight > 0 only; hottest first, ties by caller, address, callee
}

// A DCGEdge is one call edge of a DCG.
type DCGEdge struct {
	Site   CallSite
	Callee FuncID
	Weight uint64
}

// DCG returns the dynamic call graph by the measure: Calls for call-edge
// events, Total for edges from adjacent frames of sampled stacks (each
// edge once per stack), Self for the innermost edge of each stack (what
// sampled stack-walking counts as a call).
func (m *Map) DCG(by Measure) DCG {
	g := DCG{Measure: by}
	for i := range m.edges {
		e := &m.edges[i]
		w := e.w.Get(by)
		if w == 0 {
			continue
		}
		g.Total += w
		g.Edges = append(g.Edges, DCGEdge{Site: m.sites[e.site].site, Callee: m.funcs[e.callee].id, Weight: w})
	}
	slices.SortFunc(g.Edges, func(a, b DCGEdge) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return compareEdgeKeys(a.Site, a.Callee, b.Site, b.Callee)
	})
	return g
}

// A CCT is the calling-context tree read from a map, as plain data: its
// nodes in depth-first preorder, every node's children (and the roots)
// ordered by inclusive weight, heaviest first, ties by call site, then
// function, a pruned node last.
type CCT struct {
	Measure Measure
	Total   uint64 // sum of the nodes' weights
	Nodes   []CCTNode
}

// A CCTNode is one calling context of a CCT.
type CCTNode struct {
	Parent int // index in Nodes; -1 for a root
	Depth  int
	Func   FuncID
	Site   uint64 // call-site address in the parent's function; 0 for a root
	// Pruned marks the node standing for the children Prune removed
	// (shown as "[pruned]"); its Func and Site are 0.
	Pruned  bool
	Context ContextID // NoContext for a pruned node
	// Weight is the node's weight by the measure, Inclusive the sum of
	// Weight over its subtree.
	Weight, Inclusive uint64
	Weights
	// Stacks is the number of stacks folded whose whole stack is this
	// context (its Self weight's samples; AddStacks' counts); for a
	// pruned node, those of the contexts removed.
	Stacks uint64
}

// CCT returns the calling-context tree by the measure: Self for samples
// (stacks ending in each context), Calls for calls, Total for inclusive
// samples. Subtrees whose weights are all zero are left out.
func (m *Map) CCT(by Measure) CCT {
	t := CCT{Measure: by, Nodes: make([]CCTNode, 0, len(m.ctxs)+len(m.pruned))}
	incl := make([]uint64, len(m.ctxs))
	for i := len(m.ctxs) - 1; i >= 0; i-- {
		incl[i] += m.ctxWeights(int32(i)).Get(by) + m.pruned[int32(i)].Get(by)
		if p := m.ctxs[i].parent; p != none {
			incl[p] += incl[i]
		}
	}
	var roots []int32
	for i := range m.funcs {
		if r := m.funcs[i].root; r != none {
			roots = append(roots, r)
		}
	}
	m.emit(&t, roots, -1, 0, incl, m.pruned[none])
	for _, n := range t.Nodes {
		t.Total += n.Weight
	}
	return t
}

// emit appends the subtrees of contexts cs (siblings under node parent,
// at depth d) and the pruned node pw, if any weight, in order.
func (m *Map) emit(t *CCT, cs []int32, parent, d int, incl []uint64, pw prunedWeights) {
	slices.SortFunc(cs, func(a, b int32) int {
		if c := cmp.Compare(incl[b], incl[a]); c != 0 {
			return c
		}
		var sa, sb uint64
		if m.ctxs[a].parent != none {
			sa, sb = m.siteAddr(a), m.siteAddr(b)
		}
		if c := cmp.Compare(sa, sb); c != 0 {
			return c
		}
		return cmp.Compare(m.funcs[m.ctxl[a].fn].id, m.funcs[m.ctxl[b].fn].id)
	})
	for _, c := range cs {
		if incl[c] == 0 {
			continue
		}
		i := len(t.Nodes)
		n := CCTNode{Parent: parent, Depth: d, Func: m.funcs[m.ctxl[c].fn].id, Context: ContextID(c), Inclusive: incl[c], Weights: m.ctxWeights(c), Stacks: m.ctxl[c].stacks}
		if m.ctxs[c].parent != none {
			n.Site = m.siteAddr(c)
		}
		n.Weight = n.Get(t.Measure)
		t.Nodes = append(t.Nodes, n)
		var kids []int32
		for r := m.ctxl[c].sites; r != none; r = m.srefs[r].next {
			for k := m.srefs[r].callees; k != none; k = m.ctxl[k].next {
				kids = append(kids, k)
			}
		}
		m.emit(t, kids, i, d+1, incl, m.pruned[c])
	}
	if w := pw.Get(t.Measure); w > 0 {
		t.Nodes = append(t.Nodes, CCTNode{Parent: parent, Depth: d, Pruned: true, Context: NoContext, Weight: w, Inclusive: w, Weights: pw.Weights, Stacks: pw.stacks})
	}
}
