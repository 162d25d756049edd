package profile

import (
	"maps"
	"slices"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
)

// stacksProfile is a sampled profile of whole stacks, innermost frame
// first, named by function; every call site is the caller's own (one
// site per caller: offset 0x100 + the caller's index in callers).
var callers = []string{"main", "a"}

func stacksProfile(stacks map[string][]string, weights map[string]uint64) *Profile {
	p := &Profile{Map: ccmap.New(), Sites: map[ccmap.CallSite]Site{}}
	for _, name := range sortedKeys(stacks) {
		var frames []ccmap.Frame
		for i, fn := range stacks[name] {
			f := ccmap.Frame{Func: p.id(nil, fn)}
			if i > 0 {
				f.Site = 0x100 + uint64(slices.Index(callers, fn))
				p.Sites[ccmap.CallSite{Caller: f.Func, Addr: f.Site}] = Site{Object: "app", Offset: f.Site}
			}
			frames = append(frames, f)
		}
		p.Map.AddStack(frames, weights[name])
	}
	return p
}

func sortedKeys(m map[string][]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// dcgByName is a DCG's weights by "caller->callee".
func dcgByName(p *Profile, g ccmap.DCG) map[string]uint64 {
	out := map[string]uint64{}
	for _, e := range g.Edges {
		out[p.FuncName(e.Site.Caller)+"->"+p.FuncName(e.Callee)] += e.Weight
	}
	return out
}

// TestTopEdgeDCG: the timer DCG of the counter-based sampling paper takes
// at each sample the edge into the running function, weighted by the
// period; a sample in the root has none; recursion gives the recursive
// edge once. Adjacent frames weigh every edge of a stack, so main->a
// carries the time of everything below it.
func TestTopEdgeDCG(t *testing.T) {
	p := stacksProfile(map[string][]string{
		"in b":      {"b", "a", "main"},
		"in a":      {"a", "main"},
		"in main":   {"main"},
		"recursion": {"a", "a", "a", "main"},
		"in c":      {"c", "a", "main"},
	}, map[string]uint64{"in b": 10, "in a": 5, "in main": 3, "recursion": 2, "in c": 1})

	if p.DCGKind() != TopEdges {
		t.Errorf("a sampled profile's DCG kind is %v, want %v", p.DCGKind(), TopEdges)
	}
	top := p.DCG(TopEdges)
	if want := map[string]uint64{"a->b": 10, "main->a": 5, "a->a": 2, "a->c": 1}; !maps.Equal(dcgByName(p, top), want) {
		t.Errorf("top edges %v, want %v", dcgByName(p, top), want)
	}
	if top.Total != 18 { // all but the 3 of main alone
		t.Errorf("top-edge total %d, want 18", top.Total)
	}
	adj := p.DCG(AdjacentFrames)
	if want := map[string]uint64{"main->a": 18, "a->b": 10, "a->a": 2, "a->c": 1}; !maps.Equal(dcgByName(p, adj), want) {
		t.Errorf("adjacent-frame edges %v, want %v", dcgByName(p, adj), want)
	}

	// Against call counts of the same shape (each function's calls in
	// proportion to its self time), the top edges agree and the adjacent
	// frames do not.
	exact := callsProfile(0, nil,
		edge{"a", "b", "app", 0x101, 10}, edge{"main", "a", "app", 0x100, 5},
		edge{"a", "a", "app", 0x101, 2}, edge{"a", "c", "app", 0x101, 1})
	a := AlignKindsTo([]*Profile{exact, p, p}, []DCGKind{CallCounts, TopEdges, AdjacentFrames}, nil)
	if a.Kinds[0] != exact.DCGKind() || a.Kinds[0] != CallCounts {
		t.Errorf("kinds %v", a.Kinds)
	}
	if o := a.Agreement(1).Overlap; o < 0.999 {
		t.Errorf("top-edge overlap with the calls %.3f, want 1", o)
	}
	// adjacent: main->a 18/31 vs 5/18, a->b 10/31 vs 10/18, a->a 2/31, a->c 1/31
	want := 5.0/18 + 10.0/31 + 2.0/31 + 1.0/31
	if o := a.Agreement(2).Overlap; o < want-1e-9 || o > want+1e-9 {
		t.Errorf("adjacent-frame overlap %.4f, want %.4f", o, want)
	}
	if got := []DCGKind{exact.DCGKind(), p.DCGKind()}; got[0] != CallCounts || got[1] != TopEdges {
		t.Errorf("kinds %v, want the papers' (call counts, top edges)", got)
	}
}
