package ccmap

// PruneStats says what Prune removed.
type PruneStats struct {
	Contexts     int     // context nodes (roots and CalleeRefs) removed
	CallSiteRefs int     // CallSiteRefs removed
	Moved        Weights // weight moved into pruned entries
}

// Prune removes cold contexts: every context node whose Total is below
// frac of the map's sampled weight (Totals.Samples) and whose subtree's
// Calls are below frac of the context calls (Totals.ContextCalls), with
// its subtree. Nodes of zero weight go whatever frac is.
//
// Totals are conserved: the weight of the contexts removed under one
// surviving parent is added to that parent's pruned entry, which the CCT
// view shows as a "[pruned]" child (Self and Total: the removed sampled
// weight; Calls: the removed calls; Stacks: the stacks that ended in
// them), and removed roots to the top-level entry. General nodes (MethodProfile, CallSite, Callee) are never
// pruned, so function, call-site and edge totals stay exact; their
// Context links then lead only to surviving contexts.
//
// Prune renumbers contexts: ContextIDs from before are void.
func (m *Map) Prune(frac float64) PruneStats {
	if !(frac > 0) {
		frac = 0
	}
	thrS := frac * float64(m.tot.Samples)
	thrC := frac * float64(m.tot.ContextCalls)
	n := len(m.ctxs)
	sub := make([]uint64, n)    // calls in each subtree, pruned ones included
	stacks := make([]uint64, n) // stacks ending in each subtree, pruned ones included
	for i := n - 1; i >= 0; i-- {
		pw := m.pruned[int32(i)]
		sub[i] += m.ctxl[i].calls + pw.Calls
		stacks[i] += m.ctxl[i].stacks + pw.stacks
		if p := m.ctxs[i].parent; p != none {
			sub[p] += sub[i]
			stacks[p] += stacks[i]
		}
	}
	keep := make([]bool, n)
	for i := range n {
		t := m.ctxs[i].total
		keep[i] = (t > 0 && float64(t) >= thrS) || (sub[i] > 0 && float64(sub[i]) >= thrC)
		if p := m.ctxs[i].parent; p != none && !keep[p] {
			keep[i] = false
		}
	}

	old := *m
	m.ctxs = make([]ctxNode, 0, n)
	m.ctxl = make([]ctxLinks, 0, n)
	m.srefs = make([]siteRefNode, 0, len(old.srefs))
	m.kids = childIndex{}
	m.pruned = make(map[int32]prunedWeights)
	m.cache = nil
	for i := range m.funcs {
		m.funcs[i].root = none
	}
	for i := range m.sites {
		m.sites[i].refs = none
	}
	for i := range m.edges {
		m.edges[i].refs = none
	}

	var st PruneStats
	if w, ok := old.pruned[none]; ok {
		m.pruned[none] = w
	}
	cmap := make([]int32, n)
	fmap := make([]int32, len(m.funcs))
	for i := range fmap {
		fmap[i] = int32(i)
	}
	for i := range n {
		p := old.ctxs[i].parent
		if !keep[i] {
			cmap[i] = none
			st.Contexts++
			if p == none || keep[p] {
				k := none
				if p != none {
					k = cmap[p]
				}
				w := Weights{Self: old.ctxs[i].total, Total: old.ctxs[i].total, Calls: sub[i]}
				st.Moved.add(w)
				pw := m.pruned[k]
				pw.add(prunedWeights{w, stacks[i]})
				m.pruned[k] = pw
			}
			continue
		}
		c := m.mirror(&old, int32(i), cmap, fmap)
		cmap[i] = c
		m.ctxs[c].total = old.ctxs[i].total
		m.ctxl[c].self = old.ctxl[i].self
		m.ctxl[c].calls = old.ctxl[i].calls
		m.ctxl[c].stacks = old.ctxl[i].stacks
		if w, ok := old.pruned[int32(i)]; ok {
			pw := m.pruned[c]
			pw.add(w)
			m.pruned[c] = pw
		}
	}
	st.CallSiteRefs = len(old.srefs) - len(m.srefs)
	return st
}
