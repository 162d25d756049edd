package profile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/hwprof/hwprof/ccmap"
)

// HotThreshold is the hot-edge threshold of the adaptive bursting paper:
// an edge is hot when its weight is at least this share of the hottest's.
const HotThreshold = 0.1

// EdgeKey is a call edge as AlignKindsTo lines edges up across profiles: by the
// names of its caller and callee and the call site's object and offset in
// it (the address in its object: the same in every run of a program,
// wherever it was loaded). A site without a Profile.Sites entry has no
// object and its Offset is the recorded address.
type EdgeKey struct {
	Caller, Callee string
	Object         string
	Offset         uint64
}

// DCGKind is how a profile's dynamic call graph is drawn from it.
type DCGKind uint8

const (
	// CallCounts: the calls the source counted (lbr, calls, exact): the
	// DCG of the papers' exhaustive and call-sampling profilers.
	CallCounts DCGKind = iota
	// TopEdges: the timer DCG of the counter-based sampling paper: at
	// each sample, the edge into the function that is running (its
	// caller → it, at the caller's call site), weighted by the sample's
	// period (ccmap.Self of edges). A sample of a stack's root function
	// has no such edge.
	TopEdges
	// AdjacentFrames: every caller → callee pair of adjacent frames of
	// each sample, once per stack (ccmap.Total of edges), as the report's
	// and PGO's edges of sampled stacks: an edge near the root weighs the
	// inclusive time below it, not its calls.
	AdjacentFrames
	numDCGKinds
)

var dcgKindNames = [numDCGKinds]string{"call counts", "top edge of each sample", "adjacent frames of each sample"}

// String says what the DCG's edges weigh.
func (k DCGKind) String() string {
	if k < numDCGKinds {
		return dcgKindNames[k]
	}
	return fmt.Sprintf("dcgkind(%d)", uint8(k))
}

// Measure is the CC-Map measure of edges the kind reads.
func (k DCGKind) Measure() ccmap.Measure {
	switch k {
	case TopEdges:
		return ccmap.Self
	case AdjacentFrames:
		return ccmap.Total
	}
	return ccmap.Calls
}

// DCGKind is the DCG the papers define for p's source: the call counts
// when it counts calls (Profile.HasCalls), else the top edges of its
// sampled stacks.
func (p *Profile) DCGKind() DCGKind {
	if p.HasCalls {
		return CallCounts
	}
	return TopEdges
}

// DCG returns p's dynamic call graph of kind k.
func (p *Profile) DCG(k DCGKind) ccmap.DCG { return p.Map.DCG(k.Measure()) }

// An Alignment is several profiles of one program (from different
// sources or runs) in one space of functions and call sites: the first
// profile is the reference the others are measured against (Agreement).
//
// Functions are aligned by name alone (the same function in two runs has
// one name, and may be found in an object of another path), edges by
// EdgeKey. Each profile's edges are those of its DCG of the kind Kinds
// says (Profile.DCGKind is the papers' DCG of its source).
type Alignment struct {
	// Funcs names the aligned functions: FuncID -> name.
	Funcs []string
	// Sites are the aligned call sites: site id i+1 -> object and offset
	// (Caller and Callee unused).
	Sites []EdgeKey
	// Kinds are the kinds of the profiles' DCGs.
	Kinds []DCGKind
	// DCGs are the profiles' dynamic call graphs in the aligned space:
	// CallSite.Caller and callees index Funcs, CallSite.Addr is a site id.
	DCGs []ccmap.DCG
	// Counts are per profile the calls into each function (its weight as
	// a callee), indexed like Funcs.
	Counts [][]float64
	// Shares are per profile each edge's share of the profile's total (0
	// when the total is 0).
	Shares []map[EdgeKey]float64
	// Scope, when not nil, names the functions the alignment is
	// restricted to (AlignKindsTo): each DCG holds the edges into them
	// only, and its total is theirs.
	Scope map[string]bool
	// Counted are the functions whose calls the correlations compare
	// (Agreement): every function of Funcs, or with a Scope those of Funcs
	// in it.
	Counted []ccmap.FuncID
}

