package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
)

// Options bound the lists of a report.
type Options struct {
	Top      int // functions and edges; 0 = 20, negative = all
	Contexts int // contexts; 0 = 10, negative = all
}

func (o Options) limits() (top, contexts int) {
	top, contexts = o.Top, o.Contexts
	if top == 0 {
		top = 20
	}
	if contexts == 0 {
		contexts = 10
	}
	return top, contexts
}

// summary is what both renderers show.
type summary struct {
	p        *profile.Profile
	funcs    []funcRow
	edges    []edgeRow
	contexts []contextRow
}

type funcRow struct {
	profile.Func
	id                  ccmap.FuncID
	self, total, calls  uint64
	selfShare, totShare float64
	callShare           float64 // calls as a share of all calls counted
}

type edgeRow struct {
	caller, callee profile.Func
	site           ccmap.CallSite
	calleeID       ccmap.FuncID
	info           *profile.Site // nil when Profile.Sites lacks the site
	weight         uint64        // calls, or sampled weight of adjacent frames
	share          float64
	// stackShare is the share of the sampled weight whose stack holds
	// the edge (once per stack, as a function's total)
	stackShare float64
}

type contextRow struct {
	path   []ccmap.Frame // root first; nil for contexts merged by names
	names  []string
	weight uint64 // calls in the context, or samples of the whole stack
	share  float64
}

func share(w, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return float64(w) / float64(total)
}

// summarize computes the lists of p, each bounded by o; with byNames,
// contexts that differ only by call sites are one row (mergedContexts).
func summarize(p *profile.Profile, o Options, byNames bool) (*summary, error) {
	if p == nil || p.Map == nil {
		return nil, errors.New("report: no profile")
	}
	s := &summary{p: p}
	top, nctx := o.limits()
	var err error
	if s.funcs, err = s.functions(top); err != nil {
		return nil, err
	}
	if s.edges, err = s.edgeRows(top); err != nil {
		return nil, err
	}
	rows := s.contextRows
	if byNames {
		rows = s.mergedContexts
	}
	if s.contexts, err = rows(nctx); err != nil {
		return nil, err
	}
	return s, nil
}

// fn returns the Func of id, or an error if the profile has none.
func (s *summary) fn(id ccmap.FuncID) (profile.Func, error) {
	if int64(id) >= int64(len(s.p.Funcs)) {
		return profile.Func{}, fmt.Errorf("report: function id %d has no entry in the profile's %d functions", id, len(s.p.Funcs))
	}
	return s.p.Funcs[id], nil
}

func bound[T any](rows []T, n int) []T {
	if n >= 0 && len(rows) > n {
		return rows[:n]
	}
	return rows
}

func (s *summary) functions(top int) ([]funcRow, error) {
	m := s.p.Map
	samples, calls := m.Totals().Samples, m.Totals().Calls
	var rows []funcRow
	for _, f := range m.Functions(ccmap.Self) {
		if f.Self == 0 && f.Total == 0 && (f.Calls == 0 || !s.p.HasCalls) {
			continue
		}
		pf, err := s.fn(f.Func)
		if err != nil {
			return nil, err
		}
		rows = append(rows, funcRow{Func: pf, id: f.Func, self: f.Self, total: f.Total, calls: f.Calls,
			selfShare: share(f.Self, samples), totShare: share(f.Total, samples), callShare: share(f.Calls, calls)})
	}
	if off := s.p.OffCPU; off != nil && off != m && top < 0 {
		// every function, those with time off the CPU alone too (after
		// the others: none of the profile's weight)
		in := map[ccmap.FuncID]bool{}
		for _, r := range rows {
			in[r.id] = true
		}
		for _, f := range off.Functions(ccmap.Total) {
			if in[f.Func] || f.Total == 0 {
				continue
			}
			pf, err := s.fn(f.Func)
			if err != nil {
				return nil, err
			}
			rows = append(rows, funcRow{Func: pf, id: f.Func})
		}
	}
	slices.SortFunc(rows, func(a, b funcRow) int {
		return cmp.Or(cmp.Compare(b.self, a.self), cmp.Compare(b.total, a.total), cmp.Compare(b.calls, a.calls),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Object, b.Object), cmp.Compare(a.id, b.id))
	})
	return bound(rows, top), nil
}

// callsOnly says whether the profile counts calls and has no sampled
// weight (the exact source): its functions are shown by calls alone.
func (s *summary) callsOnly() bool {
	return s.p.HasCalls && s.p.Map.Totals().Samples == 0
}

// edgeRows returns the edges by calls (HasCalls) or by the sampled weight
// of adjacent frames (timer).
func (s *summary) edgeRows(top int) ([]edgeRow, error) {
	m := s.p.Map
	var rows []edgeRow
	var sum uint64
	for _, e := range m.Edges(ccmap.Calls) {
		w := e.Calls
		if !s.p.HasCalls {
			w = 0
			for _, c := range m.EdgeContexts(e.Site, e.Callee, ccmap.Total) {
				w += c.Total
			}
		}
		if w == 0 {
			continue
		}
		sum += w
		caller, err := s.fn(e.Site.Caller)
		if err != nil {
			return nil, err
		}
		callee, err := s.fn(e.Callee)
		if err != nil {
			return nil, err
		}
		r := edgeRow{caller: caller, callee: callee, site: e.Site, calleeID: e.Callee, weight: w,
			stackShare: share(e.Total, m.Totals().Samples)}
		if info, ok := s.p.Sites[e.Site]; ok {
			r.info = &info
		}
		rows = append(rows, r)
	}
	for i := range rows {
		rows[i].share = share(rows[i].weight, sum)
	}
	slices.SortFunc(rows, compareEdges)
	return bound(rows, top), nil
}

