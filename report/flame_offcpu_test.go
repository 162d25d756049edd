package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report/flamegraph"
)

// offCPUFlameProfile is a hand-built profile of a recording with time
// off the CPU: on-CPU samples of a clock event in main > work and
// main > work > memcpy, waits in main > wait > schedule, a preemption in
// main > work and an interval without a stack.
func offCPUFlameProfile() *profile.Profile {
	p := &profile.Profile{Map: ccmap.New(), OffCPU: ccmap.New(), Funcs: []profile.Func{
		{Name: "main", Object: "/usr/bin/app"},
		{Name: "work", Object: "/usr/bin/app"},
		{Name: "memcpy", Object: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{Name: "wait", Object: "/usr/bin/app"},
		{Name: "schedule", Object: "[kernel.kallsyms]"},
		{Name: profile.Preempted},
		{Name: profile.NoOffCPUStack},
	}, Recording: profile.Recording{Source: profile.Timer, Samples: 4, OffCPU: profile.OffCPUStats{Recorded: true, OnCPUTime: true}}}
	p.Map.AddStack([]ccmap.Frame{{Func: 2}, {Func: 1, Site: 0x20}, {Func: 0, Site: 0x10}}, 3_000_000) // main > work > memcpy
	p.Map.AddStack([]ccmap.Frame{{Func: 1}, {Func: 0, Site: 0x10}}, 1_000_000)                        // main > work
	p.OffCPU.AddStack([]ccmap.Frame{{Func: 4}, {Func: 3, Site: 0x40}, {Func: 0, Site: 0x30}}, 700_000_001)
	p.OffCPU.AddStack([]ccmap.Frame{{Func: 4}, {Func: 3, Site: 0x40}, {Func: 0, Site: 0x30}}, 300_000_002)
	p.OffCPU.AddStack([]ccmap.Frame{{Func: 5}, {Func: 1, Site: 0x20}, {Func: 0, Site: 0x10}}, 20_000_003)
	p.OffCPU.AddStack([]ccmap.Frame{{Func: 6}}, 5_000_004)
	return p
}

// TestFlameStacksOffCPU: the stacks carry the off-CPU map's time beside
// the samples, whole; a profile Weighted made carries its measure as time
// and no more off-CPU time.
func TestFlameStacksOffCPU(t *testing.T) {
	p := offCPUFlameProfile()
	meta, stacks := FlameStacks(p)
	if !meta.HasOffCPU || !meta.HasWall || !meta.HasTime {
		t.Errorf("meta %+v: want time, off-CPU and wall", meta)
	}
	var time, off float64
	byPath := map[string]flamegraph.Stack{}
	for _, s := range stacks {
		time += s.Time
		off += s.OffCPU
		var names []string
		for _, f := range s.Frames {
			names = append(names, f.Name)
		}
		k := strings.Join(names, ">")
		b := byPath[k]
		b.Time += s.Time
		b.OffCPU += s.OffCPU
		byPath[k] = b
	}
	if time != float64(p.Map.Totals().Samples) || off != float64(p.OffCPU.Totals().Samples) {
		t.Errorf("stacks sum to %v on and %v off the CPU; the maps have %d and %d", time, off, p.Map.Totals().Samples, p.OffCPU.Totals().Samples)
	}
	for path, want := range map[string][2]float64{
		"main>work>memcpy":      {3_000_000, 0},
		"main>work":             {1_000_000, 0},
		"main>wait>schedule":    {0, 1_000_000_003},
		"main>work>[preempted]": {0, 20_000_003},
		"[off-CPU, no stack]":   {0, 5_000_004},
	} {
		if s := byPath[path]; s.Time != want[0] || s.OffCPU != want[1] {
			t.Errorf("%s: time %v, off-CPU %v; want %v", path, s.Time, s.OffCPU, want)
		}
	}

	// Wall time needs on-CPU samples of a clock event.
	p.Recording.OffCPU.OnCPUTime = false
	if meta, _ := FlameStacks(p); !meta.HasOffCPU || meta.HasWall {
		t.Errorf("samples not of a clock event: meta %+v, want off-CPU without wall", meta)
	}
	if w := FlameWeight(p, flamegraph.WeightWall); w != flamegraph.WeightTime {
		t.Errorf("FlameWeight(wall) without wall time: %v", w)
	}
	p.Recording.OffCPU.OnCPUTime = true
	for _, m := range []profile.Measure{profile.OffCPUTime, profile.WallTime} {
		q, err := Weighted(p, m)
		if err != nil {
			t.Fatal(err)
		}
		meta, stacks := FlameStacks(q)
		var off float64
		for _, s := range stacks {
			off += s.OffCPU
		}
		if meta.HasOffCPU || off != 0 {
			t.Errorf("a profile weighted by measure %d: HasOffCPU %v, off-CPU %v; want none", m, meta.HasOffCPU, off)
		}
	}
}

// TestFoldedOffCPUMatchesWeighted: folded stacks of the whole profile by
// off-CPU or wall time are those of the profile Weighted by that measure
// (what report --format folded --weight off-cpu|wall writes) line for
// line: the page's per-stack sum and ccmap's merge of the two maps agree.
func TestFoldedOffCPUMatchesWeighted(t *testing.T) {
	p := offCPUFlameProfile()
	for _, tc := range []struct {
		m profile.Measure
		w flamegraph.Weight
	}{{profile.OffCPUTime, flamegraph.WeightOffCPU}, {profile.WallTime, flamegraph.WeightWall}} {
		if got := MeasureWeight(tc.m, flamegraph.WeightCalls); got != tc.w {
			t.Errorf("MeasureWeight(%d): %v, want %v", tc.m, got, tc.w)
		}
		if got := FlameWeight(p, tc.w); got != tc.w {
			t.Errorf("FlameWeight(%v): %v", tc.w, got)
		}
		var whole, weighted bytes.Buffer
		if err := Folded(&whole, p, tc.w); err != nil {
			t.Fatal(err)
		}
		q, err := Weighted(p, tc.m)
		if err != nil {
			t.Fatal(err)
		}
		if err := Folded(&weighted, q, flamegraph.WeightTime); err != nil {
			t.Fatal(err)
		}
		if whole.String() != weighted.String() || whole.Len() == 0 {
			t.Errorf("%v: folded stacks of the whole profile\n%s\nweighted\n%s", tc.w, whole.String(), weighted.String())
		}
		var page bytes.Buffer
		if err := Flamegraph(&page, p, flamegraph.Options{Weight: tc.w}); err != nil {
			t.Fatal(err)
		}
		if want := `"weight":"` + tc.w.String() + `"`; !strings.Contains(page.String(), want) {
			t.Errorf("page of %v does not open on it (%s)", tc.w, want)
		}
	}
	if got := MeasureWeight(profile.Sampled, flamegraph.WeightCalls); got != flamegraph.WeightCalls {
		t.Errorf("MeasureWeight(sampled, calls): %v", got)
	}
}
