package flamegraph

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Unknown: "unknown", Program: "program", Library: "library", Kernel: "kernel",
		JIT: "jit", Broken: "broken", Kind(42): "kind(42)"} {
		if k.String() != want {
			t.Errorf("%d: %q, want %q", k, k.String(), want)
		}
	}
	for w, want := range map[Weight]string{WeightTime: "time", WeightCalls: "calls", WeightSamples: "samples", Weight(7): "weight(7)"} {
		if w.String() != want {
			t.Errorf("%d: %q, want %q", w, w.String(), want)
		}
	}
}

// TestPageSelfContained: nothing in the page refers to anything outside it.
func TestPageSelfContained(t *testing.T) {
	meta, stacks := serverProfile()
	meta.Title = `</script><script>alert("x")</script> & <b>`
	html := string(render(t, meta, stacks, Options{}))
	for _, re := range []string{`(?i)\bsrc\s*=`, `(?i)<link\b`, `(?i)\bhref\s*=`, `(?i)url\(`, `(?i)@import`, `(?i)https?:`, `(?i)//[a-z0-9.-]+\.[a-z]{2,}/`,
		`(?i)\bfetch\(`, `(?i)XMLHttpRequest`, `(?i)@font-face`} {
		if m := regexp.MustCompile(re).FindString(html); m != "" {
			t.Errorf("page contains %q (%s)", m, re)
		}
	}
	if n := strings.Count(strings.ToLower(html), "</script>"); n != 2 {
		t.Errorf("%d </script> in the page, want 2 (the title must be escaped)", n)
	}
	if !strings.Contains(html, "&lt;/script&gt;&lt;script&gt;") {
		t.Error("title not HTML-escaped in <title>")
	}
}

// TestFlattenConserves: merging narrow siblings keeps every weight; the
// merged frames are counted.
func TestFlattenConserves(t *testing.T) {
	meta, stacks := wideProfile()
	tr := newTree()
	tr.add(0, stacks)
	f := tr.flatten([]int{wTime, wCalls}, DefaultMinShare, false)
	var sum [numW]float64
	for _, s := range stacks {
		sum[wTime] += s.Time
		sum[wSamples] += float64(s.Samples)
		sum[wCalls] += s.Calls
	}
	for w := range numW {
		got := 0.0
		for _, v := range f.self[0][w] {
			got += v
		}
		if math.Abs(got-sum[w]) > 1e-9*sum[w] {
			t.Errorf("weight %d: %g after flattening, want %g", w, got, sum[w])
		}
	}
	ref := buildRef(stacks, shownOf(meta), DefaultMinShare)
	kept, merged := ref.children(ref.byPath["main;dispatch"])
	if len(merged) == 0 || len(kept) == 0 {
		t.Fatalf("wide profile: %d kept, %d narrow: the test needs both", len(kept), len(merged))
	}
	want := 3 + len(kept) + 1 // all, main, dispatch, the kept handlers, one narrow frame
	if len(f.fn) != want {
		t.Errorf("%d nodes after flattening, want %d", len(f.fn), want)
	}
	last := f.funcs[f.fn[len(f.fn)-1]]
	if wantName := "[" + strconv.Itoa(len(merged)) + " narrow frames]"; last.Name != wantName || last.Kind != kindNarrow {
		t.Errorf("last node %+v, want %q", last, wantName)
	}
	// A negative MinShare merges nothing.
	if f := tr.flatten([]int{wTime}, -1, false); len(f.fn) != 3+3000 {
		t.Errorf("MinShare -1: %d nodes, want %d", len(f.fn), 3+3000)
	}
}

// TestLargePageSize: 50,000 distinct stacks and a million samples stay
// within a few MB.
func TestLargePageSize(t *testing.T) {
	l, err := largePage()
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	if err := WriteHTML(&all, l.meta, l.stacks, Options{MinShare: -1}); err != nil {
		t.Fatal(err)
	}
	t.Logf("50,000 stacks, 1M samples: %d bytes; %d bytes with no frame merged", len(l.html), all.Len())
	if len(l.html) > 4<<20 {
		t.Errorf("page is %d bytes, more than 4 MB", len(l.html))
	}
}

func TestTimeUnit(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{0, 500000, 750000, 250000}, 250000},
		{[]float64{3, 0}, 3},
		{[]float64{1.5, 3}, 1},
		{[]float64{0}, 1},
		{[]float64{-4, 8}, 1},
	} {
		if got := timeUnit(tc.in); got != tc.want {
			t.Errorf("timeUnit(%v) = %g, want %g", tc.in, got, tc.want)
		}
	}
}

func TestDiffTable(t *testing.T) {
	f := func(names ...string) []Frame { return prog(names...) }
	base := []Stack{
		{Frames: f("main", "a"), Time: 50},
		{Frames: f("main", "b"), Time: 50},
	}
	// b grows from 50% to 75% of the whole; recursion in b counts once in
	// its total.
	next := []Stack{
		{Frames: f("main", "a"), Time: 100},
		{Frames: f("main", "b", "b"), Time: 200},
		{Frames: f("main", "b", "c"), Time: 100},
	}
	got := DiffTable(base, next, WeightTime)
	type row struct {
		name                string
		bs, ns, bt, nt, mag float64
	}
	want := []row{
		{"a", 0.5, 0.25, 0.5, 0.25, 0.25},
		{"b", 0.5, 0.5, 0.5, 0.75, 0.25},
		{"c", 0, 0.25, 0, 0.25, 0.25},
		{"main", 0, 0, 1, 1, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows: %+v", len(got), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.BaseSelf != w.bs || g.NewSelf != w.ns || g.BaseTotal != w.bt || g.NewTotal != w.nt ||
			max(math.Abs(g.DeltaSelf()), math.Abs(g.DeltaTotal())) != w.mag {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	if rows := DiffTable(nil, nil, WeightCalls); len(rows) != 0 {
		t.Errorf("empty profiles: %v", rows)
	}
}
