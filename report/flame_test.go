package report

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report/flamegraph"
)

// sums adds up the stacks' time and calls.
func sums(stacks []flamegraph.Stack) (time, calls float64) {
	for _, s := range stacks {
		time += s.Time
		calls += s.Calls
	}
	return time, calls
}

// checkFlameTotals checks that p's stacks add up to its map's totals,
// and that folded stacks of both weights parse back to the same totals.
func checkFlameTotals(t *testing.T, p *profile.Profile) []flamegraph.Stack {
	t.Helper()
	tot := p.Map.Totals()
	meta, stacks := FlameStacks(p)
	time, calls := sums(stacks)
	if time != float64(tot.Samples) || calls != float64(tot.Calls) {
		t.Errorf("stacks sum to time %v, calls %v; the map's totals are %d, %d", time, calls, tot.Samples, tot.Calls)
	}
	if meta.HasTime != (tot.Samples > 0) || meta.Source != p.Recording.Source.String() || meta.Samples != p.Recording.Samples {
		t.Errorf("meta %+v for totals %+v", meta, tot)
	}
	for _, s := range stacks {
		if len(s.Frames) == 0 {
			t.Fatalf("a stack without frames: %+v", s)
		}
		for _, f := range s.Frames {
			if f.Name == "" {
				t.Fatalf("a frame without a name in %+v", s)
			}
		}
	}
	for _, w := range []flamegraph.Weight{flamegraph.WeightTime, flamegraph.WeightCalls} {
		var b bytes.Buffer
		if err := Folded(&b, p, w); err != nil {
			t.Fatal(err)
		}
		back, err := flamegraph.ParseFolded(&b, FlameWeight(p, w))
		if err != nil {
			t.Fatal(err)
		}
		bt, bc := sums(back)
		want, got := float64(tot.Samples), bt
		if FlameWeight(p, w) == flamegraph.WeightCalls {
			want, got = float64(tot.Calls), bc
		}
		// WriteFolded rounds each line's weight to an integer; the
		// weights here are integers already
		if got != want {
			t.Errorf("folded by %v parses back to %v, want %v", FlameWeight(p, w), got, want)
		}
	}
	var page bytes.Buffer
	if err := Flamegraph(&page, p, flamegraph.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<html") || !strings.Contains(page.String(), "hwprof-ready") {
		t.Errorf("the page is not a flame-graph page (%d bytes)", page.Len())
	}
	return stacks
}

