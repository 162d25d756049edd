package ccmap

import (
	"cmp"
	"slices"
)

// A Function is a MethodProfile's totals.
type Function struct {
	Func FuncID
	Weights
}

// An Edge is a Callee node's totals: calls from one call site to one
// callee in any context. The caller is Site.Caller.
type Edge struct {
	Site   CallSite
	Callee FuncID
	Weights
}

// A Target is one callee of a call site, in any context (a Callee node)
// or in one context (a CalleeRef).
type Target struct {
	Callee FuncID
	Weights
}

// A SiteStat is a call site with its targets, hottest first: a CallSite
// node (all contexts) or a CallSiteRef (one context). Its weights are
// the node's own for a CallSite, the sums of its targets for a
// CallSiteRef.
type SiteStat struct {
	Site    CallSite
	Context ContextID // the calling context for a CallSiteRef; NoContext for a CallSite
	Weights
	Targets []Target
}

// A Context is one context node: the calling context reached by calling
// Func from Site in the parent context.
type Context struct {
	ID     ContextID
	Parent ContextID // NoContext for a root
	Func   FuncID
	Site   uint64 // call-site address in the parent's function; 0 for a root
	Depth  int    // 0 for a root
	Weights
}

// Function returns the MethodProfile of f.
func (m *Map) Function(f FuncID) (Function, bool) {
	i, ok := m.funcIdx[f]
	if !ok {
		return Function{}, false
	}
	return Function{Func: f, Weights: m.funcs[i].w}, true
}

// Functions returns every function, hottest by the measure first, ties
// by id.
func (m *Map) Functions(by Measure) []Function {
	out := make([]Function, len(m.funcs))
	for i := range m.funcs {
		out[i] = Function{Func: m.funcs[i].id, Weights: m.funcs[i].w}
	}
	slices.SortFunc(out, func(a, b Function) int {
		if c := cmp.Compare(b.Get(by), a.Get(by)); c != 0 {
			return c
		}
		return cmp.Compare(a.Func, b.Func)
	})
	return out
}

func (m *Map) edgeOf(e int32) Edge {
	n := &m.edges[e]
	return Edge{Site: m.sites[n.site].site, Callee: m.funcs[n.callee].id, Weights: n.w}
}

// compareEdges orders hottest first, then by caller, address, callee.
func compareEdges(by Measure) func(a, b Edge) int {
	return func(a, b Edge) int {
		if c := cmp.Compare(b.Get(by), a.Get(by)); c != 0 {
			return c
		}
		return compareEdgeKeys(a.Site, a.Callee, b.Site, b.Callee)
	}
}

func compareEdgeKeys(as CallSite, ac FuncID, bs CallSite, bc FuncID) int {
	if c := cmp.Compare(as.Caller, bs.Caller); c != 0 {
		return c
	}
	if c := cmp.Compare(as.Addr, bs.Addr); c != 0 {
		return c
	}
	return cmp.Compare(ac, bc)
}

// Edge returns the Callee node of site and callee.
func (m *Map) Edge(site CallSite, callee FuncID) (Edge, bool) {
	e := m.findEdge(site, callee)
	if e == none {
		return Edge{}, false
	}
	return m.edgeOf(e), true
}

func (m *Map) findEdge(site CallSite, callee FuncID) int32 {
	if e, ok := m.edgeIdx[keyOf(site, callee)]; ok {
		return e
	}
	return none
}

// Edges returns every edge, hottest by the measure first.
func (m *Map) Edges(by Measure) []Edge {
	out := make([]Edge, len(m.edges))
	for i := range m.edges {
		out[i] = m.edgeOf(int32(i))
	}
	slices.SortFunc(out, compareEdges(by))
	return out
}

// Callers returns the edges into f, hottest first, following f's list
// of incoming Callee nodes.
func (m *Map) Callers(f FuncID, by Measure) []Edge {
	i, ok := m.funcIdx[f]
	if !ok {
		return nil
	}
	var out []Edge
	for e := m.funcs[i].in; e != none; e = m.edges[e].nextIn {
		out = append(out, m.edgeOf(e))
	}
	slices.SortFunc(out, compareEdges(by))
	return out
}

