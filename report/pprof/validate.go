package pprof

import "fmt"

// Validate checks that every index of p is in range and that the weights
// and positions make sense: mappings with Start < Limit, located addresses
// inside their mapping, named functions, no negative line or weight, and
// edges whose call site lies in their caller. Write repairs what it
// refuses (Repair) and then calls it; a profile it accepts never makes it
// fail on its indexes.
func (p *Profile) Validate() error {
	for i, m := range p.Mappings {
		if m.Start >= m.Limit {
			return fmt.Errorf("mapping %d (%s): start %#x not below limit %#x", i, m.Path, m.Start, m.Limit)
		}
	}
	for i, f := range p.Functions {
		if f.Name == "" {
			return fmt.Errorf("function %d has no name", i)
		}
		if f.StartLine < 0 {
			return fmt.Errorf("function %d (%s): negative start line %d", i, f.Name, f.StartLine)
		}
	}
	for i := range p.Locations {
		if err := p.validateLocation(i); err != nil {
			return err
		}
	}
	for i, s := range p.Samples {
		if err := p.validateSample(i, s); err != nil {
			return err
		}
	}
	for i, e := range p.Edges {
		if err := p.validateEdge(i, e); err != nil {
			return err
		}
	}
	return nil
}

func (p *Profile) validateLocation(i int) error {
	l := &p.Locations[i]
	if l.Mapping < -1 || l.Mapping >= len(p.Mappings) {
		return fmt.Errorf("location %d: mapping %d out of range (%d mappings)", i, l.Mapping, len(p.Mappings))
	}
	if l.Mapping >= 0 {
		m := &p.Mappings[l.Mapping]
		if l.Address < m.Start || l.Address >= m.Limit {
			return fmt.Errorf("location %d: address %#x outside its mapping %d [%#x, %#x)", i, l.Address, l.Mapping, m.Start, m.Limit)
		}
	}
	for _, ln := range l.Lines {
		if ln.Function < 0 || ln.Function >= len(p.Functions) {
			return fmt.Errorf("location %d: function %d out of range (%d functions)", i, ln.Function, len(p.Functions))
		}
		if ln.Line < 0 {
			return fmt.Errorf("location %d: negative line %d", i, ln.Line)
		}
	}
	return nil
}

func (p *Profile) validateSample(i int, s Sample) error {
	for _, l := range s.Stack {
		if l < 0 || l >= len(p.Locations) {
			return fmt.Errorf("sample %d: location %d out of range (%d locations)", i, l, len(p.Locations))
		}
	}
	if s.Samples < 0 || s.TimeNS < 0 || s.Weight < 0 {
		return fmt.Errorf("sample %d: negative weight (%d samples, %d ns, %d events)", i, s.Samples, s.TimeNS, s.Weight)
	}
	return nil
}

func (p *Profile) validateEdge(i int, e Edge) error {
	for _, f := range [...]int{e.Caller, e.Callee} {
		if f < 0 || f >= len(p.Functions) {
			return fmt.Errorf("edge %d: function %d out of range (%d functions)", i, f, len(p.Functions))
		}
	}
	if e.Calls < 0 {
		return fmt.Errorf("edge %d: negative call count %d", i, e.Calls)
	}
	if e.Site == -1 {
		return nil
	}
	if e.Site < -1 || e.Site >= len(p.Locations) {
		return fmt.Errorf("edge %d: call site %d out of range (%d locations)", i, e.Site, len(p.Locations))
	}
	lines := p.Locations[e.Site].Lines
	if len(lines) == 0 || lines[0].Function != e.Caller {
		return fmt.Errorf("edge %d: call site %d is not in the caller %s", i, e.Site, p.Functions[e.Caller].Name)
	}
	return nil
}