// stacks reports whether the profile has sampled stacks, for edges'
// stackShare.
func (s *summary) stacks() bool { return s.p.Map.Totals().Samples > 0 }

func compareEdges(a, b edgeRow) int {
	return cmp.Or(cmp.Compare(b.weight, a.weight),
		cmp.Compare(a.caller.Name, b.caller.Name), cmp.Compare(a.callee.Name, b.callee.Name),
		cmp.Compare(siteObject(a), siteObject(b)), cmp.Compare(siteOffset(a), siteOffset(b)),
		cmp.Compare(a.caller.Object, b.caller.Object), cmp.Compare(a.callee.Object, b.callee.Object),
		cmp.Compare(a.site.Caller, b.site.Caller), cmp.Compare(a.site.Addr, b.site.Addr), cmp.Compare(a.calleeID, b.calleeID))
}

func siteObject(e edgeRow) string {
	if e.info == nil {
		return ""
	}
	return e.info.Object
}

func siteOffset(e edgeRow) uint64 {
	if e.info == nil {
		return e.site.Addr
	}
	return e.info.Offset
}

// contextMeasure is what contexts are weighed by, calls (HasCalls) or
// whole-stack samples (timer), and the total of their shares.
func (s *summary) contextMeasure() (ccmap.Measure, uint64) {
	if s.p.HasCalls {
		return ccmap.Calls, s.p.Map.Totals().ContextCalls
	}
	return ccmap.Self, s.p.Map.Totals().Samples
}

// contextRows returns the hottest contexts by calls (HasCalls) or by
// whole-stack samples (timer), ties by the names along the path.
func (s *summary) contextRows(n int) ([]contextRow, error) {
	m := s.p.Map
	by, total := s.contextMeasure()
	cands := hottest(m, by, n)
	rows := make([]contextRow, 0, len(cands))
	for _, c := range cands {
		w := c.Get(by)
		if w == 0 {
			continue
		}
		r := contextRow{path: m.Path(c.ID), weight: w, share: share(w, total)}
		for _, f := range r.path {
			pf, err := s.fn(f.Func)
			if err != nil {
				return nil, err
			}
			r.names = append(r.names, pf.Name)
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b contextRow) int {
		return cmp.Or(cmp.Compare(b.weight, a.weight), slices.Compare(a.names, b.names),
			slices.CompareFunc(a.path, b.path, compareFrames))
	})
	return bound(rows, n), nil
}

// mergedContexts returns the hottest contexts by their functions alone:
// contexts whose paths name the same functions and differ only by call
// sites (a function called from two places in its caller) are one row,
// their weights summed, ties by the names along the path. One pass over
// the calling-context tree gives each node the group of its names (its
// parent's group and its function's name); names are built for the rows
// shown only.
func (s *summary) mergedContexts(n int) ([]contextRow, error) {
	by, total := s.contextMeasure()
	cct := s.p.Map.CCT(by)
	type groupKey struct {
		parent int32
		name   string
	}
	type group struct {
		groupKey
		weight uint64
	}
	ids := map[groupKey]int32{}
	var groups []group
	of := make([]int32, len(cct.Nodes))
	for i, nd := range cct.Nodes {
		k := groupKey{parent: -1, name: "[pruned]"}
		if nd.Parent >= 0 {
			k.parent = of[nd.Parent]
		}
		if !nd.Pruned {
			f, err := s.fn(nd.Func)
			if err != nil {
				return nil, err
			}
			k.name = f.Name
		}
		g, ok := ids[k]
		if !ok {
			g = int32(len(groups))
			ids[k] = g
			groups = append(groups, group{groupKey: k})
		}
		of[i] = g
		groups[g].weight += nd.Weight
	}
	var hot []int32
	for g := range groups {
		if groups[g].weight > 0 {
			hot = append(hot, int32(g))
		}
	}
	slices.SortFunc(hot, func(a, b int32) int { return cmp.Compare(groups[b].weight, groups[a].weight) })
	if n >= 0 && len(hot) > n { // keep every group as hot as the n-th, for ties by name
		cut := n
		for cut < len(hot) && cut > 0 && groups[hot[cut]].weight == groups[hot[n-1]].weight {
			cut++
		}
		hot = hot[:cut]
	}
	rows := make([]contextRow, 0, len(hot))
	for _, g := range hot {
		r := contextRow{weight: groups[g].weight, share: share(groups[g].weight, total)}
		for x := g; x >= 0; x = groups[x].parent {
			r.names = append(r.names, groups[x].name)
		}
		slices.Reverse(r.names)
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b contextRow) int {
		return cmp.Or(cmp.Compare(b.weight, a.weight), slices.Compare(a.names, b.names))
	})
	return bound(rows, n), nil
}

func compareFrames(a, b ccmap.Frame) int {
	return cmp.Or(cmp.Compare(a.Func, b.Func), cmp.Compare(a.Site, b.Site))
}

// hottest returns at least the n hottest contexts by the measure and
// every context as hot as the n-th, so that ties at the cut can be broken
// by name (all of them if n < 0). HotContexts sorts every context, so it
// is asked at most three times: for n, for many more, for all.
func hottest(m *ccmap.Map, by ccmap.Measure, n int) []ccmap.Context {
	if n < 0 {
		return m.HotContexts(by, 0)
	}
	if n == 0 {
		return nil
	}
	for _, k := range []int{n, max(64*n, 1024)} {
		cs := m.HotContexts(by, k)
		// more than k: HotContexts kept every context tied at the cut
		if len(cs) != k || cs[n-1].Get(by) == 0 || cs[k-1].Get(by) < cs[n-1].Get(by) {
			return cs
		}
	}
	return m.HotContexts(by, 0)
}
