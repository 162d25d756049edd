package procmap

import (
	"cmp"
	"slices"
	"sort"

	"github.com/hwprof/hwprof/addrspace"
)

// space is one address space: the mappings alive now, sorted by Start and
// never overlapping, and the retired ones, sorted by Start with the running
// maximum of their ends so that a lookup scans only the candidates.
type space struct {
	live       []mapping
	dead       []mapping
	deadMaxEnd []addrspace.Addr
}

// insert maps m at time m.From, retiring the parts of live mappings it
// overlaps and keeping the parts it does not.
func (s *space) insert(m mapping) {
	i := sort.Search(len(s.live), func(k int) bool { return s.live[k].End > m.Start })
	j := i
	for j < len(s.live) && s.live[j].Start < m.End {
		j++
	}
	var keep []mapping
	for _, old := range s.live[i:j] {
		if old.Start < m.Start {
			left := old
			left.End = m.Start
			keep = append(keep, left)
		}
		s.retire(old, m.From)
	}
	keep = append(keep, m)
	if j > i {
		if old := s.live[j-1]; old.End > m.End {
			right := old
			right.PgOff += uint64(m.End - old.Start)
			right.Start = m.End
			keep = append(keep, right)
		}
	}
	s.live = slices.Replace(s.live, i, j, keep...)
}

// retireAll retires every live mapping at time t (an exec, or a pid reused).
func (s *space) retireAll(t uint64) {
	for _, m := range s.live {
		s.retire(m, t)
	}
	s.live = s.live[:0]
}

func (s *space) retire(m mapping, t uint64) {
	m.Until = t
	k := sort.Search(len(s.dead), func(k int) bool { return s.dead[k].Start > m.Start })
	s.dead = slices.Insert(s.dead, k, m)
	s.deadMaxEnd = slices.Insert(s.deadMaxEnd, k, 0)
	for ; k < len(s.dead); k++ {
		e := s.dead[k].End
		if k > 0 && s.deadMaxEnd[k-1] > e {
			e = s.deadMaxEnd[k-1]
		}
		s.deadMaxEnd[k] = e
	}
}

// findWhole returns the mapping that held a at time t: the live one if it
// was mapped by then, else the retired one alive at t (the latest mapped
// if several), else the live one even if its record came later (a sample
// a little ahead of its mapping's record). It also says whether the
// mapping is the answer for every address it holds at time t: a live
// mapping that began by t.
func (s *space) findWhole(t uint64, a addrspace.Addr) (*mapping, bool, bool) {
	i := sort.Search(len(s.live), func(k int) bool { return s.live[k].End > a })
	var live *mapping
	if i < len(s.live) && s.live[i].Start <= a {
		live = &s.live[i]
		if live.From <= t {
			return live, true, true
		}
	}
	best := -1
	for k := sort.Search(len(s.dead), func(k int) bool { return s.dead[k].Start > a }) - 1; k >= 0 && s.deadMaxEnd[k] > a; k-- {
		d := &s.dead[k]
		if d.End > a && d.Live(t) && (best < 0 || d.From > s.dead[best].From) {
			best = k
		}
	}
	if best >= 0 {
		return &s.dead[best], false, true
	}
	return live, false, live != nil
}

// at returns the mappings alive at time t, sorted by Start.
func (s *space) at(t uint64) []addrspace.Mapping {
	var out []addrspace.Mapping
	for _, m := range s.live {
		if m.From <= t {
			out = append(out, m.Mapping)
		}
	}
	for _, m := range s.dead {
		if m.Live(t) {
			out = append(out, m.Mapping)
		}
	}
	slices.SortFunc(out, func(a, b addrspace.Mapping) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// clone copies the live mappings into a new space, mapped from time t.
func (s *space) clone(pid uint32, t uint64) []mapping {
	out := make([]mapping, len(s.live))
	for i, m := range s.live {
		m.PID = pid
		m.From = max(m.From, t)
		out[i] = m
	}
	return out
}