// AlignKindsTo lines up the profiles' edges and functions, each profile's
// DCG of the kind given (kinds[i]; a profile may appear twice with two
// kinds, and Profile.DCGKind is the papers' DCG of its source); ps[0] is
// the reference. With a scope it is restricted to the calls into the
// functions named in scope and those the reference has calls into: every
// profile's edges into other functions are left out, each share is of
// what is left, and the correlations compare the calls into those
// functions only. It compares sources on what a reference measured when
// it measured only some functions (the exact source with --probe-filter,
// which counts every call into the probed functions, from any caller).
// A nil scope restricts nothing. AlignKindsTo does not change the
// profiles.
func AlignKindsTo(ps []*Profile, kinds []DCGKind, scope map[string]bool) *Alignment {
	a := &Alignment{Kinds: kinds}
	if scope != nil {
		a.Scope = maps.Clone(scope)
		for _, e := range ps[0].DCG(kinds[0]).Edges {
			a.Scope[ps[0].FuncName(e.Callee)] = true // counted, so probed
		}
	}
	funcID := map[string]ccmap.FuncID{}
	siteID := map[EdgeKey]uint64{}
	intern := func(name string) ccmap.FuncID {
		id, ok := funcID[name]
		if !ok {
			id = ccmap.FuncID(len(a.Funcs))
			funcID[name] = id
			a.Funcs = append(a.Funcs, name)
		}
		return id
	}
	site := func(k EdgeKey) uint64 {
		sk := EdgeKey{Object: k.Object, Offset: k.Offset}
		id, ok := siteID[sk]
		if !ok {
			id = uint64(len(a.Sites)) + 1
			siteID[sk] = id
			a.Sites = append(a.Sites, sk)
		}
		return id
	}
	for i, p := range ps {
		g := p.DCG(kinds[i])
		out := ccmap.DCG{Measure: g.Measure}
		var keys []EdgeKey
		for _, e := range g.Edges {
			k := p.EdgeKey(e.Site, e.Callee)
			if a.Scope != nil && !a.Scope[k.Callee] {
				continue
			}
			out.Edges = append(out.Edges, ccmap.DCGEdge{
				Site:   ccmap.CallSite{Caller: intern(k.Caller), Addr: site(k)},
				Callee: intern(k.Callee), Weight: e.Weight})
			out.Total += e.Weight
			keys = append(keys, k)
		}
		shares := map[EdgeKey]float64{}
		for j, k := range keys {
			if out.Total > 0 {
				shares[k] += float64(out.Edges[j].Weight) / float64(out.Total)
			}
		}
		a.DCGs = append(a.DCGs, out)
		a.Shares = append(a.Shares, shares)
	}
	for _, g := range a.DCGs {
		counts := make([]float64, len(a.Funcs))
		for _, e := range g.Edges {
			counts[e.Callee] += float64(e.Weight)
		}
		a.Counts = append(a.Counts, counts)
	}
	for id, name := range a.Funcs {
		if a.Scope == nil || a.Scope[name] {
			a.Counted = append(a.Counted, ccmap.FuncID(id))
		}
	}
	return a
}

// counts are profile i's calls into each counted function.
func (a *Alignment) counts(i int) []float64 {
	if len(a.Counted) == len(a.Funcs) {
		return a.Counts[i]
	}
	out := make([]float64, len(a.Counted))
	for j, id := range a.Counted {
		out[j] = a.Counts[i][id]
	}
	return out
}

// EdgeKey is the key Align gives the edge from site to callee of p.
func (p *Profile) EdgeKey(site ccmap.CallSite, callee ccmap.FuncID) EdgeKey {
	k := EdgeKey{Caller: p.FuncName(site.Caller), Callee: p.FuncName(callee)}
	if s, ok := p.Sites[site]; ok {
		k.Object, k.Offset = s.Object, s.Offset
	} else {
		k.Offset = site.Addr
	}
	return k
}

