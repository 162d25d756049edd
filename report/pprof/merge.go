package pprof

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Merge adds up profiles of the same program — many runs, or many machines
// — into one. Objects line up by build-id, or by path when they have none
// (with the file offset of their mapping); an address becomes its offset in
// its object, so the same code mapped at different addresses on different
// machines is one location. A merged mapping starts at the lowest start of
// those merged and keeps the first of their paths in sort order.
// Functions line up by name, system name, file and start line (a
// SystemName equal to Name becomes ""); stacks and
// edges by what they contain. Weights add up; comments are kept once each,
// sorted; PeriodNS is kept when all agree and is 0 otherwise; StartNS is
// the earliest, DurationNS the sum.
//
// The result is canonical: every list is sorted, so Merge is commutative
// and associative — any order and grouping of the same inputs gives an
// equal Profile. The profiles must agree on HasTime and HasCalls (merging
// a time profile with a call-count profile would mix what they measure).
// An item of an input that Validate refuses is repaired or left out
// (Profile.Repair), with a warning naming the input. The inputs are not
// changed.
func Merge(ps ...*Profile) (*Profile, []string, error) {
	if len(ps) == 0 {
		return nil, nil, errors.New("merge profiles: no profiles")
	}
	var warnings []string
	ps = slices.Clone(ps)
	for i := range ps {
		var ws []string
		ps[i], ws = ps[i].Repair()
		for _, w := range ws {
			warnings = append(warnings, fmt.Sprintf("merge profiles: profile %d: %s", i, w))
		}
		if err := ps[i].Validate(); err != nil {
			return nil, nil, fmt.Errorf("merge profiles: profile %d: %w", i, err)
		}
	}
	for i, p := range ps {
		if p.HasTime != ps[0].HasTime || p.HasCalls != ps[0].HasCalls || p.WeightType != ps[0].WeightType {
			return nil, nil, fmt.Errorf("merge profiles: profile %d has %s, profile 0 has %s", i, p.what(), ps[0].what())
		}
	}
	m := newMerger()
	for _, p := range ps {
		m.add(p)
	}
	return m.result(ps), warnings, nil
}

// what says which weights p has, for errors.
func (p *Profile) what() string {
	switch {
	case p.HasTime && p.HasCalls:
		return "time and call counts"
	case p.HasTime:
		return "time and no call counts"
	case p.HasCalls:
		return "call counts and no time"
	}
	return "neither time nor call counts"
}

// objKey identifies a mapping across profiles: the object (its build-id,
// else its path) and the file offset mapped.
type objKey struct {
	BuildID string
	Path    string // only when BuildID is ""
	Offset  uint64
}

func (k objKey) compare(o objKey) int {
	return cmp.Or(cmp.Compare(k.BuildID, o.BuildID), cmp.Compare(k.Path, o.Path), cmp.Compare(k.Offset, o.Offset))
}

// objAcc is a merged mapping while merging.
type objAcc struct {
	path  string
	start uint64
	size  uint64
}

// locKey identifies a location across profiles: its object and the
// address's offset in the object's file, or its address when its object
// is unknown, and its lines (an interned sequence).
type locKey struct {
	mapped bool
	obj    objKey
	addr   uint64 // file offset when mapped, else the address
	lines  int    // id in merger.lines
}

type edgeKey struct{ caller, callee, site int }

type stackAcc struct{ samples, timeNS, weight int64 }

type merger struct {
	fnIDs   map[Function]int
	fns     []Function
	objs    map[objKey]*objAcc
	lines   seqs // sequences of (function id, line)
	locIDs  map[locKey]int
	locs    []locKey
	stacks  seqs // sequences of location ids
	weights map[int]*stackAcc
	edges   map[edgeKey]int64
}

func newMerger() *merger {
	return &merger{
		fnIDs: map[Function]int{}, objs: map[objKey]*objAcc{}, lines: newSeqs(),
		locIDs: map[locKey]int{}, stacks: newSeqs(), weights: map[int]*stackAcc{},
		edges: map[edgeKey]int64{},
	}
}

