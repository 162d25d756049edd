package ccmap

// none marks an absent node index or the end of a list.
const none int32 = -1

// The node structs keep the fields a repeated stack touches first
// (identity, stamp, Total), so that a fold reads one cache line per node.

// funcNode is the paper's MethodProfile: the totals of one function and
// the heads of its lists.
type funcNode struct {
	id    FuncID
	root  int32 // context tree rooted at this function (stacks whose outermost frame it is)
	stamp uint64
	w     Weights
	sites int32 // first CallSite in this function, continued by siteNode.next
	in    int32 // first Callee into this function, continued by edgeNode.nextIn
}

// siteNode is the paper's CallSite: one call instruction of a caller.
type siteNode struct {
	site    CallSite
	stamp   uint64
	w       Weights
	caller  int32 // funcNode
	next    int32 // next CallSite of the same caller
	callees int32 // first Callee at this site, continued by edgeNode.next
	refs    int32 // Context links: first CallSiteRef, continued by siteRefNode.nextRef
}

// edgeNode is the paper's Callee: all calls from one call site to one
// callee, in any context.
type edgeNode struct {
	site   int32 // siteNode
	callee int32 // funcNode
	stamp  uint64
	w      Weights
	next   int32 // next Callee at the same site
	nextIn int32 // next Callee into the same function
	refs   int32 // Context links: first CalleeRef, continued by ctxLinks.nextRef
}

// siteRefNode is the paper's CallSiteRef: a call site in one context.
// Its weights are the sums of its CalleeRefs, computed when asked.
type siteRefNode struct {
	site    int32 // general CallSite
	parent  int32 // context the call is made from
	next    int32 // next CallSiteRef of the same parent context
	callees int32 // first CalleeRef, continued by ctxLinks.next
	nextRef int32 // next CallSiteRef of the same CallSite
}

// A context node is the paper's CalleeRef (a callee in one context), or
// the root of a context tree. It is split in two parallel slices: ctxNode
// holds what folding a repeated stack reads, ctxLinks the rest.
type ctxNode struct {
	parent int32 // parent context; none for a root
	edge   int32 // general Callee; none for a root
	total  uint64
}

type ctxLinks struct {
	fn      int32 // funcNode of this frame
	sites   int32 // first CallSiteRef made from this context
	next    int32 // next CalleeRef of the same CallSiteRef
	nextRef int32 // next CalleeRef of the same Callee
	self    uint64
	calls   uint64
	stacks  uint64 // stacks (samples) whose whole stack is this context
}

// edgeKey finds a Callee: call site (caller and address) and callee,
// packed in 16 bytes without padding so the map hashes and compares it
// as plain memory.
type edgeKey struct {
	caller, callee FuncID
	addr           uint64
}

func keyOf(site CallSite, callee FuncID) edgeKey {
	return edgeKey{caller: site.Caller, callee: callee, addr: site.Addr}
}

// A Map is a Call Context Map. The zero value is not ready; use New.
// A Map is not safe for concurrent use: fold into one Map per goroutine
// and Merge them.
type Map struct {
	funcs []funcNode
	sites []siteNode
	edges []edgeNode
	srefs []siteRefNode
	ctxs  []ctxNode
	ctxl  []ctxLinks

	funcIdx map[FuncID]int32
	siteIdx map[CallSite]int32
	edgeIdx map[edgeKey]int32
	kids    childIndex // CalleeRefs by parent, call site and callee (index.go)

	// pruned holds, per surviving context (none: the forest's top level),
	// the weight and stacks of the children Prune removed.
	pruned map[int32]prunedWeights

	tot   Totals
	seq   uint64      // stack sequence number, for once-per-stack counting
	cache []cacheSlot // recently folded stacks (cache.go); nil until used
}

// New returns an empty Map.
func New() *Map {
	return &Map{
		funcIdx: make(map[FuncID]int32),
		siteIdx: make(map[CallSite]int32),
		edgeIdx: make(map[edgeKey]int32),
		pruned:  make(map[int32]prunedWeights),
	}
}

// Totals returns the grand totals.
func (m *Map) Totals() Totals { return m.tot }

// Size reports how many nodes of each kind the map holds.
type Size struct {
	Functions, CallSites, Callees  int // general nodes
	CallSiteRefs, Contexts, Pruned int // context nodes (Contexts: roots and CalleeRefs)
}

// Size returns the number of nodes of each kind.
func (m *Map) Size() Size {
	return Size{
		Functions: len(m.funcs), CallSites: len(m.sites), Callees: len(m.edges),
		CallSiteRefs: len(m.srefs), Contexts: len(m.ctxs), Pruned: len(m.pruned),
	}
}

