package ccmap

// AddStack folds one sampled stack, innermost frame first, weighted by
// weight (the sample's period). An empty stack is ignored.
//
// It follows the CC-Map insertion algorithm: every frame updates its
// MethodProfile, every pair of adjacent frames its CallSite and Callee,
// and the whole stack one path of the context tree, rooted at the
// outermost frame. Total counts a function, call site or edge once per
// stack even when recursion repeats it; Self goes to the innermost
// function, the innermost edge and its call site, and the leaf context.
func (m *Map) AddStack(frames []Frame, weight uint64) {
	m.AddStacks(frames, weight, 1)
}

// AddStacks folds count samples of one stack whose weights sum to weight:
// the map is the one AddStack of each sample gives (folding is linear in
// the weight, and recursion is counted once per stack either way), but
// for far less work. A caller that sums repeated stacks before folding
// them passes how many it summed, so that Totals.Stacks, and the leaf
// context's stacks (CCTNode.Stacks), stay the number of stacks folded. A
// count of 0 or an empty stack is ignored.
func (m *Map) AddStacks(frames []Frame, weight, count uint64) {
	n := len(frames)
	if n == 0 || count == 0 {
		return
	}
	m.seq++
	m.tot.Samples += weight
	m.tot.Stacks += count

	h := hashStack(frames)
	c := m.cached(h, frames, weight)
	if c == none {
		c = m.addDown(frames, weight)
		m.remember(h, c)
	}

	leaf := &m.ctxl[c]
	leaf.self += weight
	leaf.stacks += count
	m.funcs[leaf.fn].w.Self += weight
	if e := m.ctxs[c].edge; e != none {
		e := &m.edges[e]
		e.w.Self += weight
		m.sites[e.site].w.Self += weight
	}
}

// addDown adds weight along the path of frames from the root, creating
// missing nodes, and returns the leaf context. This is the paper's
// insertion loop with the context tree rooted at the outermost frame.
func (m *Map) addDown(frames []Frame, weight uint64) int32 {
	n := len(frames)
	seq := m.seq
	c := m.root(m.fn(frames[n-1].Func))
	m.touchRoot(c, weight, seq)
	for k := n - 2; k >= 0; k-- {
		c = m.child(c, frames[k+1].Site, frames[k].Func)
		m.touch(c, weight, seq)
	}
	return c
}

// touchRoot adds weight to Total of root context c and of its function.
// A root is the outermost frame, so it is always the function's first
// touch in this stack.
func (m *Map) touchRoot(c int32, weight, seq uint64) {
	m.ctxs[c].total += weight
	fn := &m.funcs[m.ctxl[c].fn]
	if fn.stamp != seq {
		fn.stamp = seq
		fn.w.Total += weight
	}
}

// touch adds weight to Total of CalleeRef c and, once per stack seq, to
// Total of its Callee, its callee's MethodProfile and its CallSite.
func (m *Map) touch(c int32, weight, seq uint64) {
	cn := &m.ctxs[c]
	cn.total += weight
	e := &m.edges[cn.edge]
	if e.stamp != seq {
		e.stamp = seq
		e.w.Total += weight
	}
	fn := &m.funcs[e.callee]
	if fn.stamp != seq {
		fn.stamp = seq
		fn.w.Total += weight
	}
	s := &m.sites[e.site]
	if s.stamp != seq {
		s.stamp = seq
		s.w.Total += weight
	}
}

// AddEdge folds one call-edge event without a stack (an LBR call entry,
// a probe hit): weight calls from site to callee. It adds to Calls of the
// CallSite, the Callee and the callee's MethodProfile; the context tree
// is not touched.
func (m *Map) AddEdge(site CallSite, callee FuncID, weight uint64) {
	s := m.site(site)
	f := m.fn(callee)
	e := m.edge(s, f)
	m.sites[s].w.Calls += weight
	m.edges[e].w.Calls += weight
	m.funcs[f].w.Calls += weight
	m.tot.Calls += weight
	m.tot.Edges++
}

// AddEdgeInContext folds a call-edge event whose caller's stack is known:
// context holds the caller's frames, innermost first. It does what AddEdge
// does and also adds weight to Calls of the callee's context node,
// creating the path (with zero sampled weight) if needed; the
// ContextID of that node is returned.
//
// context[0] should be the caller (site.Caller); its Site is ignored in
// favour of site.Addr. If context[0] is another function, the caller's
// frame is taken to be missing (as at a function-entry probe, whose
// frame-pointer chain skips the immediate caller) and is inserted below
// context, reached from context[0].Site. An empty context makes the
// caller a root.
func (m *Map) AddEdgeInContext(context []Frame, site CallSite, callee FuncID, weight uint64) ContextID {
	m.AddEdge(site, callee, weight)
	m.tot.ContextCalls += weight
	var c int32
	n := len(context)
	switch {
	case n == 0:
		c = m.root(m.fn(site.Caller))
	case context[0].Func == site.Caller:
		c = m.path(context)
	default:
		c = m.child(m.path(context), context[0].Site, site.Caller)
	}
	c = m.child(c, site.Addr, callee)
	m.ctxl[c].calls += weight
	return ContextID(c)
}

// path returns the context node of frames (innermost first, non-empty),
// creating missing nodes without adding weight. The stack cache serves
// repeated contexts.
func (m *Map) path(frames []Frame) int32 {
	h := hashStack(frames)
	if c := m.cachedPath(h, frames); c != none {
		return c
	}
	n := len(frames)
	c := m.root(m.fn(frames[n-1].Func))
	for k := n - 2; k >= 0; k-- {
		c = m.child(c, frames[k+1].Site, frames[k].Func)
	}
	m.remember(h, c)
	return c
}