// add folds p in; p is valid.
func (m *merger) add(p *Profile) {
	fns := make([]int, len(p.Functions))
	for i, f := range p.Functions {
		fns[i] = m.function(f)
	}
	locs := make([]int, len(p.Locations))
	for i, l := range p.Locations {
		locs[i] = m.location(p, l, fns)
	}
	for _, s := range p.Samples {
		id := 0
		for _, l := range s.Stack {
			id = m.stacks.append(id, locs[l], 0)
		}
		w := m.weights[id]
		if w == nil {
			w = &stackAcc{}
			m.weights[id] = w
		}
		w.samples += s.Samples
		w.timeNS += s.TimeNS
		w.weight += s.Weight
	}
	for _, e := range p.Edges {
		site := -1
		if e.Site >= 0 {
			site = locs[e.Site]
		}
		m.edges[edgeKey{fns[e.Caller], fns[e.Callee], site}] += e.Calls
	}
}

func (m *merger) function(f Function) int {
	if f.SystemName == f.Name {
		f.SystemName = ""
	}
	id, ok := m.fnIDs[f]
	if !ok {
		id = len(m.fns)
		m.fnIDs[f] = id
		m.fns = append(m.fns, f)
	}
	return id
}

func (m *merger) location(p *Profile, l Location, fns []int) int {
	k := locKey{addr: l.Address}
	for _, ln := range l.Lines {
		k.lines = m.lines.append(k.lines, fns[ln.Function], ln.Line)
	}
	if l.Mapping >= 0 {
		pm := p.Mappings[l.Mapping]
		k.mapped = true
		k.obj = objKey{BuildID: pm.BuildID, Offset: pm.Offset}
		if pm.BuildID == "" {
			k.obj.Path = pm.Path
		}
		k.addr = l.Address - pm.Start + pm.Offset
		m.object(k.obj, pm)
	}
	id, ok := m.locIDs[k]
	if !ok {
		id = len(m.locs)
		m.locIDs[k] = id
		m.locs = append(m.locs, k)
	}
	return id
}

func (m *merger) object(k objKey, pm Mapping) {
	a := m.objs[k]
	if a == nil {
		m.objs[k] = &objAcc{path: pm.Path, start: pm.Start, size: pm.Limit - pm.Start}
		return
	}
	if pm.Path != "" && (a.path == "" || pm.Path < a.path) {
		a.path = pm.Path
	}
	a.start = min(a.start, pm.Start)
	a.size = max(a.size, pm.Limit-pm.Start)
}

// result lays the merged profile out in canonical order.
func (m *merger) result(ps []*Profile) *Profile {
	out := &Profile{HasTime: ps[0].HasTime, HasCalls: ps[0].HasCalls, WeightType: ps[0].WeightType, PeriodNS: ps[0].PeriodNS}
	m.header(out, ps)
	fnIdx := m.layoutFunctions(out)
	objIdx := m.layoutMappings(out)
	locIdx := m.layoutLocations(out, fnIdx, objIdx)
	m.layoutSamples(out, locIdx)
	m.layoutEdges(out, fnIdx, locIdx)
	return out
}

func (m *merger) header(out *Profile, ps []*Profile) {
	seen := map[string]bool{}
	for _, p := range ps {
		if p.PeriodNS != out.PeriodNS {
			out.PeriodNS = 0
		}
		if p.StartNS != 0 && (out.StartNS == 0 || p.StartNS < out.StartNS) {
			out.StartNS = p.StartNS
		}
		out.DurationNS += p.DurationNS
		for _, c := range p.Comments {
			if !seen[c] {
				seen[c] = true
				out.Comments = append(out.Comments, c)
			}
		}
	}
	slices.Sort(out.Comments)
}

// layoutFunctions sorts the functions; it returns the final index of each
// merger id.
func (m *merger) layoutFunctions(out *Profile) []int {
	order := identity(len(m.fns))
	slices.SortFunc(order, func(a, b int) int {
		fa, fb := m.fns[a], m.fns[b]
		return cmp.Or(cmp.Compare(fa.Name, fb.Name), cmp.Compare(fa.SystemName, fb.SystemName),
			cmp.Compare(fa.File, fb.File), cmp.Compare(fa.StartLine, fb.StartLine))
	})
	idx := make([]int, len(order))
	for i, id := range order {
		idx[id] = i
		out.Functions = append(out.Functions, m.fns[id])
	}
	return idx
}

