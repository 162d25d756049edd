package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const app, libstd = "/opt/app/bin/app", "/usr/lib/libstdc++.so.6"

// Function ids of the hand-built profiles.
const (
	fMain ccmap.FuncID = iota
	fA
	fB
	fLeaf
	fUnknown
	fPush
)

var funcs = []profile.Func{
	fMain:    {Name: "main", Object: app},
	fA:       {Name: "A", Object: app, Start: 0x1008},
	fB:       {Name: "B", Object: app},
	fLeaf:    {Name: "leaf", Object: app},
	fUnknown: {Name: "[unknown]"},
	fPush:    {Name: "std::vector<int>::push_back", Object: libstd},
}

var sites = map[ccmap.CallSite]profile.Site{
	{Caller: fMain, Addr: 0x1000}: {Object: app, Offset: 0x1000, File: "/src/app/app.c", Line: 10},
	{Caller: fMain, Addr: 0x1004}: {Object: app, Offset: 0x1004, File: "/src/app/app.c", Line: 11},
	{Caller: fA, Addr: 0x1010}:    {Object: app, Offset: 0x1010, File: "/src/app/a.c", Line: 20},
	{Caller: fA, Addr: 0x1020}:    {Object: app, Offset: 0x1020}, // no debug information
	// main@0x1008 (the call into push_back) is left out: not described.
}

type stack struct {
	frames []ccmap.Frame
	weight uint64
}

// timerStacks: recursion (A calls A), a tie of 200 between two stacks,
// a call site the profile does not describe, an unknown root.
var timerStacks = []stack{
	{[]ccmap.Frame{{Func: fB}, {Func: fA, Site: 0x1010}, {Func: fMain, Site: 0x1000}}, 300000},
	{[]ccmap.Frame{{Func: fB}, {Func: fA, Site: 0x1010}, {Func: fA, Site: 0x1020}, {Func: fMain, Site: 0x1000}}, 200000},
	{[]ccmap.Frame{{Func: fLeaf}, {Func: fMain, Site: 0x1004}}, 200000},
	{[]ccmap.Frame{{Func: fMain}}, 100000},
	{[]ccmap.Frame{{Func: fPush}, {Func: fMain, Site: 0x1008}}, 100000},
	{[]ccmap.Frame{{Func: fUnknown}}, 100000},
}

func timerProfile(order []int) *profile.Profile {
	m := ccmap.New()
	for _, i := range order {
		m.AddStack(timerStacks[i].frames, timerStacks[i].weight)
	}
	return &profile.Profile{
		Map: m, Funcs: funcs, Sites: sites,
		Recording: profile.Recording{
			File: "hwprof.data", Command: []string{"./app", "x"}, Source: profile.Timer,
			Events:  []profile.Event{{Name: "cpu-clock", Period: 100000}},
			Samples: 10, Lost: 2, Throttled: 1, DurationNS: 1_500_000_000,
			Periods: []profile.PeriodChange{
				{TimeNS: 0, Event: "cpu-clock", Period: 100000},
				{TimeNS: 500_000_000, Event: "cpu-clock", Period: 200000},
			},
			// the task at the new period, two threads that existed at
			// the change at the old
			ThreadPeriods: []profile.ThreadPeriod{
				{Event: "cpu-clock", TID: 10, Period: 200000},
				{Event: "cpu-clock", TID: 11, Period: 100000},
				{Event: "cpu-clock", TID: 12, Period: 100000},
			},
		},
	}
}

// exactProfile counts calls in context: A→B in two contexts, a tie
// between main→leaf and A→B (1050 calls each), an edge without a context,
// and one sampled stack (samples and calls together).
func exactProfile() *profile.Profile {
	p := exactCallsProfile()
	p.Map.AddStack([]ccmap.Frame{{Func: fB}, {Func: fA, Site: 0x1010}, {Func: fMain, Site: 0x1000}}, 1)
	return p
}

// exactCallsProfile is exactProfile without the sampled stack: calls
// alone, as the exact source records them.
func exactCallsProfile() *profile.Profile {
	m := ccmap.New()
	main := []ccmap.Frame{{Func: fMain}}
	m.AddEdgeInContext(main, ccmap.CallSite{Caller: fMain, Addr: 0x1000}, fA, 10)
	aMain := []ccmap.Frame{{Func: fA, Site: 0x1010}, {Func: fMain, Site: 0x1000}}
	m.AddEdgeInContext(aMain, ccmap.CallSite{Caller: fA, Addr: 0x1010}, fB, 1000)
	m.AddEdgeInContext(aMain, ccmap.CallSite{Caller: fA, Addr: 0x1020}, fA, 5)
	aaMain := []ccmap.Frame{{Func: fA}, {Func: fA, Site: 0x1020}, {Func: fMain, Site: 0x1000}}
	m.AddEdgeInContext(aaMain, ccmap.CallSite{Caller: fA, Addr: 0x1010}, fB, 50)
	m.AddEdgeInContext(main, ccmap.CallSite{Caller: fMain, Addr: 0x1004}, fLeaf, 1050)
	m.AddEdge(ccmap.CallSite{Caller: fLeaf, Addr: 0x2000}, fPush, 7)
	return &profile.Profile{
		Map: m, Funcs: funcs, Sites: sites, HasCalls: true,
		Recording: profile.Recording{
			File: "exact.data", Source: profile.Exact,
			Events:  []profile.Event{{Name: "uprobes:A", Period: 1}, {Name: "uprobes:B", Period: 1}},
			Samples: 2122, DurationNS: 20_000_000,
			Periods: []profile.PeriodChange{{Event: "uprobes:A", Period: 1}, {Event: "uprobes:B", Period: 1}},
			Processes: []profile.Process{
				{PID: 4242, Comm: "app", Samples: 2000, Weight: 2000, Share: 2000.0 / 2122},
				{PID: 4250, Samples: 122, Weight: 122, Share: 122.0 / 2122},
			},
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output:\n%s", path, got)
	}
}

func output(t *testing.T, f func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *profile.Profile
		o    Options
	}{
		{"timer", timerProfile([]int{0, 1, 2, 3, 4, 5}), Options{}},
		{"timer-top2-contexts3", timerProfile([]int{0, 1, 2, 3, 4, 5}), Options{Top: 2, Contexts: 3}},
		{"exact", exactProfile(), Options{}},
		{"exact-calls", exactCallsProfile(), Options{}},
	} {
		golden(t, c.name+".txt", output(t, func(b *bytes.Buffer) error { return Text(b, c.p, c.o) }))
		golden(t, c.name+".json", output(t, func(b *bytes.Buffer) error { return JSON(b, c.p, c.o) }))
	}
}

