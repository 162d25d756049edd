package engine

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/profile"
)

// TestSummedStacksFoldTheSame loads frame-pointer callchain recordings of
// the shared fixtures three ways: every sample folded on its own (the
// stack cache only saves the unwinding), repeated stacks summed in the
// cache (the default), and summed in a cache of three stacks (flushed and
// cleared all the time). The profiles must be the same in every function,
// edge, context (its samples included) and total.
func TestSummedStacksFoldTheSame(t *testing.T) {
	dir := fixtures.Dir(t)
	for _, name := range []string{"with-callchain.perf.data", "perf.data.callgraph-3.8", "perf.data.callgraph-3.4"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "perf_data_converter", name)
			o := LoadOptions{Workers: 2, Seed: 1}
			each, err := load(path, o, testOptions{eachStack: true})
			if err != nil {
				t.Fatal(err)
			}
			if each.Recording.Samples == 0 || each.Map.Totals().Samples == 0 {
				t.Fatalf("no samples folded: %+v", each.Recording)
			}
			summed, err := load(path, o, testOptions{})
			if err != nil {
				t.Fatal(err)
			}
			small, err := load(path, o, testOptions{stackLimit: 3})
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range []*profile.Profile{summed, small} {
				sameProfile(t, got, each)
			}
		})
	}
}

// sameProfile fails t unless got and want hold the same functions, edges,
// contexts and totals.
func sameProfile(t *testing.T, got, want *profile.Profile) {
	t.Helper()
	if err := got.Map.Check(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Funcs, want.Funcs) {
		t.Fatalf("%d functions, want %d (or other names)", len(got.Funcs), len(want.Funcs))
	}
	g, w := got.Map.Totals(), want.Map.Totals()
	g.Edges, w.Edges = 0, 0 // call-edge events: summed exact hits count once
	if g != w {
		t.Errorf("totals %+v, want %+v", g, w)
	}
	for _, by := range []ccmap.Measure{ccmap.Self, ccmap.Total, ccmap.Calls} {
		if g, w := got.Map.Functions(by), want.Map.Functions(by); !reflect.DeepEqual(g, w) {
			t.Errorf("%v: functions differ:\n%v\nwant\n%v", by, g, w)
		}
		if g, w := got.Map.DCG(by), want.Map.DCG(by); !reflect.DeepEqual(g, w) {
			t.Errorf("%v: DCGs differ", by)
		}
		if g, w := cctByPath(got.Map.CCT(by)), cctByPath(want.Map.CCT(by)); !reflect.DeepEqual(g, w) {
			t.Errorf("%v: CCTs differ", by)
		}
	}
}

// TestSampleWorkerFoldsTheSame loads every recording of the shared
// fixtures (file and pipe mode, events added and renamed in the stream,
// truncated files) with samples folded on the sample worker and on the
// reading goroutine: the profiles, recording facts, warnings and errors
// must be the same. Under -race it also checks that the worker shares
// nothing with the reader unsynchronized.
func TestSampleWorkerFoldsTheSame(t *testing.T) {
	paths := fixtureRecordings(t)
	folded := 0
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			o := LoadOptions{Seed: 1}
			want, wantErr := inlineLoad(path)
			got, gotErr := load(path, o, testOptions{})
			if sameLoad(t, got, gotErr, want, wantErr) {
				folded++
			}
		})
	}
	if folded < 10 {
		t.Errorf("only %d recordings had samples folded", folded)
	}
}

// TestFoldFastTheSame loads every recording of the shared fixtures with
// and without foldFast (samples of cached stacks read where their fields
// sit instead of decoded), all events and each event alone: everything
// must be the same, and foldFast must have taken the repeated stacks of
// the frame-pointer recordings (the fixtures' stacks are mostly unique).
func TestFoldFastTheSame(t *testing.T) {
	fastUsed := 0
	for _, path := range fixtureRecordings(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			events := []string{""} // then each event alone, as the load of all finds them
			for i := 0; i < len(events); i++ {
				ev := events[i]
				o := LoadOptions{Seed: 1, Event: ev}
				want, wantErr := load(path, o, testOptions{noFast: true})
				if ev == "" {
					if want == nil {
						t.Skipf("unreadable: %v", wantErr)
					}
					if len(want.Recording.Events) > 1 {
						for _, e := range want.Recording.Events {
							events = append(events, e.Name)
						}
					}
				}
				var fast uint64
				got, gotErr := load(path, o, testOptions{fastCount: &fast})
				sameLoad(t, got, gotErr, want, wantErr)
				t.Logf("event %q: %d of %d samples folded fast", ev, fast, want.Recording.Samples)
				if want != nil && fast > 0 {
					fastUsed++
				}
				if want != nil && fast > want.Recording.Samples {
					t.Errorf("event %q: %d samples folded fast, %d in all", ev, fast, want.Recording.Samples)
				}
			}
		})
	}
	if fastUsed < 3 {
		t.Errorf("foldFast took samples in only %d loads", fastUsed)
	}
}

// sameLoad fails t unless two loads gave the same error, recording facts,
// warnings and profile; it reports whether samples were folded.
func sameLoad(t *testing.T, got *profile.Profile, gotErr error, want *profile.Profile, wantErr error) bool {
	t.Helper()
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("error %v, want %v", gotErr, wantErr)
	}
	if want == nil {
		return false
	}
	if !reflect.DeepEqual(got.Recording, want.Recording) {
		t.Errorf("recording %+v, want %+v", got.Recording, want.Recording)
	}
	if !reflect.DeepEqual(got.Warnings, want.Warnings) {
		t.Errorf("warnings %q, want %q", got.Warnings, want.Warnings)
	}
	sameProfile(t, got, want)
	return want.Map.Totals().Samples > 0
}

// inlineLoads holds, by path, the load of a recording with every sample
// folded on the reading goroutine (Seed 1): the reference that
// TestSampleWorkerFoldsTheSame and TestPreparersFoldTheSame both compare
// with, made once per test process. Tests only read it.
var inlineLoads sync.Map // path → *onceLoad

type onceLoad struct {
	once sync.Once
	p    *profile.Profile
	err  error
}

// inlineLoad returns the shared inline load of path.
func inlineLoad(path string) (*profile.Profile, error) {
	v, _ := inlineLoads.LoadOrStore(path, &onceLoad{})
	l := v.(*onceLoad)
	l.once.Do(func() { l.p, l.err = load(path, LoadOptions{Seed: 1}, testOptions{inline: true}) })
	return l.p, l.err
}

// fixtureRecordings returns the recordings of the shared fixtures.
func fixtureRecordings(t *testing.T) []string {
	dir := fixtures.Dir(t)
	var paths []string
	for _, sub := range []string{"perf_data_converter", "autofdo"} {
		m, err := filepath.Glob(filepath.Join(dir, sub, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			if !strings.HasSuffix(p, ".buildids") && !strings.HasSuffix(p, ".bin") && !strings.HasSuffix(p, ".binary") {
				paths = append(paths, p)
			}
		}
	}
	if len(paths) < 10 {
		t.Fatalf("only %d recordings in %s", len(paths), dir)
	}
	return paths
}

// cctByPath returns a CCT without its context ids, which depend on the
// order the map's contexts were made in.
func cctByPath(c ccmap.CCT) ccmap.CCT {
	c.Nodes = slices.Clone(c.Nodes)
	for i := range c.Nodes {
		c.Nodes[i].Context = 0
	}
	return c
}
