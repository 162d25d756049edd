package pprof

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// shuffled returns p with its mappings, functions, locations, samples and
// edges in another order: the same profile written differently.
func shuffled(p *Profile, r *rand.Rand) *Profile {
	pm, pf, pl := r.Perm(len(p.Mappings)), r.Perm(len(p.Functions)), r.Perm(len(p.Locations))
	q := &Profile{
		Mappings: make([]Mapping, len(p.Mappings)), Functions: make([]Function, len(p.Functions)),
		Locations: make([]Location, len(p.Locations)), Comments: append([]string(nil), p.Comments...),
		PeriodNS: p.PeriodNS, StartNS: p.StartNS, DurationNS: p.DurationNS, HasTime: p.HasTime, HasCalls: p.HasCalls,
	}
	for i, m := range p.Mappings {
		q.Mappings[pm[i]] = m
	}
	for i, f := range p.Functions {
		q.Functions[pf[i]] = f
	}
	for i, l := range p.Locations {
		nl := Location{Mapping: -1, Address: l.Address}
		if l.Mapping >= 0 {
			nl.Mapping = pm[l.Mapping]
		}
		for _, ln := range l.Lines {
			nl.Lines = append(nl.Lines, Line{pf[ln.Function], ln.Line})
		}
		q.Locations[pl[i]] = nl
	}
	for _, s := range p.Samples {
		ns := Sample{Samples: s.Samples, TimeNS: s.TimeNS}
		for _, l := range s.Stack {
			ns.Stack = append(ns.Stack, pl[l])
		}
		q.Samples = append(q.Samples, ns)
	}
	for _, e := range p.Edges {
		ne := Edge{Caller: pf[e.Caller], Callee: pf[e.Callee], Site: -1, Calls: e.Calls}
		if e.Site >= 0 {
			ne.Site = pl[e.Site]
		}
		q.Edges = append(q.Edges, ne)
	}
	r.Shuffle(len(q.Samples), func(i, j int) { q.Samples[i], q.Samples[j] = q.Samples[j], q.Samples[i] })
	r.Shuffle(len(q.Edges), func(i, j int) { q.Edges[i], q.Edges[j] = q.Edges[j], q.Edges[i] })
	r.Shuffle(len(q.Comments), func(i, j int) { q.Comments[i], q.Comments[j] = q.Comments[j], q.Comments[i] })
	return q
}

// relocated moves mapping mi of p to start (as address-space layout
// randomization does on another machine or run) and renames its file.
func relocated(p *Profile, mi int, start uint64, path string) {
	m := &p.Mappings[mi]
	delta := start - m.Start
	m.Start, m.Limit, m.Path = start, m.Limit+delta, path
	for i := range p.Locations {
		if p.Locations[i].Mapping == mi {
			p.Locations[i].Address += delta
		}
	}
}

// weighted multiplies p's weights by k and adds j to each, so that each
// machine's profile differs.
func weighted(p *Profile, k, j int64) {
	for i := range p.Samples {
		p.Samples[i].Samples = p.Samples[i].Samples*k + j
		p.Samples[i].TimeNS = p.Samples[i].TimeNS*k + j
	}
	for i := range p.Edges {
		p.Edges[i].Calls = p.Edges[i].Calls*k + j
	}
}