// A hand-built profile: stacks in two contexts, calls in a context
// (exact) and without one (lbr), and a pruned subtree.
func TestFlameStacks(t *testing.T) {
	p := &profile.Profile{Map: ccmap.New(), HasCalls: true, Funcs: []profile.Func{
		{Name: "main", Object: "/usr/bin/app"},
		{Name: "work", Object: "/usr/bin/app"},
		{Name: "memcpy", Object: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{Name: "do_syscall_64", Object: "[kernel.kallsyms]"},
		{Name: "[broken]"},
		{Name: "jitted", Object: "/tmp/perf-42.map"},
	}, Recording: profile.Recording{Source: profile.Mixed, Samples: 9, Command: []string{"app", "-x"}}}
	m := p.Map
	m.AddStack([]ccmap.Frame{{Func: 2}, {Func: 1, Site: 0x20}, {Func: 0, Site: 0x10}}, 500) // main > work > memcpy
	m.AddStack([]ccmap.Frame{{Func: 1}, {Func: 0, Site: 0x10}}, 300)                        // main > work
	m.AddStack([]ccmap.Frame{{Func: 3}, {Func: 4, Site: 0x1}}, 100)                         // [broken] > kernel
	m.AddStack([]ccmap.Frame{{Func: 5}, {Func: 0, Site: 0x30}}, 7)                          // main > jitted
	m.AddEdgeInContext([]ccmap.Frame{{Func: 0, Site: 0x10}}, ccmap.CallSite{Caller: 0, Addr: 0x10}, 1, 40)
	m.AddEdge(ccmap.CallSite{Caller: 1, Addr: 0x20}, 2, 60)
	m.AddEdge(ccmap.CallSite{Caller: 0, Addr: 0x10}, 1, 5) // an edge with context calls too
	stacks := checkFlameTotals(t, p)
	find := func(path string) *flamegraph.Stack {
		for i, s := range stacks {
			var names []string
			for _, f := range s.Frames {
				names = append(names, f.Name)
			}
			if strings.Join(names, ">") == path {
				return &stacks[i]
			}
		}
		t.Fatalf("no stack %s in %+v", path, stacks)
		return nil
	}
	if s := find("main>work>memcpy"); s.Time != 500 || s.Calls != 0 {
		t.Errorf("main>work>memcpy: %+v", s)
	}
	if s := find("main>work"); s.Time != 300 || s.Calls != 40 {
		t.Errorf("main>work: %+v", s)
	}
	// the context-less calls: 60 of work -> memcpy, and 5 of main -> work
	// beside the 40 with a context
	if s := find("work>memcpy"); s.Time != 0 || s.Calls != 60 {
		t.Errorf("work>memcpy: %+v", s)
	}
	if s := find("main>work"); s == nil {
		t.Fatal("main>work missing")
	}
	var edge5 bool
	for _, s := range stacks {
		if len(s.Frames) == 2 && s.Frames[0].Name == "main" && s.Frames[1].Name == "work" && s.Time == 0 && s.Calls == 5 {
			edge5 = true
		}
	}
	if !edge5 {
		t.Errorf("no main>work stack of the 5 calls without a context: %+v", stacks)
	}
	s := find("[broken]>do_syscall_64")
	if s.Frames[0].Kind != flamegraph.Broken || s.Frames[1].Kind != flamegraph.Kernel {
		t.Errorf("kinds %v, %v; want broken, kernel", s.Frames[0].Kind, s.Frames[1].Kind)
	}
	s = find("main>work>memcpy")
	if s.Frames[0].Kind != flamegraph.Program || s.Frames[2].Kind != flamegraph.Library || s.Frames[2].Object != p.Funcs[2].Object {
		t.Errorf("frames %+v", s.Frames)
	}
	if s := find("main>jitted"); s.Frames[1].Kind != flamegraph.JIT {
		t.Errorf("jitted: %v", s.Frames[1].Kind)
	}
	meta, _ := FlameStacks(p)
	if meta.Command != "app -x" || meta.Source != "mixed" || !meta.HasCalls || !meta.HasTime {
		t.Errorf("meta %+v", meta)
	}

	// pruning keeps the totals: the removed contexts are [pruned] frames
	m.Prune(0.5)
	stacks = checkFlameTotals(t, p)
	pruned := false
	for _, s := range stacks {
		pruned = pruned || s.Frames[len(s.Frames)-1].Name == "[pruned]"
	}
	if !pruned {
		t.Errorf("no [pruned] frame after Prune: %+v", stacks)
	}
}

func TestFrameKind(t *testing.T) {
	for _, tc := range []struct {
		name, obj string
		want      flamegraph.Kind
	}{
		{"main", "/usr/bin/app", flamegraph.Program},
		{"main", "/home/u/a.out", flamegraph.Program},
		{"memcpy", "/lib/x86_64-linux-gnu/libc.so.6", flamegraph.Library},
		{"f", "/opt/x/libfoo.so", flamegraph.Library},
		{"__vdso_clock_gettime", "[vdso]", flamegraph.Library},
		{"schedule", "[kernel.kallsyms]", flamegraph.Kernel},
		{"e1000_xmit", "/lib/modules/6.1/kernel/e1000.ko", flamegraph.Kernel},
		{"e1000_xmit", "/lib/modules/6.1/kernel/e1000.ko.xz", flamegraph.Kernel},
		{"Interpreter", "/tmp/perf-1234.map", flamegraph.JIT},
		{"[anon]", "//anon", flamegraph.JIT},
		{"[unknown]", "", flamegraph.Unknown},
		{"[broken]", "", flamegraph.Broken},
		{"[truncated]", "/usr/bin/app", flamegraph.Broken},
		{"x", "[uprobes]", flamegraph.Unknown},
	} {
		if got := frameKind(tc.name, tc.obj); got != tc.want {
			t.Errorf("frameKind(%q, %q) = %v, want %v", tc.name, tc.obj, got, tc.want)
		}
	}
}

// Every fixture recording: its stacks add up to the profile's weights,
// and its folded stacks parse back to the same totals.
func TestFlameFixtures(t *testing.T) {
	fx := fixtures.Dir(t)
	f, err := os.Open(filepath.Join(fx, "EXPECTED.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	empty := t.TempDir()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		name, _, _ := strings.Cut(sc.Text(), "\t")
		if name == "" || name == "file" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			p, err := engine.Load(filepath.Join(fx, name), engine.LoadOptions{SymFS: empty, Seed: 1})
			if p == nil {
				t.Fatalf("load: %v", err)
			}
			checkFlameTotals(t, p)
			n++
		})
	}
	if n == 0 {
		t.Fatal("no fixture loaded")
	}
}
