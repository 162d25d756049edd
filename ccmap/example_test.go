package ccmap_test

import (
	"fmt"

	"github.com/hwprof/hwprof/ccmap"
)

// Fold a few sampled stacks and ask the map about an edge and its
// contexts, a call site's targets, and the hottest functions.
func Example() {
	const (
		main ccmap.FuncID = iota + 1
		parse
		eval
		add
		mul
	)
	// Stacks innermost first; each frame's Site is the call it makes.
	stacks := []struct {
		frames []ccmap.Frame
		n      int
	}{
		{[]ccmap.Frame{{Func: add}, {Func: eval, Site: 0x2010}, {Func: main, Site: 0x1020}}, 6},
		{[]ccmap.Frame{{Func: mul}, {Func: eval, Site: 0x2010}, {Func: main, Site: 0x1020}}, 2},
		{[]ccmap.Frame{{Func: add}, {Func: eval, Site: 0x2010}, {Func: parse, Site: 0x3008}, {Func: main, Site: 0x1010}}, 2},
	}
	m := ccmap.New()
	for _, s := range stacks {
		for range s.n {
			m.AddStack(s.frames, 250000) // the sample's period, in ns
		}
	}

	site := ccmap.CallSite{Caller: eval, Addr: 0x2010}
	e, _ := m.Edge(site, add)
	fmt.Printf("eval→add: %d of %d ns\n", e.Total, m.Totals().Samples)
	for _, c := range m.EdgeContexts(site, add, ccmap.Total) {
		fmt.Println("  context", m.Path(c.ID), c.Total)
	}

	s, _ := m.Site(site, ccmap.Total)
	t, share := s.Dominant(ccmap.Total)
	fmt.Printf("site %#x: %d targets, %d takes %.0f%%\n", s.Site.Addr, len(s.Targets), t.Callee, 100*share)

	for _, f := range m.Functions(ccmap.Self)[:2] {
		fmt.Printf("function %d: self %d, total %d\n", f.Func, f.Self, f.Total)
	}
	// Output:
	// eval→add: 2000000 of 2500000 ns
	//   context [1@0x1020 3@0x2010 4] 1500000
	//   context [1@0x1010 2@0x3008 3@0x2010 4] 500000
	// site 0x2010: 2 targets, 4 takes 80%
	// function 4: self 2000000, total 2000000
	// function 5: self 500000, total 500000
}