// Callees returns the edges out of f, hottest first, following f's call
// sites and their Callee nodes.
func (m *Map) Callees(f FuncID, by Measure) []Edge {
	i, ok := m.funcIdx[f]
	if !ok {
		return nil
	}
	var out []Edge
	for s := m.funcs[i].sites; s != none; s = m.sites[s].next {
		for e := m.sites[s].callees; e != none; e = m.edges[e].next {
			out = append(out, m.edgeOf(e))
		}
	}
	slices.SortFunc(out, compareEdges(by))
	return out
}

// Sites returns f's call sites with their target distributions, hottest
// first (ties by address).
func (m *Map) Sites(f FuncID, by Measure) []SiteStat {
	i, ok := m.funcIdx[f]
	if !ok {
		return nil
	}
	var out []SiteStat
	for s := m.funcs[i].sites; s != none; s = m.sites[s].next {
		out = append(out, m.siteStat(s, by))
	}
	sortSites(out, by)
	return out
}

// Site returns one call site with its target distribution.
func (m *Map) Site(site CallSite, by Measure) (SiteStat, bool) {
	s, ok := m.siteIdx[site]
	if !ok {
		return SiteStat{}, false
	}
	return m.siteStat(s, by), true
}

func (m *Map) siteStat(s int32, by Measure) SiteStat {
	st := SiteStat{Site: m.sites[s].site, Context: NoContext, Weights: m.sites[s].w}
	for e := m.sites[s].callees; e != none; e = m.edges[e].next {
		st.Targets = append(st.Targets, Target{Callee: m.funcs[m.edges[e].callee].id, Weights: m.edges[e].w})
	}
	sortTargets(st.Targets, by)
	return st
}

func sortTargets(t []Target, by Measure) {
	slices.SortFunc(t, func(a, b Target) int {
		if c := cmp.Compare(b.Get(by), a.Get(by)); c != 0 {
			return c
		}
		return cmp.Compare(a.Callee, b.Callee)
	})
}

func sortSites(s []SiteStat, by Measure) {
	slices.SortFunc(s, func(a, b SiteStat) int {
		if c := cmp.Compare(b.Get(by), a.Get(by)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Site.Caller, b.Site.Caller); c != 0 {
			return c
		}
		return cmp.Compare(a.Site.Addr, b.Site.Addr)
	})
}

// Dominant returns the site's hottest target by the measure and its
// share of the site's targets' weight (0 if they weigh nothing).
// A share near 1 is a devirtualization hint.
func (s SiteStat) Dominant(by Measure) (Target, float64) {
	var sum uint64
	var best Target
	for i, t := range s.Targets {
		w := t.Get(by)
		sum += w
		if i == 0 || w > best.Get(by) || (w == best.Get(by) && t.Callee < best.Callee) {
			best = t
		}
	}
	if sum == 0 {
		return best, 0
	}
	return best, float64(best.Get(by)) / float64(sum)
}

// Monomorphic reports whether exactly one target has weight by the
// measure.
func (s SiteStat) Monomorphic(by Measure) bool {
	n := 0
	for _, t := range s.Targets {
		if t.Get(by) > 0 {
			n++
		}
	}
	return n == 1
}

// Context returns context node id.
func (m *Map) Context(id ContextID) (Context, bool) {
	if id < 0 || int(id) >= len(m.ctxs) {
		return Context{}, false
	}
	return m.contextOf(int32(id)), true
}

func (m *Map) contextOf(c int32) Context {
	x := Context{ID: ContextID(c), Parent: NoContext, Func: m.funcs[m.ctxl[c].fn].id, Weights: m.ctxWeights(c)}
	if p := m.ctxs[c].parent; p != none {
		x.Parent = ContextID(p)
		x.Site = m.siteAddr(c)
	}
	for p := m.ctxs[c].parent; p != none; p = m.ctxs[p].parent {
		x.Depth++
	}
	return x
}