// machines returns recordings of the program of synthetic() on three
// machines: the second maps libc elsewhere under another path, with the
// same build-id; the third also ran code of a library without a build-id.
func machines() []*Profile {
	r := rand.New(rand.NewPCG(1, 2))
	a := synthetic()
	b := synthetic()
	relocated(b, 1, 0x7fab12340000, "/lib/x86_64-linux-gnu/libc.so.6")
	weighted(b, 3, 1)
	b.Comments = append(b.Comments, "machine: b")
	b.PeriodNS, b.StartNS = 2e6, a.StartNS-5

	c := synthetic()
	relocated(c, 1, 0x7f1100000000, "/usr/lib/x86_64-linux-gnu/libc.so.6")
	weighted(c, 2, 0)
	c.Comments = append(c.Comments, "machine: c")
	c.Mappings = append(c.Mappings, Mapping{Path: "/opt/lib/libz.so.1", Start: 0x7f2200000000, Limit: 0x7f2200020000, Offset: 0x2000})
	c.Functions = append(c.Functions, Function{Name: "inflate", File: "inflate.c", StartLine: 622})
	c.Locations = append(c.Locations, Location{Mapping: 2, Address: 0x7f2200001000, Lines: []Line{{7, 700}}})
	c.Samples = append(c.Samples, Sample{Stack: []int{11, 5, 1}, Samples: 9, TimeNS: 9e6})
	c.Edges = append(c.Edges, Edge{Caller: 2, Callee: 7, Site: 5, Calls: 77})
	return []*Profile{shuffled(a, r), shuffled(b, r), shuffled(c, r)}
}

func mustMerge(t *testing.T, ps ...*Profile) *Profile {
	t.Helper()
	m, warnings, err := Merge(ps...)
	if err != nil || warnings != nil {
		t.Fatalf("Merge: %v, warnings %q", err, warnings)
	}
	return m
}

// groupings merges ps in every order and in every grouping of three and
// checks all results are equal.
func checkOrderFree(t *testing.T, ps []*Profile) *Profile {
	t.Helper()
	want := mustMerge(t, ps...)
	perms := [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, o := range perms {
		x, y, z := ps[o[0]], ps[o[1]], ps[o[2]]
		for name, got := range map[string]*Profile{
			"(x y z)":   mustMerge(t, x, y, z),
			"((x y) z)": mustMerge(t, mustMerge(t, x, y), z),
			"(x (y z))": mustMerge(t, x, mustMerge(t, y, z)),
		} {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("merge %s with order %v differs from merge in input order:\n got %+v\nwant %+v", name, o, got, want)
			}
		}
	}
	if again := mustMerge(t, want); !reflect.DeepEqual(again, want) {
		t.Fatalf("merging a merged profile alone changes it")
	}
	return want
}

// stackWeights sums each sampled stack's weights by what it shows (its
// frames and the objects and file offsets of its addresses), so profiles
// with different indexes and addresses compare.
func stackWeights(p *Profile) map[string][2]int64 {
	m := map[string][2]int64{}
	for _, s := range p.Samples {
		var b strings.Builder
		for _, l := range s.Stack {
			loc := p.Locations[l]
			if loc.Mapping >= 0 {
				mp := p.Mappings[loc.Mapping]
				object := mp.BuildID
				if object == "" {
					object = mp.Path
				}
				fmt.Fprintf(&b, "[%s %#x]", object, loc.Address-mp.Start+mp.Offset)
			}
			fmt.Fprint(&b, p.frames([]int{l}), ";")
		}
		w := m[b.String()]
		m[b.String()] = [2]int64{w[0] + s.Samples, w[1] + s.TimeNS}
	}
	return m
}