// FuncName is the name of function id, or "[func ID]" for an id p does
// not have.
func (p *Profile) FuncName(id ccmap.FuncID) string {
	if int(id) < len(p.Funcs) {
		return p.Funcs[id].Name
	}
	return fmt.Sprintf("[func %d]", id)
}

// Agreement is how far one profile's call edges are from the
// reference's.
type Agreement struct {
	// Overlap is the degree of overlap of the two DCGs, 0..1: the sum
	// over common edges of the smaller of the two shares; OverlapNoSites
	// matches edges by caller and callee alone.
	Overlap, OverlapNoSites float64
	// HotCoverage is the share of the reference's hot edges (at
	// HotThreshold) that are hot in the profile too.
	HotCoverage float64
	// Pearson and Spearman are the correlations of the calls into each
	// counted function (Counts, Counted); NaN when undefined (fewer than
	// two functions, or no variation).
	Pearson, Spearman float64
	// Edges is the number of the profile's edges with weight.
	Edges int
}

// Agreement compares profile i with the reference (profile 0).
func (a *Alignment) Agreement(i int) Agreement {
	ref, g := a.DCGs[0], a.DCGs[i]
	x, y := a.counts(0), a.counts(i)
	return Agreement{
		Overlap:        ccmap.DCGOverlap(g, ref, ccmap.MatchOptions{}),
		OverlapNoSites: ccmap.DCGOverlap(g, ref, ccmap.MatchOptions{IgnoreSites: true}),
		HotCoverage:    ccmap.DCGHotCoverage(g, ref, HotThreshold, ccmap.MatchOptions{}),
		Pearson:        ccmap.Pearson(x, y),
		Spearman:       ccmap.Spearman(x, y),
		Edges:          len(g.Edges),
	}
}

// EdgeShare is an edge and its share of its profile's total.
type EdgeShare struct {
	Edge  EdgeKey
	Share float64
}

// TopEdges returns profile i's n largest edges by share (all when n < 0),
// ties broken by caller, callee, object and offset.
func (a *Alignment) TopEdges(i, n int) []EdgeShare {
	rows := make([]EdgeShare, 0, len(a.Shares[i]))
	for k, s := range a.Shares[i] {
		rows = append(rows, EdgeShare{k, s})
	}
	slices.SortFunc(rows, func(x, y EdgeShare) int {
		return cmp.Or(cmp.Compare(y.Share, x.Share), cmp.Compare(x.Edge.Caller, y.Edge.Caller),
			cmp.Compare(x.Edge.Callee, y.Edge.Callee), cmp.Compare(x.Edge.Object, y.Edge.Object),
			cmp.Compare(x.Edge.Offset, y.Edge.Offset))
	})
	if n >= 0 && len(rows) > n {
		rows = rows[:n]
	}
	return rows
}

// DCGColumns returns the columns hwprof compare shows, for profiles of
// the sources named by names (the reference first): each profile's DCG as
// the papers define it (Profile.DCGKind: call counts, or the top edge of
// each sample), and beside each sampled source after the reference its
// adjacent-frame edges, named SOURCE/adj, which weigh inclusive time
// rather than calls. The results are the names, profiles and kinds to
// pass to AlignKindsTo.
func DCGColumns(names []string, profiles []*Profile) ([]string, []*Profile, []DCGKind) {
	var cols []string
	var ps []*Profile
	var kinds []DCGKind
	for i, p := range profiles {
		cols, ps, kinds = append(cols, names[i]), append(ps, p), append(kinds, p.DCGKind())
	}
	for i, p := range profiles {
		if i > 0 && p.DCGKind() == TopEdges {
			cols, ps, kinds = append(cols, names[i]+"/adj"), append(ps, p), append(kinds, AdjacentFrames)
		}
	}
	return cols, ps, kinds
}