func (m *merger) layoutMappings(out *Profile) map[objKey]int {
	keys := make([]objKey, 0, len(m.objs))
	for k := range m.objs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, objKey.compare)
	idx := make(map[objKey]int, len(keys))
	for i, k := range keys {
		a := m.objs[k]
		idx[k] = i
		out.Mappings = append(out.Mappings, Mapping{
			Path: a.path, BuildID: k.BuildID, Start: a.start, Limit: a.start + a.size, Offset: k.Offset,
		})
	}
	return idx
}

func (m *merger) layoutLocations(out *Profile, fnIdx []int, objIdx map[objKey]int) []int {
	lines := make([][]Line, len(m.locs))
	for i, k := range m.locs {
		for _, e := range m.lines.get(k.lines) {
			lines[i] = append(lines[i], Line{Function: fnIdx[e[0]], Line: e[1]})
		}
	}
	order := identity(len(m.locs))
	slices.SortFunc(order, func(a, b int) int {
		ka, kb := m.locs[a], m.locs[b]
		if ka.mapped != kb.mapped {
			return cmpBool(ka.mapped, kb.mapped)
		}
		return cmp.Or(ka.obj.compare(kb.obj), cmp.Compare(ka.addr, kb.addr),
			slices.CompareFunc(lines[a], lines[b], func(x, y Line) int {
				return cmp.Or(cmp.Compare(x.Function, y.Function), cmp.Compare(x.Line, y.Line))
			}))
	})
	idx := make([]int, len(order))
	for i, id := range order {
		idx[id] = i
		k := m.locs[id]
		l := Location{Mapping: -1, Address: k.addr, Lines: lines[id]}
		if k.mapped {
			l.Mapping = objIdx[k.obj]
			mp := out.Mappings[l.Mapping]
			l.Address = mp.Start + (k.addr - mp.Offset)
		}
		out.Locations = append(out.Locations, l)
	}
	return idx
}

func (m *merger) layoutSamples(out *Profile, locIdx []int) {
	for id, w := range m.weights {
		var stack []int
		for _, e := range m.stacks.get(id) {
			stack = append(stack, locIdx[e[0]])
		}
		out.Samples = append(out.Samples, Sample{Stack: stack, Samples: w.samples, TimeNS: w.timeNS, Weight: w.weight})
	}
	slices.SortFunc(out.Samples, func(a, b Sample) int { return slices.Compare(a.Stack, b.Stack) })
}

func (m *merger) layoutEdges(out *Profile, fnIdx, locIdx []int) {
	for k, calls := range m.edges {
		e := Edge{Caller: fnIdx[k.caller], Callee: fnIdx[k.callee], Site: -1, Calls: calls}
		if k.site >= 0 {
			e.Site = locIdx[k.site]
		}
		out.Edges = append(out.Edges, e)
	}
	slices.SortFunc(out.Edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(a.Caller, b.Caller), cmp.Compare(a.Callee, b.Callee), cmp.Compare(a.Site, b.Site))
	})
}

// seqs interns sequences of pairs as a trie: id 0 is the empty sequence,
// and append(id, a, b) is the id of sequence id followed by (a, b).
type seqs struct {
	ids   map[seqNode]int
	nodes []seqNode // by id; nodes[0] is the empty sequence's
}

type seqNode struct{ prev, a, b int }

func newSeqs() seqs { return seqs{ids: map[seqNode]int{}, nodes: []seqNode{{}}} }

func (s *seqs) append(id, a, b int) int {
	n := seqNode{id, a, b}
	next, ok := s.ids[n]
	if !ok {
		next = len(s.nodes)
		s.ids[n] = next
		s.nodes = append(s.nodes, n)
	}
	return next
}

// get returns the pairs of sequence id, first first.
func (s *seqs) get(id int) [][2]int {
	var out [][2]int
	for ; id != 0; id = s.nodes[id].prev {
		out = append(out, [2]int{s.nodes[id].a, s.nodes[id].b})
	}
	slices.Reverse(out)
	return out
}

func identity(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
