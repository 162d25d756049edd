package ccmap

import "fmt"

// Check verifies the map's invariants: every link and back-link is
// consistent, each context's Total is its Self plus its children's
// Totals plus its pruned weight, and the sums over functions, call
// sites, edges and contexts equal the totals. It returns the first
// violation found. Tests and fuzzing use it; a map built through this
// package's API always passes.
func (m *Map) Check() error {
	if err := m.checkGeneral(); err != nil {
		return fmt.Errorf("ccmap check: %w", err)
	}
	if err := m.checkContexts(); err != nil {
		return fmt.Errorf("ccmap check: %w", err)
	}
	return m.checkSums()
}

func (m *Map) checkGeneral() error {
	for i := range m.funcs {
		f := &m.funcs[i]
		if j, ok := m.funcIdx[f.id]; !ok || j != int32(i) {
			return fmt.Errorf("function %d: not indexed", f.id)
		}
		for s := f.sites; s != none; s = m.sites[s].next {
			if m.sites[s].caller != int32(i) {
				return fmt.Errorf("function %d: call site %d of another caller in its list", f.id, s)
			}
		}
		for e := f.in; e != none; e = m.edges[e].nextIn {
			if m.edges[e].callee != int32(i) {
				return fmt.Errorf("function %d: edge %d into another callee in its list", f.id, e)
			}
		}
		if r := f.root; r != none && (m.ctxs[r].parent != none || m.ctxl[r].fn != int32(i)) {
			return fmt.Errorf("function %d: root %d is not its root", f.id, r)
		}
	}
	for i := range m.sites {
		s := &m.sites[i]
		if j, ok := m.siteIdx[s.site]; !ok || j != int32(i) {
			return fmt.Errorf("call site %v: not indexed", s.site)
		}
		if m.funcs[s.caller].id != s.site.Caller {
			return fmt.Errorf("call site %v: caller node is function %d", s.site, m.funcs[s.caller].id)
		}
		var sum Weights
		for e := s.callees; e != none; e = m.edges[e].next {
			if m.edges[e].site != int32(i) {
				return fmt.Errorf("call site %v: edge %d of another site in its list", s.site, e)
			}
			sum.add(m.edges[e].w)
		}
		if sum.Calls != s.w.Calls || sum.Self != s.w.Self || sum.Total < s.w.Total {
			return fmt.Errorf("call site %v: weights %+v, its edges sum to %+v", s.site, s.w, sum)
		}
		for r := s.refs; r != none; r = m.srefs[r].nextRef {
			if m.srefs[r].site != int32(i) {
				return fmt.Errorf("call site %v: CallSiteRef %d of another site in its Context links", s.site, r)
			}
		}
	}
	for i := range m.edges {
		e := &m.edges[i]
		k := keyOf(m.sites[e.site].site, m.funcs[e.callee].id)
		if j, ok := m.edgeIdx[k]; !ok || j != int32(i) {
			return fmt.Errorf("edge %d: not indexed", i)
		}
		var sum Weights
		for c := e.refs; c != none; c = m.ctxl[c].nextRef {
			if m.ctxs[c].edge != int32(i) {
				return fmt.Errorf("edge %d: context %d of another edge in its Context links", i, c)
			}
			sum.add(m.ctxWeights(c))
		}
		if sum.Calls > e.w.Calls || (len(m.pruned) == 0 && sum.Self != e.w.Self) {
			return fmt.Errorf("edge %d: weights %+v, its contexts sum to %+v", i, e.w, sum)
		}
	}
	return nil
}