func TestMergeMachines(t *testing.T) {
	ps := machines()
	m := checkOrderFree(t, ps)
	if err := m.Validate(); err != nil {
		t.Fatalf("merged profile invalid: %v", err)
	}

	// Objects line up by build-id across paths and addresses, by path
	// without one.
	if len(m.Mappings) != 3 {
		t.Fatalf("%d mappings, want 3 (program, libc, libz): %+v", len(m.Mappings), m.Mappings)
	}
	for _, mp := range m.Mappings {
		switch mp.BuildID {
		case "c0ffee12345678aa":
			if mp.Path != "/lib/x86_64-linux-gnu/libc.so.6" || mp.Start != 0x7f0000000000 || mp.Limit-mp.Start != 0x100000 || mp.Offset != 0x28000 {
				t.Errorf("libc merged as %+v; want the first path in sort order, the lowest start, its size and offset", mp)
			}
		case "4f2a9c0e77d1b3a5":
			if mp.Path != "/usr/bin/app" || mp.Start != 0x400000 {
				t.Errorf("program merged as %+v", mp)
			}
		case "":
			if mp.Path != "/opt/lib/libz.so.1" {
				t.Errorf("mapping without build-id merged as %+v", mp)
			}
		default:
			t.Errorf("unexpected mapping %+v", mp)
		}
	}
	// The same code is one location and one function, whatever machine
	// it was recorded on.
	if want := len(synthetic().Locations) + 1; len(m.Locations) != want {
		t.Errorf("%d locations, want %d", len(m.Locations), want)
	}
	if want := len(synthetic().Functions) + 1; len(m.Functions) != want {
		t.Errorf("%d functions, want %d", len(m.Functions), want)
	}

	// Weights add up per stack and per edge.
	wantStacks, wantEdges := map[string][2]int64{}, map[pair]int64{}
	for _, p := range ps {
		for k, w := range stackWeights(p) {
			s := wantStacks[k]
			wantStacks[k] = [2]int64{s[0] + w[0], s[1] + w[1]}
		}
		for k, w := range wantEdgePairs(p) {
			wantEdges[k] += w
		}
	}
	if got := stackWeights(m); !maps.Equal(got, wantStacks) {
		t.Errorf("merged stack weights\n got %v\nwant %v", got, wantStacks)
	}
	if got := wantEdgePairs(m); !maps.Equal(got, wantEdges) {
		t.Errorf("merged edge weights\n got %v\nwant %v", got, wantEdges)
	}

	// Header: comments once each, sorted; periods disagree; earliest start.
	if len(m.Comments) != len(synthetic().Comments)+2 || m.PeriodNS != 0 || m.StartNS != synthetic().StartNS-5 || m.DurationNS != 3*synthetic().DurationNS {
		t.Errorf("header: comments %q period %d start %d duration %d", m.Comments, m.PeriodNS, m.StartNS, m.DurationNS)
	}

	// The merged profile writes, and pprof reads it.
	if pp := roundTrip(t, m, Options{}); len(pp.Mapping) != 3 {
		t.Errorf("written merged profile has %d mappings", len(pp.Mapping))
	}
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

// TestMergeOrderFree: for random profiles, any order and grouping of a
// merge gives the same profile, and the totals are kept.
func TestMergeOrderFree(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		ps := []*Profile{randomProfile(r, 12), randomProfile(r, 12), randomProfile(r, 12)}
		m := checkOrderFree(t, ps)
		var want, got [3]int64
		for _, p := range append(ps, m) {
			tot := &want
			if p == m {
				tot = &got
			}
			for _, s := range p.Samples {
				tot[0] += s.Samples
				tot[1] += s.TimeNS
			}
			for _, e := range p.Edges {
				tot[2] += e.Calls
			}
		}
		if got != want {
			t.Fatalf("seed %d: merged totals %v, want %v", seed, got, want)
		}
		if err := Write(new(bytes.Buffer), m, Options{}); err != nil {
			t.Fatalf("seed %d: write merged: %v", seed, err)
		}
	}
}

func TestMergeRefusals(t *testing.T) {
	if _, _, err := Merge(); err == nil {
		t.Errorf("Merge of nothing accepted")
	}
	timeOnly := synthetic()
	timeOnly.HasCalls = false
	if _, _, err := Merge(synthetic(), timeOnly); err == nil || !strings.Contains(err.Error(), "profile 1 has time and no call counts") {
		t.Errorf("Merge of a time profile with a call-count profile: %v", err)
	}
	in := synthetic()
	before := synthetic()
	mustMerge(t, in, shuffled(synthetic(), rand.New(rand.NewPCG(3, 4))))
	if !reflect.DeepEqual(in, before) {
		t.Errorf("Merge changed its input")
	}
}
