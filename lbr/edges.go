package lbr

import (
	"cmp"
	"slices"
)

// Edge is one call edge of a process: the call instruction's address and
// the callee's entry, both runtime addresses. It is comparable, a map key.
type Edge struct {
	PID          uint32
	Site, Callee Addr
}

// EdgeStats are the counts of one edge.
type EdgeStats struct {
	Kind Kind // KindCall or KindIndCall
	// Appearances is how many times the edge was in a sample's window.
	Appearances uint64
	// Mispredicted is how many of those appearances the hardware marked
	// mispredicted.
	Mispredicted uint64
	// Cycles is the sum of the entries' cycle counts, over CyclesN
	// appearances that had one (cycles 0 means not recorded).
	Cycles, CyclesN uint64
	// Calls is the estimated number of calls (see Estimator).
	Calls float64
}

// Profile accumulates the call edges of many samples. Add is cheap (one
// map update per call entry); Edges sorts once. Not safe for concurrent
// use; Merge combines profiles built apart.
type Profile struct {
	Est     Estimator
	Samples uint64
	edges   map[Edge]*EdgeStats
}

// NewProfile returns an empty profile estimating with est.
func NewProfile(est Estimator) *Profile {
	return &Profile{Est: est, edges: make(map[Edge]*EdgeStats)}
}

// Add folds the calls of one sample of process pid, taken with period (the
// sample's period in the event's units, or the attr's fixed period).
func (p *Profile) Add(pid uint32, period uint64, calls []Call) {
	p.Samples++
	for _, c := range calls {
		k := Edge{pid, c.Site, c.Callee}
		s := p.edges[k]
		if s == nil {
			s = &EdgeStats{Kind: c.Kind}
			p.edges[k] = s
		}
		s.Appearances++
		if c.Mispred {
			s.Mispredicted++
		}
		if c.Cycles != 0 {
			s.Cycles += uint64(c.Cycles)
			s.CyclesN++
		}
		s.Calls += p.Est.Weight(period, c.Index)
	}
}

// Merge adds the counts of q into p.
func (p *Profile) Merge(q *Profile) {
	p.Samples += q.Samples
	for k, qs := range q.edges {
		s := p.edges[k]
		if s == nil {
			c := *qs
			p.edges[k] = &c
			continue
		}
		s.Appearances += qs.Appearances
		s.Mispredicted += qs.Mispredicted
		s.Cycles += qs.Cycles
		s.CyclesN += qs.CyclesN
		s.Calls += qs.Calls
	}
}

// Len is the number of distinct edges.
func (p *Profile) Len() int { return len(p.edges) }

// Lookup returns the counts of one edge.
func (p *Profile) Lookup(e Edge) (EdgeStats, bool) {
	s, ok := p.edges[e]
	if !ok {
		return EdgeStats{}, false
	}
	return *s, true
}

// EdgeCount is an edge with its counts.
type EdgeCount struct {
	Edge
	EdgeStats
}

// Edges returns every edge, by estimated calls descending, ties broken by
// appearances, pid, site and callee, so the order is reproducible.
func (p *Profile) Edges() []EdgeCount {
	out := make([]EdgeCount, 0, len(p.edges))
	for k, s := range p.edges {
		out = append(out, EdgeCount{k, *s})
	}
	slices.SortFunc(out, func(a, b EdgeCount) int {
		return cmp.Or(
			cmp.Compare(b.Calls, a.Calls),
			cmp.Compare(b.Appearances, a.Appearances),
			cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Site, b.Site),
			cmp.Compare(a.Callee, b.Callee))
	})
	return out
}