// Path returns the frames of context id from the root down to it; each
// frame's Site is the call leading to the next frame, 0 in the last.
func (m *Map) Path(id ContextID) []Frame {
	if id < 0 || int(id) >= len(m.ctxs) {
		return nil
	}
	var out []Frame
	var site uint64
	for c := int32(id); c != none; c = m.ctxs[c].parent {
		out = append(out, Frame{Func: m.funcs[m.ctxl[c].fn].id, Site: site})
		if m.ctxs[c].parent != none {
			site = m.siteAddr(c)
		}
	}
	slices.Reverse(out)
	return out
}

// comparePaths orders contexts by their paths from the root: function,
// then call site, frame by frame; a prefix first. That is the order of
// the sequences root function, address of the call to node 1, node 1's
// function, address of the call to node 2, and so on.
func (m *Map) comparePaths(a, b int32) int {
	var bufA, bufB [64]int32
	pa, pb := m.ancestors(a, bufA[:0]), m.ancestors(b, bufB[:0])
	i, j := len(pa)-1, len(pb)-1
	for ; i >= 0 && j >= 0; i, j = i-1, j-1 {
		ca, cb := pa[i], pb[j]
		if m.ctxs[ca].parent != none {
			if c := cmp.Compare(m.siteAddr(ca), m.siteAddr(cb)); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(m.funcs[m.ctxl[ca].fn].id, m.funcs[m.ctxl[cb].fn].id); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

// ancestors appends context c and its ancestors, c first, to buf.
func (m *Map) ancestors(c int32, buf []int32) []int32 {
	for ; c != none; c = m.ctxs[c].parent {
		buf = append(buf, c)
	}
	return buf
}

// contexts turns context nodes into Contexts, hottest first, ties by
// path.
func (m *Map) contexts(ids []int32, by Measure) []Context {
	slices.SortFunc(ids, func(a, b int32) int {
		wa, wb := m.ctxWeights(a).Get(by), m.ctxWeights(b).Get(by)
		if c := cmp.Compare(wb, wa); c != 0 {
			return c
		}
		return m.comparePaths(a, b)
	})
	out := make([]Context, len(ids))
	for i, c := range ids {
		out[i] = m.contextOf(c)
	}
	return out
}

// EdgeContexts returns the contexts in which site calls callee, hottest
// first, following the Callee node's Context links. Their Calls add up
// to the edge's Calls that came with a context (AddEdgeInContext), their
// Self to the edge's Self (unless pruned).
func (m *Map) EdgeContexts(site CallSite, callee FuncID, by Measure) []Context {
	e := m.findEdge(site, callee)
	if e == none {
		return nil
	}
	var ids []int32
	for c := m.edges[e].refs; c != none; c = m.ctxl[c].nextRef {
		ids = append(ids, c)
	}
	return m.contexts(ids, by)
}

// FuncContexts returns the contexts of f: its root and the contexts of
// every edge into f, hottest first.
func (m *Map) FuncContexts(f FuncID, by Measure) []Context {
	i, ok := m.funcIdx[f]
	if !ok {
		return nil
	}
	var ids []int32
	if r := m.funcs[i].root; r != none {
		ids = append(ids, r)
	}
	for e := m.funcs[i].in; e != none; e = m.edges[e].nextIn {
		for c := m.edges[e].refs; c != none; c = m.ctxl[c].nextRef {
			ids = append(ids, c)
		}
	}
	return m.contexts(ids, by)
}

// Roots returns the roots of the context trees, hottest first.
func (m *Map) Roots(by Measure) []Context {
	var ids []int32
	for i := range m.funcs {
		if r := m.funcs[i].root; r != none {
			ids = append(ids, r)
		}
	}
	return m.contexts(ids, by)
}

// Children returns the contexts called from context id, hottest first.
func (m *Map) Children(id ContextID, by Measure) []Context {
	if id < 0 || int(id) >= len(m.ctxs) {
		return nil
	}
	var ids []int32
	for r := m.ctxl[id].sites; r != none; r = m.srefs[r].next {
		for c := m.srefs[r].callees; c != none; c = m.ctxl[c].next {
			ids = append(ids, c)
		}
	}
	return m.contexts(ids, by)
}

// ContextSites returns the CallSiteRefs of context id: each call site
// called from this context with the targets called from it in this
// context, hottest first.
func (m *Map) ContextSites(id ContextID, by Measure) []SiteStat {
	if id < 0 || int(id) >= len(m.ctxs) {
		return nil
	}
	var out []SiteStat
	for r := m.ctxl[id].sites; r != none; r = m.srefs[r].next {
		out = append(out, m.siteRefStat(r, by))
	}
	sortSites(out, by)
	return out
}

// SiteContexts returns the CallSiteRefs of a call site, following its
// Context links: the site's target distribution in each calling context,
// hottest first (ties by the context's path).
func (m *Map) SiteContexts(site CallSite, by Measure) []SiteStat {
	s, ok := m.siteIdx[site]
	if !ok {
		return nil
	}
	var out []SiteStat
	for r := m.sites[s].refs; r != none; r = m.srefs[r].nextRef {
		out = append(out, m.siteRefStat(r, by))
	}
	slices.SortFunc(out, func(a, b SiteStat) int {
		if c := cmp.Compare(b.Get(by), a.Get(by)); c != 0 {
			return c
		}
		return m.comparePaths(int32(a.Context), int32(b.Context))
	})
	return out
}

func (m *Map) siteRefStat(r int32, by Measure) SiteStat {
	sr := &m.srefs[r]
	st := SiteStat{Site: m.sites[sr.site].site, Context: ContextID(sr.parent)}
	for c := sr.callees; c != none; c = m.ctxl[c].next {
		w := m.ctxWeights(c)
		st.Weights.add(w)
		st.Targets = append(st.Targets, Target{Callee: m.funcs[m.ctxl[c].fn].id, Weights: w})
	}
	sortTargets(st.Targets, by)
	return st
}

// HotContexts returns the n hottest contexts by the measure (all if
// n <= 0), ties by path. By Self they are the hottest whole stacks (root
// to leaf paths), by Calls the hottest calling contexts of calls; by
// Total every prefix of a hot path is at least as hot as the path.
func (m *Map) HotContexts(by Measure, n int) []Context {
	ids := make([]int32, 0, len(m.ctxs))
	for i := range m.ctxs {
		if m.ctxWeights(int32(i)).Get(by) > 0 {
			ids = append(ids, int32(i))
		}
	}
	slices.SortFunc(ids, func(a, b int32) int {
		return cmp.Compare(m.ctxWeights(b).Get(by), m.ctxWeights(a).Get(by))
	})
	if n > 0 && n < len(ids) {
		// keep every context tied with the n-th, so that the tie-break
		// by path below decides, not the sort's order
		w := m.ctxWeights(ids[n-1]).Get(by)
		for n < len(ids) && m.ctxWeights(ids[n]).Get(by) == w {
			n++
		}
		ids = ids[:n]
	}
	out := m.contexts(ids, by)
	if n > 0 && n < len(out) {
		out = out[:n]
	}
	return out
}

// PathWeights sums the weights of every context that ends with the call
// sequence path (frames from the outermost down; each frame's Site the
// call leading to the next, the last frame's Site ignored), in whatever
// context it was called: the paper's "how often does B→C→D run" across
// trees. It follows the last edge's Context links and checks the
// parents. Self and Calls count each sample or call once; Total counts a
// sample once per occurrence of the sequence on its stack (more than once
// under recursion).
func (m *Map) PathWeights(path []Frame) Weights {
	var w Weights
	n := len(path)
	switch n {
	case 0:
		return w
	case 1:
		f, _ := m.Function(path[0].Func)
		return f.Weights
	}
	e := m.findEdge(CallSite{Caller: path[n-2].Func, Addr: path[n-2].Site}, path[n-1].Func)
	if e == none {
		return w
	}
	for c := m.edges[e].refs; c != none; c = m.ctxl[c].nextRef {
		if m.endsWith(c, path) {
			w.add(m.ctxWeights(c))
		}
	}
	return w
}

// endsWith reports whether the path of context c ends with path.
func (m *Map) endsWith(c int32, path []Frame) bool {
	for k := len(path) - 1; k >= 0; k-- {
		if c == none || m.funcs[m.ctxl[c].fn].id != path[k].Func {
			return false
		}
		if k > 0 {
			if m.ctxs[c].parent == none || m.siteAddr(c) != path[k-1].Site {
				return false
			}
			c = m.ctxs[c].parent
		}
	}
	return true
}
