package pprof

import (
	"bytes"
	"math/rand/v2"
	"reflect"
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

// FuzzWriteMerge: Write and Merge never panic nor fail, whatever the
// indexes and weights: what Validate refuses is repaired (Repair's result
// validates, and a valid profile is its own repair, without warnings);
// merged with itself a profile doubles its weights, and merging is
// order-free.
func FuzzWriteMerge(f *testing.F) {
	f.Add(uint64(1), uint8(12), 0, 0)
	f.Add(uint64(2), uint8(3), 3, 7)
	f.Add(uint64(5), uint8(0), 1, 2)
	f.Fuzz(func(t *testing.T, seed uint64, nf uint8, which, v int) {
		r := rand.New(rand.NewPCG(seed, 11))
		a, b := randomProfile(r, int(nf%40)), randomProfile(r, int(nf%40))
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
		ab, mw, err := Merge(a, b)
		if err != nil || len(mw) != len(warnings) {
			t.Fatalf("Merge: %v, warnings %q; Repair's %q", err, mw, warnings)
		}
		a = fixed
		ba := mustMerge(t, b, a)
		if !reflect.DeepEqual(ab, ba) {
			t.Fatalf("Merge(a, b) != Merge(b, a)")
		}
		aa := mustMerge(t, a, a)
		one := mustMerge(t, a)
		for i := range one.Samples {
			if aa.Samples[i].Samples != 2*one.Samples[i].Samples || aa.Samples[i].TimeNS != 2*one.Samples[i].TimeNS {
				t.Fatalf("merging a profile with itself does not double sample %d", i)
			}
		}
	})
}

// BenchmarkMerge100 merges 100 recordings of one program.
func BenchmarkMerge100(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 9))
	ps := make([]*Profile, 100)
	for i := range ps {
		ps[i] = randomProfile(r, 200)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Merge(ps...); err != nil {
			b.Fatal(err)
		}
	}
}
