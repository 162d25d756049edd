package profile

import (
	"reflect"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
)

// TestMergeLeaves checks that merged profiles keep their leaf chains
// (Profile.Leaves): the chains of one address add up, a profile without
// chains for a function adds its self weight as a chain of the
// function's own code, and any order or grouping gives the same chains,
// which sum to each function's self weight.
func TestMergeLeaves(t *testing.T) {
	mk := func(outerSelf uint64, leaves []LeafChain) *Profile {
		m := ccmap.New()
		m.AddStack([]ccmap.Frame{{Func: 1}, {Func: 0, Site: 0x1010}}, outerSelf)
		p := &Profile{Map: m, Funcs: []Func{
			{Name: "main", Object: "/bin/app", Start: 0x1000},
			{Name: "outer", Object: "/bin/app", Start: 0x2000},
		}}
		if leaves != nil {
			p.Leaves = map[ccmap.FuncID][]LeafChain{1: leaves}
		}
		return p
	}
	mix := []SourceFrame{{Name: "mix", File: "m.c", Line: 5}, {Name: "outer", File: "m.c", Line: 12}}
	a := mk(10, []LeafChain{{Addr: 0x2040, Frames: mix, Self: 7}, {Addr: 0x2080, Self: 3}})
	b := mk(5, nil)
	c := mk(4, []LeafChain{{Addr: 0x2040, Frames: mix, Self: 4}})
	merge := func(ps ...*Profile) *Profile {
		p, err := Merge(ps...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := merge(a, b, c)
	var outer ccmap.FuncID
	for i, f := range want.Funcs {
		if f.Name == "outer" {
			outer = ccmap.FuncID(i)
		}
	}
	chains := want.Leaves[outer]
	wantChains := []LeafChain{{Addr: 0x2040, Frames: mix, Self: 11}, {Addr: 0x2000, Self: 5}, {Addr: 0x2080, Self: 3}}
	if !reflect.DeepEqual(chains, wantChains) {
		t.Errorf("merged chains %+v, want %+v", chains, wantChains)
	}
	for _, got := range []*Profile{merge(c, b, a), merge(merge(a, b), c), merge(a, merge(b, c)), merge(merge(c, a), b)} {
		if !reflect.DeepEqual(got.Leaves, want.Leaves) {
			t.Errorf("merged chains depend on the order or grouping: %+v, want %+v", got.Leaves, want.Leaves)
		}
	}
	if got := merge(b, b).Leaves; got != nil {
		t.Errorf("profiles without chains merge to chains %+v", got)
	}
}