func TestBadProfile(t *testing.T) {
	bad := timerProfile([]int{0})
	bad.Funcs = funcs[:2] // B has no name
	for _, p := range []*profile.Profile{nil, {}, bad} {
		for name, f := range map[string]func(*bytes.Buffer) error{
			"text": func(b *bytes.Buffer) error { return Text(b, p, Options{}) },
			"json": func(b *bytes.Buffer) error { return JSON(b, p, Options{}) },
		} {
			var b bytes.Buffer
			err := f(&b)
			if err == nil || !strings.HasPrefix(err.Error(), "report: ") {
				t.Errorf("%s of a bad profile: error %v", name, err)
			}
		}
	}
}

// TestTiesAtTheCut: of 2000 equally hot contexts, the first by name are
// shown, whatever their ids (names run opposite to ids here), listed
// apart (JSON) or merged by names (text).
func TestTiesAtTheCut(t *testing.T) {
	const n = 2000
	p := &profile.Profile{Map: ccmap.New(), Funcs: make([]profile.Func, n+1)}
	p.Funcs[n] = profile.Func{Name: "main"}
	for i := range n {
		p.Funcs[i] = profile.Func{Name: fmt.Sprintf("f%04d", n-1-i)}
		p.Map.AddStack([]ccmap.Frame{{Func: ccmap.FuncID(i)}, {Func: n, Site: 0x10}}, 7)
	}
	for _, tc := range []struct {
		k       int
		byNames bool
	}{{3, false}, {40, false}, {3, true}, {40, true}} {
		k := tc.k
		s, err := summarize(p, Options{Top: k, Contexts: k}, tc.byNames)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range s.contexts {
			if want := fmt.Sprintf("f%04d", i); len(c.names) != 2 || c.names[1] != want {
				t.Fatalf("contexts: %d is %v, want main → %s", i, c.names, want)
			}
		}
		for i, e := range s.edges {
			if want := fmt.Sprintf("f%04d", i); e.callee.Name != want {
				t.Fatalf("edges: %d is %s, want %s", i, e.callee.Name, want)
			}
		}
		if len(s.contexts) != k || len(s.edges) != k {
			t.Fatalf("%d contexts, %d edges, want %d", len(s.contexts), len(s.edges), k)
		}
	}
}

// TestContextsMergedByNames: contexts whose paths differ only by call
// sites are one text row with their weights summed, ranked by the sum,
// while the JSON lists them apart with the call sites along each path.
func TestContextsMergedByNames(t *testing.T) {
	m := ccmap.New()
	main := ccmap.Frame{Func: fMain, Site: 0x1000}
	for _, s := range []struct {
		site   uint64
		weight uint64
	}{{0x1010, 30}, {0x1020, 30}, {0x1030, 30}} { // A calls B from three sites
		m.AddStack([]ccmap.Frame{{Func: fB}, {Func: fA, Site: s.site}, main}, s.weight)
	}
	m.AddStack([]ccmap.Frame{{Func: fLeaf}, {Func: fMain, Site: 0x1004}}, 50)
	p := &profile.Profile{Map: m, Funcs: funcs, Sites: sites, Recording: profile.Recording{Source: profile.Timer}}
	s, err := summarize(p, Options{Contexts: 1}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.contexts) != 1 || strings.Join(s.contexts[0].names, ">") != "main>A>B" || s.contexts[0].weight != 90 || s.contexts[0].share != 90.0/140 {
		t.Errorf("merged: %+v, want main > A > B with 90 of 140", s.contexts)
	}
	var b bytes.Buffer
	if err := JSON(&b, p, Options{Contexts: -1}); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Contexts []struct {
			Path      []string
			Callsites []*struct{ Offset string }
		}
	}
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	offsets := map[string]bool{}
	for _, c := range r.Contexts {
		if strings.Join(c.Path, ">") != "main>A>B" {
			continue
		}
		if len(c.Callsites) != 3 || c.Callsites[0] == nil || c.Callsites[0].Offset != "0x1000" || c.Callsites[2] != nil {
			t.Fatalf("JSON context %v: call sites %v", c.Path, c.Callsites)
		}
		if c.Callsites[1] != nil {
			offsets[c.Callsites[1].Offset] = true
		}
	}
	if len(offsets) != 2 { // 0x1030 is in no Site of the profile: null
		t.Errorf("JSON: main > A > B through A's call sites %v, want 0x1010 and 0x1020 (and one null)", offsets)
	}
}