func (m *Map) checkContexts() error {
	if len(m.ctxl) != len(m.ctxs) {
		return fmt.Errorf("%d contexts but %d link records", len(m.ctxs), len(m.ctxl))
	}
	kids := make([]uint64, len(m.ctxs))
	for i := len(m.ctxs) - 1; i >= 0; i-- {
		c, l := &m.ctxs[i], &m.ctxl[i]
		want := l.self + kids[i] + m.pruned[int32(i)].Total
		if c.total != want {
			return fmt.Errorf("context %d: total %d, self+children+pruned %d", i, c.total, want)
		}
		if c.parent == none {
			if m.funcs[l.fn].root != int32(i) || c.edge != none {
				return fmt.Errorf("context %d: root not linked from its function", i)
			}
			continue
		}
		if c.parent >= int32(i) {
			return fmt.Errorf("context %d: parent %d created after it", i, c.parent)
		}
		kids[c.parent] += c.total
		e := &m.edges[c.edge]
		if e.callee != l.fn || m.sites[e.site].caller != m.ctxl[c.parent].fn {
			return fmt.Errorf("context %d: edge %d does not join its parent's function to its own", i, c.edge)
		}
		if m.findChild(c.parent, m.siteAddr(int32(i)), m.funcs[l.fn].id) != int32(i) {
			return fmt.Errorf("context %d: not indexed", i)
		}
		r := m.ctxSiteRef(int32(i))
		if r == none {
			return fmt.Errorf("context %d: no CallSiteRef in its parent", i)
		}
		found := false
		for x := m.srefs[r].callees; x != none; x = m.ctxl[x].next {
			found = found || x == int32(i)
		}
		if !found {
			return fmt.Errorf("context %d: missing from its CallSiteRef %d", i, r)
		}
	}
	if m.kids.n+m.rootCount() != len(m.ctxs) {
		return fmt.Errorf("%d contexts, %d indexed children and %d roots", len(m.ctxs), m.kids.n, m.rootCount())
	}
	for k := range m.pruned {
		if k != none && (k < 0 || int(k) >= len(m.ctxs)) {
			return fmt.Errorf("pruned entry for missing context %d", k)
		}
	}
	return nil
}

func (m *Map) rootCount() int {
	n := 0
	for i := range m.funcs {
		if m.funcs[i].root != none {
			n++
		}
	}
	return n
}

func (m *Map) checkSums() error {
	var fs, ss, es, cs Weights
	var ps prunedWeights
	var stacks uint64
	for i := range m.funcs {
		fs.add(m.funcs[i].w)
	}
	for i := range m.sites {
		ss.add(m.sites[i].w)
	}
	for i := range m.edges {
		es.add(m.edges[i].w)
	}
	var roots uint64
	for i := range m.ctxs {
		cs.add(m.ctxWeights(int32(i)))
		stacks += m.ctxl[i].stacks
		if m.ctxs[i].parent == none {
			roots += m.ctxs[i].total
		}
	}
	for _, w := range m.pruned {
		ps.add(w)
	}
	t := m.tot
	switch {
	case fs.Self != t.Samples:
		return fmt.Errorf("ccmap check: functions' self %d, samples %d", fs.Self, t.Samples)
	case fs.Calls != t.Calls || ss.Calls != t.Calls || es.Calls != t.Calls:
		return fmt.Errorf("ccmap check: calls into functions %d, through sites %d, edges %d; total %d", fs.Calls, ss.Calls, es.Calls, t.Calls)
	case ss.Self != es.Self || es.Self > t.Samples:
		return fmt.Errorf("ccmap check: innermost-edge self %d at sites, %d at edges, samples %d", ss.Self, es.Self, t.Samples)
	case cs.Self+ps.Self != t.Samples:
		return fmt.Errorf("ccmap check: contexts' self %d + pruned %d, samples %d", cs.Self, ps.Self, t.Samples)
	case roots+m.pruned[none].Total != t.Samples:
		return fmt.Errorf("ccmap check: roots' total %d + pruned %d, samples %d", roots, m.pruned[none].Total, t.Samples)
	case cs.Calls+ps.Calls != t.ContextCalls:
		return fmt.Errorf("ccmap check: contexts' calls %d + pruned %d, context calls %d", cs.Calls, ps.Calls, t.ContextCalls)
	case stacks+ps.stacks != t.Stacks:
		return fmt.Errorf("ccmap check: stacks ending in contexts %d + pruned %d, stacks %d", stacks, ps.stacks, t.Stacks)
	}
	return nil
}
