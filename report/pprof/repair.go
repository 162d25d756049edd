package pprof

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
)

// Repair returns p with every item Validate refuses fixed or left out,
// and one warning per kind of repair (how many items, and the first), so
// that one odd item never costs the whole profile. It returns p itself
// when Validate accepts it, else a repaired copy (p is not changed).
// Write repairs its input so.
//
// A function without a name is named from its object and address as
// hwprof's reports name code without a symbol, "[object+0xaddress]" (by
// the lowest address of its own locations, as an offset in the mapped
// file), else by its system name, else "[function N]". A negative line
// or start line becomes 0 (unknown); a mapping that ends before it
// starts is widened to its locations; a location outside its mapping (or naming none
// there is) is left without one; a line of no function, a sample with a
// location that does not exist or a negative weight, and an edge of a
// function that does not exist or with negative calls are left out; an
// edge whose call site is not in its caller is kept without a call site.
func (p *Profile) Repair() (*Profile, []string) {
	if p.Validate() == nil {
		return p, nil
	}
	q := p.clone()
	var r repairs
	q.repairMappings(&r)
	q.repairLocations(&r)
	q.repairFunctions(&r)
	q.repairSamples(&r)
	q.repairEdges(&r)
	return q, r.warnings()
}

// repairs counts the repairs of each kind, in the order first seen.
type repairs struct {
	kinds []repairKind
}

type repairKind struct {
	what  string // what was wrong and what was done
	n     int
	first string // the first item repaired
}

func (r *repairs) add(what, item string) {
	for i := range r.kinds {
		if r.kinds[i].what == what {
			r.kinds[i].n++
			return
		}
	}
	r.kinds = append(r.kinds, repairKind{what, 1, item})
}

func (r *repairs) warnings() []string {
	var out []string
	for _, k := range r.kinds {
		out = append(out, fmt.Sprintf("pprof: %d %s (the first: %s)", k.n, k.what, k.first))
	}
	return out
}

// clone copies what Repair changes.
func (p *Profile) clone() *Profile {
	q := *p
	q.Mappings = slices.Clone(p.Mappings)
	q.Functions = slices.Clone(p.Functions)
	q.Locations = slices.Clone(p.Locations)
	for i := range q.Locations {
		q.Locations[i].Lines = slices.Clone(q.Locations[i].Lines)
	}
	q.Samples = slices.Clone(p.Samples)
	q.Edges = slices.Clone(p.Edges)
	return &q
}

// repairMappings widens a mapping that ends before it starts to the
// addresses of its locations (one byte when it has none).
func (p *Profile) repairMappings(r *repairs) {
	for i := range p.Mappings {
		m := &p.Mappings[i]
		if m.Start < m.Limit {
			continue
		}
		r.add("mappings whose start is not below their limit, widened to their locations", fmt.Sprintf("mapping %d (%s) [%#x, %#x)", i, m.Path, m.Start, m.Limit))
		if m.Start == math.MaxUint64 {
			m.Start--
		}
		m.Limit = m.Start + 1
		for _, l := range p.Locations {
			if l.Mapping == i && l.Address != math.MaxUint64 {
				m.Start, m.Limit = min(m.Start, l.Address), max(m.Limit, l.Address+1)
			}
		}
	}
}

func (p *Profile) repairLocations(r *repairs) {
	for i := range p.Locations {
		l := &p.Locations[i]
		switch {
		case l.Mapping < -1 || l.Mapping >= len(p.Mappings):
			r.add("locations naming no mapping there is, left without one", fmt.Sprintf("location %d, mapping %d", i, l.Mapping))
			l.Mapping = -1
		case l.Mapping >= 0 && (l.Address < p.Mappings[l.Mapping].Start || l.Address >= p.Mappings[l.Mapping].Limit):
			r.add("locations outside their mapping, left without one", fmt.Sprintf("location %d at %#x, mapping %d", i, l.Address, l.Mapping))
			l.Mapping = -1
		}
		l.Lines = slices.DeleteFunc(l.Lines, func(ln Line) bool {
			bad := ln.Function < 0 || ln.Function >= len(p.Functions)
			if bad {
				r.add("lines of no function there is, left out", fmt.Sprintf("location %d, function %d", i, ln.Function))
			}
			return bad
		})
		for j := range l.Lines {
			if l.Lines[j].Line < 0 {
				r.add("negative lines, made 0 (unknown)", fmt.Sprintf("location %d, line %d", i, l.Lines[j].Line))
				l.Lines[j].Line = 0
			}
		}
	}
}

