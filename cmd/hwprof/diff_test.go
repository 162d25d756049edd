package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/fixtures"
)

type diffJSON struct {
	Version    int    `json:"hwprof_diff_json"`
	Weight     string `json:"weight"`
	BaseWeight string `json:"base_weight"`
	Functions  []struct {
		Name       string  `json:"name"`
		Object     *string `json:"object"`
		BaseSelf   float64 `json:"base_self"`
		NewSelf    float64 `json:"new_self"`
		BaseTotal  float64 `json:"base_total"`
		NewTotal   float64 `json:"new_total"`
		DeltaSelf  float64 `json:"delta_self"`
		DeltaTotal float64 `json:"delta_total"`
	} `json:"functions"`
	Edges []struct {
		Caller string  `json:"caller"`
		Callee string  `json:"callee"`
		Base   float64 `json:"base"`
		New    float64 `json:"new"`
		Delta  float64 `json:"delta"`
	} `json:"edges"`
}

// reportShares runs hwprof report --format json on in and returns each
// function's self and total share by name and object, and each edge's
// weight summed by caller and callee.
func reportShares(t *testing.T, in string) (funcs map[[2]string][2]float64, edges map[[2]string]float64) {
	t.Helper()
	r := hwprof(t, "report", "--format", "json", "-i", in)
	if r.code != 0 {
		t.Fatalf("report %s: exit %d\n%s", in, r.code, r.stderr)
	}
	var rep struct {
		Functions []struct {
			Name        string
			Object      *string
			Self, Total float64
		}
		Edges []struct {
			Caller, Callee string
			Weight         float64
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	funcs, edges = map[[2]string][2]float64{}, map[[2]string]float64{}
	n := map[[2]string]int{}
	for _, f := range rep.Functions {
		k := [2]string{f.Name, ""}
		if f.Object != nil {
			k[1] = *f.Object
		}
		// Functions of one name and object (unsymbolized code of an
		// object, say) are one frame in a flame graph: their self shares
		// add up; the total of such a frame is known only when the name
		// is unique (NaN otherwise).
		n[k]++
		v := funcs[k]
		v[0] += f.Self
		v[1] = f.Total
		if n[k] > 1 {
			v[1] = math.NaN()
		}
		funcs[k] = v
	}
	for _, e := range rep.Edges {
		edges[[2]string{e.Caller, e.Callee}] += e.Weight
	}
	return funcs, edges
}

// hwprof diff of two real recordings: every function's and edge's shares
// are those hwprof report gives each recording, the deltas are new − base
// and sorted largest first; a recording against itself changes nothing;
// -o FILE.html draws the differential page with both recordings' weights.
func TestDiff(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(fixtures.Dir(t), "perf_data_converter")
	base, next := filepath.Join(dir, "perf.data.callgraph-3.4"), filepath.Join(dir, "perf.data.callgraph-3.8")
	r := hwprof(t, "diff", "--format", "json", base, next)
	if r.code != 0 {
		t.Fatalf("diff: exit %d\n%s", r.code, r.stderr)
	}
	var d diffJSON
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err)
	}
	if d.Version != 1 || d.Weight != "time" || d.BaseWeight != "time" || len(d.Functions) == 0 || len(d.Edges) == 0 {
		t.Fatalf("diff: version %d, weights %s/%s, %d functions, %d edges", d.Version, d.Weight, d.BaseWeight, len(d.Functions), len(d.Edges))
	}
	bf, be := reportShares(t, base)
	nf, ne := reportShares(t, next)
	const eps = 1e-9
	near := func(a, b float64) bool { return math.Abs(a-b) < eps }
	prev := math.Inf(1)
	for _, f := range d.Functions {
		k := [2]string{f.Name, ""}
		if f.Object != nil {
			k[1] = *f.Object
		}
		nearTotal := func(a, b float64) bool { return math.IsNaN(b) || near(a, b) }
		if !near(f.BaseSelf, bf[k][0]) || !nearTotal(f.BaseTotal, bf[k][1]) || !near(f.NewSelf, nf[k][0]) || !nearTotal(f.NewTotal, nf[k][1]) {
			t.Errorf("%v: shares base %g/%g new %g/%g, the reports give %v and %v", k, f.BaseSelf, f.BaseTotal, f.NewSelf, f.NewTotal, bf[k], nf[k])
		}
		if !near(f.DeltaSelf, f.NewSelf-f.BaseSelf) || !near(f.DeltaTotal, f.NewTotal-f.BaseTotal) {
			t.Errorf("%v: deltas %g %g", k, f.DeltaSelf, f.DeltaTotal)
		}
		m := max(math.Abs(f.DeltaSelf), math.Abs(f.DeltaTotal))
		if m > prev+eps {
			t.Errorf("%v: change %g after a smaller one %g", k, m, prev)
		}
		prev = m
	}
	prev = math.Inf(1)
	for _, e := range d.Edges {
		k := [2]string{e.Caller, e.Callee}
		if !near(e.Base, be[k]) || !near(e.New, ne[k]) || !near(e.Delta, e.New-e.Base) {
			t.Errorf("edge %v: base %g new %g delta %g; the reports give %g and %g", k, e.Base, e.New, e.Delta, be[k], ne[k])
		}
		if math.Abs(e.Delta) > prev+eps {
			t.Errorf("edge %v: change %g after a smaller one %g", k, e.Delta, prev)
		}
		prev = math.Abs(e.Delta)
	}
	if len(d.Functions) < len(bf) || len(d.Functions) < len(nf) {
		t.Errorf("%d functions in the diff, %d and %d in the recordings", len(d.Functions), len(bf), len(nf))
	}

	// Text: the largest change first, in percent.
	r = hwprof(t, "diff", "--top", "3", base, next)
	if r.code != 0 || !strings.Contains(r.stdout, "call edges whose share changed most") {
		t.Fatalf("diff text: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if want := d.Functions[0].Name; !strings.Contains(r.stdout, want) {
		t.Errorf("text diff lacks the top function %q:\n%s", want, r.stdout)
	}

	// A recording against itself: nothing changed.
	r = hwprof(t, "diff", "--format", "json", next, next)
	var same diffJSON
	if err := json.Unmarshal([]byte(r.stdout), &same); err != nil || r.code != 0 {
		t.Fatalf("diff X X: exit %d, %v", r.code, err)
	}
	for _, f := range same.Functions {
		if f.DeltaSelf != 0 || f.DeltaTotal != 0 {
			t.Errorf("diff X X: %s changed by %g/%g", f.Name, f.DeltaSelf, f.DeltaTotal)
		}
	}

	// The page: the new recording's time, and the base's beside it.
	html := filepath.Join(t.TempDir(), "diff.html")
	if r := hwprof(t, "diff", "-o", html, base, next); r.code != 0 || !strings.Contains(r.stderr, html) {
		t.Fatalf("diff -o %s: exit %d\n%s", html, r.code, r.stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	w := pageWeights(t, string(page))
	for i, in := range []string{next, base} {
		p, err := engine.Load(in, engine.LoadOptions{})
		if p == nil {
			t.Fatal(err)
		}
		if want := float64(p.Map.Totals().Samples); w[i] != want {
			t.Errorf("%s: the page holds weight %v, the profile %v", in, w[i], want)
		}
	}
}

func TestDiffUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "one.data"}, "two recordings"},
		{[]string{"diff", "--format", "svg", "a", "b"}, "unknown --format"},
		{[]string{"diff", "--weight", "cycles", "a", "b"}, "unknown --weight"},
	} {
		if r := hwprof(t, tc.args...); r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("hwprof %q: exit %d, %s", tc.args, r.code, r.stderr)
		}
	}
	if r := hwprof(t, "diff", "missing-base.data", "missing-new.data"); r.code != exitError || !strings.Contains(r.stderr, "missing-base.data") {
		t.Errorf("diff of missing files: exit %d, %s", r.code, r.stderr)
	}
}
