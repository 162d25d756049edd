package engine

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report"
)

// mergeFixtures are recordings of one machine (perf_data_converter's
// callgraph recordings of perf 3.4 and 3.8, with objects that have
// build-ids), merged as if from several.
var mergeFixtures = []string{
	"perf.data.callgraph-3.4",
	"perf.data.callgraph-3.8",
	"perf.data.callgraph_and_branch-3.8",
}

func mergePaths(t *testing.T) []string {
	dir := filepath.Join(fixtures.Dir(t), "perf_data_converter")
	var paths []string
	for _, f := range mergeFixtures {
		paths = append(paths, filepath.Join(dir, f))
	}
	return paths
}

// rendered is a profile as its JSON report shows every function, edge
// and context, for comparing merged profiles.
func rendered(t *testing.T, p *profile.Profile) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.JSON(&b, p, report.Options{Top: -1, Contexts: -1}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sameMerged(t *testing.T, what string, a, b *profile.Profile) {
	t.Helper()
	if !ccmap.Equal(a.Map, b.Map) {
		t.Errorf("%s: the CC-Maps differ", what)
	}
	if !slices.Equal(a.Funcs, b.Funcs) {
		t.Errorf("%s: the functions differ", what)
		for i := range min(len(a.Funcs), len(b.Funcs)) {
			if a.Funcs[i] != b.Funcs[i] {
				t.Logf("first difference at %d: %+v and %+v", i, a.Funcs[i], b.Funcs[i])
				break
			}
		}
	}
	if ra, rb := rendered(t, a), rendered(t, b); ra != rb {
		al, bl := strings.Split(ra, "\n"), strings.Split(rb, "\n")
		for i := range min(len(al), len(bl)) {
			if al[i] != bl[i] {
				t.Errorf("%s: the reports differ at line %d: %q and %q", what, i+1, al[i], bl[i])
				break
			}
		}
	}
}

// TestMergeOrderAndGrouping loads three real recordings in every order
// (LoadAll, in parallel) and in every grouping (profile.Merge of merges)
// and checks that the merged profile is the same every time.
func TestMergeOrderAndGrouping(t *testing.T) {
	paths := mergePaths(t)
	o := LoadOptions{Workers: 1, Seed: 1} // a fixed seed: the LBR estimate rounds at random
	var single []*profile.Profile
	for _, p := range paths {
		lp, err := Load(p, o)
		if err != nil {
			t.Fatal(err)
		}
		single = append(single, lp)
	}
	want, err := LoadAll(paths, o)
	if err != nil {
		t.Fatal(err)
	}
	var samples uint64
	for _, p := range single {
		samples += p.Recording.Samples
	}
	if want.Recording.Samples != samples || want.Map.Totals().Samples == 0 {
		t.Fatalf("merged %d samples (weight %d), the recordings hold %d", want.Recording.Samples, want.Map.Totals().Samples, samples)
	}
	for _, order := range [][]int{{2, 1, 0}, {1, 0, 2}, {0, 2, 1}} {
		var ps []string
		for _, i := range order {
			ps = append(ps, paths[i])
		}
		got, err := LoadAll(ps, o)
		if err != nil {
			t.Fatal(err)
		}
		sameMerged(t, fmt.Sprintf("order %v", order), want, got)
	}
	a, b, c := single[0], single[1], single[2]
	ab, _ := profile.Merge(a, b)
	bc, _ := profile.Merge(b, c)
	ca, _ := profile.Merge(c, a)
	left, _ := profile.Merge(ab, c)
	right, _ := profile.Merge(a, bc)
	mid, _ := profile.Merge(ca, b)
	for name, g := range map[string]*profile.Profile{"(a+b)+c": left, "a+(b+c)": right, "(c+a)+b": mid} {
		g.Recording.File = want.Recording.File
		sameMerged(t, name, want, g)
	}
}

// TestMergeAcrossMachines merges a recording with itself as another
// machine would have it: every object installed under another path, with
// the same build-ids. The objects line up by build-id, so the merge has
// the recording's functions once each, with doubled weights.
func TestMergeAcrossMachines(t *testing.T) {
	path := mergePaths(t)[0]
	p, err := Load(path, LoadOptions{Workers: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Recording.BuildIDs) == 0 {
		t.Fatal("the recording gives no build-ids")
	}
	q, err := Load(path, LoadOptions{Workers: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Only objects with a build-id can be told to be the same file.
	moved := func(s string) string {
		if p.Recording.BuildIDs[s].IsZero() || s[0] == '[' {
			return s
		}
		return "/other/machine" + s
	}
	withID := 0
	for i := range q.Funcs {
		if !p.Recording.BuildIDs[q.Funcs[i].Object].IsZero() {
			withID++
		}
		q.Funcs[i].Object = moved(q.Funcs[i].Object)
	}
	ids := map[string]buildid.ID{}
	for k, v := range q.Recording.BuildIDs {
		ids[moved(k)] = v
	}
	q.Recording.BuildIDs = ids
	if withID == 0 {
		t.Fatal("no function of the recording is in an object with a build-id")
	}

	m, err := profile.Merge(p, q)
	if err != nil {
		t.Fatal(err)
	}
	twice, _ := profile.Merge(p, p)
	// A merged object keeps the least of its paths: here the moved one.
	for i := range twice.Funcs {
		twice.Funcs[i].Object = min(twice.Funcs[i].Object, moved(twice.Funcs[i].Object))
	}
	for cs, site := range twice.Sites {
		site.Object = twice.Funcs[cs.Caller].Object
		twice.Sites[cs] = site
	}
	// The merged recording lists both paths' build-ids.
	if len(m.Recording.BuildIDs) <= len(p.Recording.BuildIDs) {
		t.Errorf("merged build-ids %d, want the moved paths' too", len(m.Recording.BuildIDs))
	}
	m.Recording.BuildIDs = twice.Recording.BuildIDs
	sameMerged(t, "moved objects", twice, m)
	if got, want := m.Map.Totals().Samples, 2*p.Map.Totals().Samples; got != want {
		t.Errorf("merged weight %d, want %d", got, want)
	}
	paths := map[string]bool{}
	for _, f := range m.Funcs {
		paths[f.Object] = true
	}
	t.Logf("%d functions, %d in objects with build-ids; merged objects %v", len(p.Funcs), withID, slices.Sorted(maps.Keys(paths)))
}
