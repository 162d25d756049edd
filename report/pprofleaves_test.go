package report

import (
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
)

// TestPProfInlinedLeaves checks that a function's self weight split by
// the inlined frames of its sampled instructions (profile.Leaves) becomes
// leaf locations with those frames as lines, innermost first: in every
// context the split keeps the function's proportions and sums to its
// self weight exactly, and functions without chains keep their one
// location at their entry.
func TestPProfInlinedLeaves(t *testing.T) {
	const (
		lMain ccmap.FuncID = iota
		lOuter
		lOther
	)
	m := ccmap.New()
	// outer has self weight in two contexts (called from main at two
	// sites); other is a plain leaf.
	m.AddStack([]ccmap.Frame{{Func: lOuter}, {Func: lMain, Site: 0x1010}}, 7_000_003)
	m.AddStack([]ccmap.Frame{{Func: lOuter}, {Func: lMain, Site: 0x1020}}, 1_000_000)
	m.AddStack([]ccmap.Frame{{Func: lOther}, {Func: lMain, Site: 0x1030}}, 2_000_000)
	p := &profile.Profile{
		Map: m,
		Funcs: []profile.Func{
			{Name: "main", Object: app, Start: 0x1000, File: "m.c", StartLine: 20},
			{Name: "outer", Object: app, Start: 0x2000, File: "m.c", StartLine: 10},
			{Name: "other", Object: app, Start: 0x3000, File: "m.c", StartLine: 30},
		},
		Leaves: map[ccmap.FuncID][]profile.LeafChain{lOuter: {
			{Addr: 0x2040, Self: 6_000_000, Frames: []profile.SourceFrame{
				{Name: "mix", File: "m.c", Line: 5, StartLine: 3}, {Name: "outer", File: "m.c", Line: 12, StartLine: 10}}},
			{Addr: 0x2080, Self: 2_000_003, Frames: []profile.SourceFrame{{Name: "outer", File: "m.c", Line: 14, StartLine: 10}}},
		}},
		Recording: profile.Recording{Events: []profile.Event{{Name: "cpu-clock", Period: 1_000_000}}, Samples: 10},
	}
	out := PProfProfile(p)
	flat := map[string]int64{}  // innermost function of the leaf -> time
	outer := map[int][2]int64{} // main's call site location -> mix's and outer's own time
	var sum int64
	for _, s := range out.Samples {
		leaf := out.Locations[s.Stack[0]]
		name := out.Functions[leaf.Lines[0].Function].Name
		flat[name] += s.TimeNS
		sum += s.TimeNS
		switch name {
		case "mix":
			if len(leaf.Lines) != 2 || out.Functions[leaf.Lines[1].Function].Name != "outer" || leaf.Lines[0].Line != 5 || leaf.Lines[1].Line != 12 {
				t.Errorf("mix's leaf location has lines %+v, want mix:5 then outer:12", leaf.Lines)
			}
			if leaf.Address != 0x2040 || leaf.Mapping < 0 {
				t.Errorf("mix's leaf location at %#x (mapping %d), want 0x2040", leaf.Address, leaf.Mapping)
			}
			w := outer[s.Stack[1]]
			w[0] += s.TimeNS
			outer[s.Stack[1]] = w
		case "outer":
			if len(leaf.Lines) != 1 || leaf.Address != 0x2000 {
				t.Errorf("outer's own leaf location is %+v, want its entry 0x2000 with one line", leaf)
			}
			w := outer[s.Stack[1]]
			w[1] += s.TimeNS
			outer[s.Stack[1]] = w
		}
	}
	if sum != 10_000_003 || flat["other"] != 2_000_000 || flat["mix"]+flat["outer"] != 8_000_003 {
		t.Errorf("time %d, other %d, mix+outer %d: want 10000003, 2000000, 8000003", sum, flat["other"], flat["mix"]+flat["outer"])
	}
	if len(outer) != 2 {
		t.Fatalf("outer's self weight in %d contexts, want 2", len(outer))
	}
	for site, w := range outer {
		ctx := w[0] + w[1]
		if want := ctx * 6_000_000 / 8_000_003; w[0] != want {
			t.Errorf("context %#x: mix has %d of %d, want %d (the function's proportion)", out.Locations[site].Address, w[0], ctx, want)
		}
	}
	// Without chains the profile is as before: one leaf per function.
	p.Leaves = nil
	plain := PProfProfile(p)
	for _, s := range plain.Samples {
		if l := plain.Locations[s.Stack[0]]; len(l.Lines) != 1 {
			t.Errorf("without Leaves a leaf location has lines %+v", l.Lines)
		}
	}
}
