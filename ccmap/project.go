package ccmap

// Project returns the map m folded again with every FuncID replaced by
// f(id): the map that folding m's stacks and call edges with the new ids
// would have given. Call sites keep their Addr, their Caller becomes
// f(Caller). It is how an address-level fold (FuncID = an id per unique
// address, as a reader folds before symbolizing) becomes a function-level
// one: several ids may map to one.
//
// Self and Calls are sums, so every node's are the sums of its
// preimages'. A context's weights are the sums of the contexts that map
// to it (paths map to paths). Total counts a function, call site or edge
// once per stack, which sums cannot give when f joins two ids of one
// stack (recursion through two addresses of one function); it is
// recomputed from the context tree: a node's Total is the sum of the
// Totals of the contexts where it occurs with no occurrence above them.
// Totals (Samples, Stacks, Calls, Edges, ContextCalls) are m's.
//
// The result equals folding the projected input directly, with one
// exception: an AddEdgeInContext whose context did not start with the
// caller had the caller's frame inserted (ccmap's rule for entry probes);
// if f maps that context's first function to the caller's function, a
// direct fold of the projected event would not insert it.
//
// Pruned maps: pruned entries move with their contexts. The stacks under
// a pruned entry are gone, so a Total cannot be recomputed for the part
// of them below the surviving context; that part (the node's Total in m
// minus what m's surviving contexts give it) is carried over as the sum
// of its preimages' parts, capped at the whole pruned weight: a projected
// Total of a pruned map is never below the exact one and at most the
// pruned weight above it (a removed stack holding two ids that f joins
// counts twice, up to the cap). Self and Calls stay exact. m is not
// changed.
func Project(m *Map, f func(FuncID) FuncID) *Map {
	out := New()
	fmap := make([]int32, len(m.funcs))
	for i := range m.funcs {
		fmap[i] = out.fn(f(m.funcs[i].id))
		addSelfCalls(&out.funcs[fmap[i]].w, m.funcs[i].w)
	}
	smap := make([]int32, len(m.sites))
	for i := range m.sites {
		s := m.sites[i].site
		smap[i] = out.site(CallSite{Caller: f(s.Caller), Addr: s.Addr})
		addSelfCalls(&out.sites[smap[i]].w, m.sites[i].w)
	}
	emap := make([]int32, len(m.edges))
	for i := range m.edges {
		emap[i] = out.edge(smap[m.edges[i].site], fmap[m.edges[i].callee])
		addSelfCalls(&out.edges[emap[i]].w, m.edges[i].w)
	}

	cmap := make([]int32, len(m.ctxs))
	for i := range m.ctxs {
		var c int32
		if p := m.ctxs[i].parent; p == none {
			c = out.root(fmap[m.ctxl[i].fn])
		} else {
			c = out.child(cmap[p], m.siteAddr(int32(i)), out.funcs[fmap[m.ctxl[i].fn]].id)
		}
		cmap[i] = c
		out.ctxs[c].total += m.ctxs[i].total
		out.ctxl[c].self += m.ctxl[i].self
		out.ctxl[c].calls += m.ctxl[i].calls
		out.ctxl[c].stacks += m.ctxl[i].stacks
	}
	for k, w := range m.pruned {
		if k != none {
			k = cmap[k]
		}
		p := out.pruned[k]
		p.add(w)
		out.pruned[k] = p
	}

	// Totals from the context tree, plus what m's tree does not explain
	// (weight below pruned entries; nothing for a map never pruned).
	of, os, oe := out.treeTotals()
	for i := range out.funcs {
		out.funcs[i].w.Total = of[i]
	}
	for i := range out.sites {
		out.sites[i].w.Total = os[i]
	}
	for i := range out.edges {
		out.edges[i].w.Total = oe[i]
	}
	if len(m.pruned) > 0 {
		out.addPrunedTotals(m, fmap, smap, emap)
	}
	out.tot = m.tot
	return out
}

// addPrunedTotals adds to the projected nodes' Totals the part of m's
// Totals that m's context tree does not explain (the stacks below pruned
// entries): per node the sum of its preimages' parts, at most the whole
// pruned weight (no stack is counted twice by that cap).
func (out *Map) addPrunedTotals(m *Map, fmap, smap, emap []int32) {
	var limit uint64
	for _, w := range m.pruned {
		limit += w.Total
	}
	mf, ms, me := m.treeTotals()
	rf := make([]uint64, len(out.funcs))
	for i := range m.funcs {
		rf[fmap[i]] += m.funcs[i].w.Total - min(mf[i], m.funcs[i].w.Total)
	}
	rs := make([]uint64, len(out.sites))
	for i := range m.sites {
		rs[smap[i]] += m.sites[i].w.Total - min(ms[i], m.sites[i].w.Total)
	}
	re := make([]uint64, len(out.edges))
	for i := range m.edges {
		re[emap[i]] += m.edges[i].w.Total - min(me[i], m.edges[i].w.Total)
	}
	for i := range out.funcs {
		out.funcs[i].w.Total += min(rf[i], limit)
	}
	for i := range out.sites {
		out.sites[i].w.Total += min(rs[i], limit)
	}
	for i := range out.edges {
		out.edges[i].w.Total += min(re[i], limit)
	}
}

func addSelfCalls(w *Weights, o Weights) {
	w.Self += o.Self
	w.Calls += o.Calls
}

// treeTotals returns, per function, call site and edge node, the sum of
// the Totals of the contexts where it occurs with no occurrence among the
// context's ancestors: its Total counted once per stack, as far as the
// context tree holds the stacks. One depth-first walk, counting each
// node's occurrences on the current path.
func (m *Map) treeTotals() (fs, ss, es []uint64) {
	n := len(m.ctxs)
	// Children in compressed rows: kids[first[c]:first[c+1]].
	first := make([]int32, n+1)
	for i := range m.ctxs {
		if p := m.ctxs[i].parent; p != none {
			first[p+1]++
		}
	}
	for i := range n {
		first[i+1] += first[i]
	}
	kids := make([]int32, first[n])
	fill := append([]int32(nil), first[:n]...)
	var stack []int32 // a node to enter, or ^node to leave
	for i := range m.ctxs {
		if p := m.ctxs[i].parent; p != none {
			kids[fill[p]] = int32(i)
			fill[p]++
		} else {
			stack = append(stack, int32(i))
		}
	}

	fs, ss, es = make([]uint64, len(m.funcs)), make([]uint64, len(m.sites)), make([]uint64, len(m.edges))
	fon, son, eon := make([]int32, len(m.funcs)), make([]int32, len(m.sites)), make([]int32, len(m.edges))
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		leave := c < 0
		if leave {
			c = ^c
		}
		fn, e := m.ctxl[c].fn, m.ctxs[c].edge
		s := none
		if e != none {
			s = m.edges[e].site
		}
		if leave {
			fon[fn]--
			if e != none {
				eon[e]--
				son[s]--
			}
			continue
		}
		t := m.ctxs[c].total
		if fon[fn] == 0 {
			fs[fn] += t
		}
		fon[fn]++
		if e != none {
			if eon[e] == 0 {
				es[e] += t
			}
			eon[e]++
			if son[s] == 0 {
				ss[s] += t
			}
			son[s]++
		}
		stack = append(stack, ^c)
		stack = append(stack, kids[first[c]:first[c+1]]...)
	}
	return fs, ss, es
}
