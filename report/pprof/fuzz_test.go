package pprof

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// corrupt breaks one field of p chosen by which (0 leaves p alone), with
// values that can be out of range.
func corrupt(p *Profile, which, v int) {
	idx := func(n int) int { return (v%n + n) % n }
	switch which % 8 {
	case 1:
		if len(p.Locations) > 0 {
			p.Locations[idx(len(p.Locations))].Mapping = v - 3
		}
	case 2:
		if len(p.Samples) > 0 && len(p.Samples[0].Stack) > 0 {
			p.Samples[0].Stack[0] = v - 5
		}
	case 3:
		if len(p.Edges) > 0 {
			p.Edges[0].Site = v - 2
		}
	case 4:
		if len(p.Edges) > 0 {
			p.Edges[0].Callee = v - 4
		}
	case 5:
		if len(p.Locations) > 0 {
			p.Locations[0].Address = uint64(v) << 20
		}
	case 6:
		if len(p.Mappings) > 0 {
			p.Mappings[idx(len(p.Mappings))].Limit = uint64(v)
		}
	case 7:
		if len(p.Locations) > 0 && len(p.Locations[0].Lines) > 0 {
			p.Locations[0].Lines[0].Function = v - 1
		}
	}
}

// FuzzWriteRepair: Write never panics nor fails, whatever the indexes and
// weights: what Validate refuses is repaired (Repair's result validates,
// and a valid profile is its own repair, without warnings).
func FuzzWriteRepair(f *testing.F) {
	f.Add(uint64(1), uint8(12), 0, 0)
	f.Add(uint64(2), uint8(3), 3, 7)
	f.Add(uint64(5), uint8(0), 1, 2)
	f.Fuzz(func(t *testing.T, seed uint64, nf uint8, which, v int) {
		r := rand.New(rand.NewPCG(seed, 11))
		a := randomProfile(r, int(nf%40))
		corrupt(a, which, v)
		valid := a.Validate() == nil
		fixed, warnings := a.Repair()
		if err := fixed.Validate(); err != nil {
			t.Fatalf("the repaired profile does not validate: %v (warnings %q)", err, warnings)
		}
		if valid != (fixed == a) || valid != (warnings == nil) {
			t.Fatalf("Validate says %v, Repair returned the profile itself: %v, warnings %q", a.Validate(), fixed == a, warnings)
		}
		for _, o := range []Options{{}, {Weight: Calls}, {PGO: true, Weight: Calls}, {PGO: true}} {
			if err := Write(new(bytes.Buffer), a, o); !o.PGO && err != nil {
				t.Fatalf("profile did not write: %v", err)
			}
		}
	})
}

// randomProfile draws a profile of a program made of nf functions in three
// objects (one without a build-id), mapped at a random place.
func randomProfile(r *rand.Rand, nf int) *Profile {
	p := &Profile{HasTime: true, HasCalls: true, PeriodNS: 1e6, Comments: []string{fmt.Sprint("run ", r.IntN(3))}}
	objs := []Mapping{
		{Path: "/bin/prog", BuildID: "aa", Offset: 0x1000},
		{Path: "/lib/liba.so", BuildID: "bb", Offset: 0},
		{Path: "/lib/libnoid.so", Offset: 0x3000},
	}
	for i, o := range objs {
		o.Start = uint64(i+1)<<32 + uint64(r.IntN(1000))<<12
		o.Limit = o.Start + 0x100000
		p.Mappings = append(p.Mappings, o)
	}
	for f := range nf {
		p.Functions = append(p.Functions, Function{Name: fmt.Sprint("f", f), File: "f.c", StartLine: 10 * f})
	}
	// Locations: a few per function, some with an inlined frame, some
	// unmapped.
	for f := range nf {
		for k := range 3 {
			if r.IntN(2) == 0 {
				continue
			}
			l := Location{Mapping: f % 3, Lines: []Line{{f, 10*f + k}}}
			l.Address = p.Mappings[l.Mapping].Start + uint64(f*0x100+k*8)
			if f%5 == 4 {
				l.Mapping, l.Address = -1, 0xffffffff80000000+uint64(f)
			}
			if f > 0 && k == 2 {
				l.Lines = append([]Line{{r.IntN(f), 1}}, l.Lines...)
			}
			p.Locations = append(p.Locations, l)
		}
	}
	if len(p.Locations) == 0 {
		return p
	}
	for range r.IntN(20) {
		var s Sample
		for range 1 + r.IntN(5) {
			s.Stack = append(s.Stack, r.IntN(len(p.Locations)))
		}
		s.Samples = int64(r.IntN(10))
		s.TimeNS = s.Samples * int64(1+r.IntN(3)) * 1e6
		p.Samples = append(p.Samples, s)
	}
	for range r.IntN(10) {
		site := r.IntN(len(p.Locations))
		e := Edge{Caller: p.Locations[site].Lines[0].Function, Callee: r.IntN(nf), Site: site, Calls: int64(r.IntN(1000))}
		if r.IntN(4) == 0 {
			e.Site = -1
		}
		p.Edges = append(p.Edges, e)
	}
	return p
}
