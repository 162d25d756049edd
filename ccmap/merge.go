package ccmap

import "maps"

// Merge adds o into m: every node's weights, the pruned weights and the
// totals. o is not changed (o may be m). Merging is commutative and
// associative: any order and grouping of merges gives Equal maps.
// ContextIDs of m stay valid.
func (m *Map) Merge(o *Map) {
	if o == m {
		o = o.Clone()
	}
	fmap := make([]int32, len(o.funcs))
	for i := range o.funcs {
		f := m.fn(o.funcs[i].id)
		fmap[i] = f
		m.funcs[f].w.add(o.funcs[i].w)
	}
	smap := make([]int32, len(o.sites))
	for i := range o.sites {
		s := m.site(o.sites[i].site)
		smap[i] = s
		m.sites[s].w.add(o.sites[i].w)
	}
	for i := range o.edges {
		e := m.edge(smap[o.edges[i].site], fmap[o.edges[i].callee])
		m.edges[e].w.add(o.edges[i].w)
	}
	cmap := make([]int32, len(o.ctxs))
	for i := range o.ctxs {
		c := m.mirror(o, int32(i), cmap, fmap)
		cmap[i] = c
		m.ctxs[c].total += o.ctxs[i].total
		m.ctxl[c].self += o.ctxl[i].self
		m.ctxl[c].calls += o.ctxl[i].calls
		m.ctxl[c].stacks += o.ctxl[i].stacks
	}
	for k, w := range o.pruned {
		if k != none {
			k = cmap[k]
		}
		p := m.pruned[k]
		p.add(w)
		m.pruned[k] = p
	}
	m.tot.add(o.tot)
}

// mirror returns m's context node for o's context node i, creating it.
// cmap maps o's contexts before i (parents come before children), fmap
// o's functions.
func (m *Map) mirror(o *Map, i int32, cmap, fmap []int32) int32 {
	p := o.ctxs[i].parent
	if p == none {
		return m.root(fmap[o.ctxl[i].fn])
	}
	return m.child(cmap[p], o.siteAddr(i), o.funcs[o.ctxl[i].fn].id)
}

// Merge returns a new map holding the sum of maps.
func Merge(maps ...*Map) *Map {
	m := New()
	for _, o := range maps {
		m.Merge(o)
	}
	return m
}

// Clone returns a deep copy of m.
func (m *Map) Clone() *Map {
	return &Map{
		funcs:   append([]funcNode(nil), m.funcs...),
		sites:   append([]siteNode(nil), m.sites...),
		edges:   append([]edgeNode(nil), m.edges...),
		srefs:   append([]siteRefNode(nil), m.srefs...),
		ctxs:    append([]ctxNode(nil), m.ctxs...),
		ctxl:    append([]ctxLinks(nil), m.ctxl...),
		funcIdx: maps.Clone(m.funcIdx),
		siteIdx: maps.Clone(m.siteIdx),
		edgeIdx: maps.Clone(m.edgeIdx),
		kids:    m.kids.clone(),
		pruned:  maps.Clone(m.pruned),
		tot:     m.tot,
		seq:     m.seq,
	}
}

// Equal reports whether a and b hold the same nodes (general and
// context, including nodes of zero weight), with the same weights (and
// stacks per context), the same pruned weights and the same totals. The order nodes were created
// in, and so ContextIDs, may differ.
func Equal(a, b *Map) bool {
	if a.tot != b.tot || a.Size() != b.Size() {
		return false
	}
	for i := range a.funcs {
		j, ok := b.funcIdx[a.funcs[i].id]
		if !ok || b.funcs[j].w != a.funcs[i].w {
			return false
		}
	}
	for i := range a.sites {
		j, ok := b.siteIdx[a.sites[i].site]
		if !ok || b.sites[j].w != a.sites[i].w {
			return false
		}
	}
	for i := range a.edges {
		e := &a.edges[i]
		j, ok := b.edgeIdx[keyOf(a.sites[e.site].site, a.funcs[e.callee].id)]
		if !ok || b.edges[j].w != e.w {
			return false
		}
	}
	cmap := make([]int32, len(a.ctxs))
	for i := range a.ctxs {
		j := b.find(a, int32(i), cmap)
		if j == none || b.ctxWeights(j) != a.ctxWeights(int32(i)) || b.ctxl[j].stacks != a.ctxl[i].stacks {
			return false
		}
		cmap[i] = j
	}
	for k, w := range a.pruned {
		if k != none {
			k = cmap[k]
		}
		if bw, ok := b.pruned[k]; !ok || bw != w {
			return false
		}
	}
	return true
}

// find returns m's context node for a's context node i, or none. cmap
// maps a's contexts before i.
func (m *Map) find(a *Map, i int32, cmap []int32) int32 {
	id := a.funcs[a.ctxl[i].fn].id
	p := a.ctxs[i].parent
	if p == none {
		f, ok := m.funcIdx[id]
		if !ok {
			return none
		}
		return m.funcs[f].root
	}
	return m.findChild(cmap[p], a.siteAddr(i), id)
}