// repairFunctions names the functions without a name and clears negative
// start lines; the locations must be repaired first.
func (p *Profile) repairFunctions(r *repairs) {
	var where []string // per function: its name from a location, once needed
	for i := range p.Functions {
		f := &p.Functions[i]
		if f.StartLine < 0 {
			r.add("negative start lines, made 0 (unknown)", fmt.Sprintf("function %d (%s), line %d", i, f.Name, f.StartLine))
			f.StartLine = 0
		}
		if f.Name != "" {
			continue
		}
		if where == nil {
			where = p.locationNames()
		}
		switch {
		case where[i] != "":
			f.Name = where[i]
		case f.SystemName != "":
			f.Name = f.SystemName
		default:
			f.Name = fmt.Sprintf("[function %d]", i)
		}
		r.add("functions without a name, named from their object and address", fmt.Sprintf("function %d, now %s", i, f.Name))
	}
}

// locationNames returns per function "[object+0xoffset]" for the lowest
// address of the locations whose own function (their last line's) it is,
// "" for a function without such a location in a mapping.
func (p *Profile) locationNames() []string {
	names := make([]string, len(p.Functions))
	low := make([]uint64, len(p.Functions))
	for _, l := range p.Locations {
		if l.Mapping < 0 || len(l.Lines) == 0 {
			continue
		}
		m := &p.Mappings[l.Mapping]
		f := l.Lines[len(l.Lines)-1].Function
		off := l.Address - m.Start + m.Offset
		if names[f] == "" || off < low[f] {
			low[f] = off
			names[f] = fmt.Sprintf("[%s+0x%x]", filepath.Base(m.Path), off)
		}
	}
	return names
}

func (p *Profile) repairSamples(r *repairs) {
	p.Samples = slices.DeleteFunc(p.Samples, func(s Sample) bool {
		for _, l := range s.Stack {
			if l < 0 || l >= len(p.Locations) {
				r.add("samples with a location there is not, left out", fmt.Sprintf("a sample with location %d", l))
				return true
			}
		}
		if s.Samples < 0 || s.TimeNS < 0 || s.Weight < 0 {
			r.add("samples with a negative weight, left out", fmt.Sprintf("%d samples, %d ns, %d events", s.Samples, s.TimeNS, s.Weight))
			return true
		}
		return false
	})
}

func (p *Profile) repairEdges(r *repairs) {
	p.Edges = slices.DeleteFunc(p.Edges, func(e Edge) bool {
		switch {
		case e.Caller < 0 || e.Caller >= len(p.Functions) || e.Callee < 0 || e.Callee >= len(p.Functions):
			r.add("edges of a function there is not, left out", fmt.Sprintf("functions %d → %d", e.Caller, e.Callee))
			return true
		case e.Calls < 0:
			r.add("edges with negative calls, left out", fmt.Sprintf("%s → %s, %d calls", p.Functions[e.Caller].Name, p.Functions[e.Callee].Name, e.Calls))
			return true
		}
		return false
	})
	for i := range p.Edges {
		e := &p.Edges[i]
		if e.Site == -1 {
			continue
		}
		if e.Site < -1 || e.Site >= len(p.Locations) || len(p.Locations[e.Site].Lines) == 0 || p.Locations[e.Site].Lines[0].Function != e.Caller {
			r.add("edges whose call site is not in their caller, kept without a call site", fmt.Sprintf("%s → %s, site %d", p.Functions[e.Caller].Name, p.Functions[e.Callee].Name, e.Site))
			e.Site = -1
		}
	}
}