// fn returns the MethodProfile of id, creating it.
func (m *Map) fn(id FuncID) int32 {
	if i, ok := m.funcIdx[id]; ok {
		return i
	}
	i := int32(len(m.funcs))
	m.funcs = append(m.funcs, funcNode{id: id, root: none, sites: none, in: none})
	m.funcIdx[id] = i
	return i
}

// site returns the CallSite node of s, creating it.
func (m *Map) site(s CallSite) int32 {
	if i, ok := m.siteIdx[s]; ok {
		return i
	}
	f := m.fn(s.Caller)
	i := int32(len(m.sites))
	m.sites = append(m.sites, siteNode{site: s, caller: f, next: m.funcs[f].sites, callees: none, refs: none})
	m.funcs[f].sites = i
	m.siteIdx[s] = i
	return i
}

// edge returns the Callee node for site node s and callee function f,
// creating it.
func (m *Map) edge(s, f int32) int32 {
	k := keyOf(m.sites[s].site, m.funcs[f].id)
	if i, ok := m.edgeIdx[k]; ok {
		return i
	}
	i := int32(len(m.edges))
	m.edges = append(m.edges, edgeNode{site: s, callee: f, next: m.sites[s].callees, nextIn: m.funcs[f].in, refs: none})
	m.sites[s].callees = i
	m.funcs[f].in = i
	m.edgeIdx[k] = i
	return i
}

// root returns the root context of function node f, creating it.
func (m *Map) root(f int32) int32 {
	if c := m.funcs[f].root; c != none {
		return c
	}
	c := int32(len(m.ctxs))
	m.ctxs = append(m.ctxs, ctxNode{parent: none, edge: none})
	m.ctxl = append(m.ctxl, ctxLinks{fn: f, sites: none, next: none, nextRef: none})
	m.funcs[f].root = c
	return c
}

// child returns the CalleeRef for a call from context c at address addr
// to callee, creating it (and the general nodes it refers to).
func (m *Map) child(c int32, addr uint64, callee FuncID) int32 {
	if i := m.findChild(c, addr, callee); i != none {
		return i
	}
	s := m.site(CallSite{Caller: m.funcs[m.ctxl[c].fn].id, Addr: addr})
	e := m.edge(s, m.fn(callee))
	sr := m.siteRef(c, s)
	i := int32(len(m.ctxs))
	m.ctxs = append(m.ctxs, ctxNode{parent: c, edge: e})
	m.ctxl = append(m.ctxl, ctxLinks{fn: m.edges[e].callee, sites: none, next: m.srefs[sr].callees, nextRef: m.edges[e].refs})
	m.srefs[sr].callees = i
	m.edges[e].refs = i
	m.indexChild(i)
	return i
}

// siteRef returns the CallSiteRef of site node s in context c, creating
// it. A context has few call sites, so a walk of its list finds it; this
// runs only when a CalleeRef is created.
func (m *Map) siteRef(c, s int32) int32 {
	for r := m.ctxl[c].sites; r != none; r = m.srefs[r].next {
		if m.srefs[r].site == s {
			return r
		}
	}
	r := int32(len(m.srefs))
	m.srefs = append(m.srefs, siteRefNode{site: s, parent: c, next: m.ctxl[c].sites, callees: none, nextRef: m.sites[s].refs})
	m.ctxl[c].sites = r
	m.sites[s].refs = r
	return r
}

// siteAddr returns the call-site address a CalleeRef (not a root) was
// called from.
func (m *Map) siteAddr(c int32) uint64 {
	return m.sites[m.edges[m.ctxs[c].edge].site].site.Addr
}

// ctxSiteRef returns the CallSiteRef CalleeRef c hangs under (none for
// a root), by a walk of its parent's short list of call sites.
func (m *Map) ctxSiteRef(c int32) int32 {
	cn := m.ctxs[c]
	if cn.parent == none {
		return none
	}
	s := m.edges[cn.edge].site
	for r := m.ctxl[cn.parent].sites; r != none; r = m.srefs[r].next {
		if m.srefs[r].site == s {
			return r
		}
	}
	return none
}

// prunedWeights are the weights of the contexts Prune removed under one
// surviving context, and the stacks that ended in them.
type prunedWeights struct {
	Weights
	stacks uint64
}

func (p *prunedWeights) add(o prunedWeights) {
	p.Weights.add(o.Weights)
	p.stacks += o.stacks
}

// ctxWeights returns the weights of context c.
func (m *Map) ctxWeights(c int32) Weights {
	l := &m.ctxl[c]
	return Weights{Self: l.self, Total: m.ctxs[c].total, Calls: l.calls}
}
