package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
)

// randomProfile folds random stacks and (with calls) edges in context
// over a few functions with repeated names, weights from a small set so
// that ties are common.
func randomProfile(seed uint64, calls bool) (*profile.Profile, []func(*ccmap.Map)) {
	r := rand.New(rand.NewPCG(seed, 1))
	nf := 3 + r.IntN(10)
	p := &profile.Profile{Funcs: make([]profile.Func, nf), Sites: map[ccmap.CallSite]profile.Site{}, HasCalls: calls}
	for i := range p.Funcs {
		p.Funcs[i] = profile.Func{Name: fmt.Sprintf("f%d", r.IntN(nf)), Object: []string{"", "/bin/a", "/lib/b.so"}[r.IntN(3)]}
	}
	var folds []func(*ccmap.Map)
	for range 50 + r.IntN(100) {
		n := 1 + r.IntN(8)
		fr := make([]ccmap.Frame, n)
		for i := range fr {
			fr[i].Func = ccmap.FuncID(r.IntN(nf))
			if i > 0 {
				fr[i].Site = uint64(0x100 * (1 + r.IntN(3)))
				s := ccmap.CallSite{Caller: fr[i].Func, Addr: fr[i].Site}
				if r.IntN(4) > 0 {
					info := profile.Site{Object: p.Funcs[s.Caller].Object, Offset: s.Addr}
					if r.IntN(2) == 0 {
						info.File, info.Line = "x.c", int(s.Addr)
					}
					p.Sites[s] = info
				}
			}
		}
		w := uint64(1+r.IntN(3)) * 1000
		if calls && n > 1 && r.IntN(2) == 0 {
			site := ccmap.CallSite{Caller: fr[1].Func, Addr: fr[1].Site}
			ctx := fr[1:]
			folds = append(folds, func(m *ccmap.Map) { m.AddEdgeInContext(ctx, site, fr[0].Func, w/1000) })
		} else {
			folds = append(folds, func(m *ccmap.Map) { m.AddStack(fr, w) })
		}
	}
	return p, folds
}

func build(p *profile.Profile, folds []func(*ccmap.Map)) *profile.Profile {
	q := *p
	q.Map = ccmap.New()
	for _, f := range folds {
		f(q.Map)
	}
	return &q
}

// TestJSONSpec decodes the JSON of random profiles and checks every rule
// of docs/REPORT-JSON.md.
func TestJSONSpec(t *testing.T) {
	for seed := range uint64(40) {
		for _, calls := range []bool{false, true} {
			base, folds := randomProfile(seed, calls)
			p := build(base, folds)
			p.Recording = profile.Recording{File: "f", Source: profile.Timer, Events: []profile.Event{{Name: "cpu-clock", Freq: 4000}}}
			if calls {
				p.Recording.Source = profile.Exact
			}
			if seed%3 == 1 { // as a damaged recording gives
				p.Warnings = []string{"perfdata: record at offset 0x7c40: reading stopped there", "cannot symbolize /bin/a"}
				p.Recording.Incomplete = seed%2 == 1
			}
			for _, o := range []Options{{Top: -1, Contexts: -1}, {}, {Top: 3, Contexts: 2}} {
				var b bytes.Buffer
				if err := JSON(&b, p, o); err != nil {
					t.Fatal(err)
				}
				if err := checkSpec(b.Bytes(), p, o); err != nil {
					t.Fatalf("seed %d calls %v options %+v: %v\n%s", seed, calls, o, err, b.Bytes())
				}
			}
			// Deterministic: the same input folded in another order, in
			// shards merged, gives the same bytes.
			r := rand.New(rand.NewPCG(seed, 2))
			shuffled := slices.Clone(folds)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			q := build(base, shuffled[:len(shuffled)/2])
			q.Map.Merge(build(base, shuffled[len(shuffled)/2:]).Map)
			q.Recording, q.Warnings = p.Recording, p.Warnings
			for _, f := range []func(*bytes.Buffer, *profile.Profile) error{
				func(b *bytes.Buffer, p *profile.Profile) error { return JSON(b, p, Options{}) },
				func(b *bytes.Buffer, p *profile.Profile) error { return Text(b, p, Options{}) },
			} {
				var x, y bytes.Buffer
				if f(&x, p) != nil || f(&y, q) != nil || !bytes.Equal(x.Bytes(), y.Bytes()) {
					t.Fatalf("seed %d: output depends on the order of folding:\n%s\n%s", seed, x.Bytes(), y.Bytes())
				}
			}
		}
	}
}

var offsetRE = regexp.MustCompile(`^0x[0-9a-f]+$`)

// checkSpec checks a JSON report against docs/REPORT-JSON.md.
func checkSpec(data []byte, p *profile.Profile, o Options) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if err := keys(raw, "hwprof_json", "recording", "functions", "edges", "contexts"); err != nil {
		return err
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(raw["recording"], &rec); err != nil {
		return err
	}
	if err := keys(rec, "file", "command", "source", "events", "samples", "lost", "throttled", "duration_ns", "periods", "processes",
		"warnings", "incomplete", "offcpu_ns", "offcpu", "measure"); err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	var warnings []string
	var incomplete bool
	if err := json.Unmarshal(rec["warnings"], &warnings); err != nil || warnings == nil {
		return fmt.Errorf("recording.warnings: %s is not a list (%v)", rec["warnings"], err)
	}
	if err := json.Unmarshal(rec["incomplete"], &incomplete); err != nil {
		return fmt.Errorf("recording.incomplete: %w", err)
	}
	if !slices.Equal(warnings, p.Warnings) && len(warnings)+len(p.Warnings) > 0 || incomplete != p.Recording.Incomplete {
		return fmt.Errorf("recording: warnings %q incomplete %v, profile has %q, %v", warnings, incomplete, p.Warnings, p.Recording.Incomplete)
	}
	var procs []map[string]json.RawMessage
	if err := json.Unmarshal(rec["processes"], &procs); err != nil {
		return fmt.Errorf("recording.processes: %w", err)
	}
	if len(procs) != len(p.Recording.Processes) {
		return fmt.Errorf("recording.processes: %d, profile has %d", len(procs), len(p.Recording.Processes))
	}
	for i, pr := range procs {
		if err := keys(pr, "pid", "comm", "samples", "share"); err != nil {
			return fmt.Errorf("recording.processes[%d]: %w", i, err)
		}
	}
	var r struct {
		Version   int `json:"hwprof_json"`
		Functions []struct {
			Name        string
			Object      *string
			Self, Total float64
			Calls       *uint64
			CallsShare  *float64 `json:"calls_share"`
		}
		Edges []struct {
			Caller, Callee string
			Callsite       *struct {
				Object *string
				Offset string
				File   *string
				Line   *int
			}
			Count        *uint64
			Weight       float64
			SamplesShare *float64 `json:"samples_share"`
		}
		Contexts []struct {
			Path      []string
			Count     *uint64
			Weight    float64
			Callsites []*struct {
				Object *string
				Offset string
				File   *string
				Line   *int
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return err
	}
	if r.Version != 1 {
		return fmt.Errorf("hwprof_json %d", r.Version)
	}
	for _, list := range []string{"functions", "edges", "contexts"} {
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(raw[list], &items); err != nil {
			return fmt.Errorf("%s: %w", list, err)
		}
		want := map[string][]string{
			"functions": {"name", "object", "self", "total", "calls", "calls_share", "offcpu_self_ns", "offcpu_total_ns"},
			"edges":     {"caller", "callee", "callsite", "count", "weight", "samples_share"},
			"contexts":  {"path", "count", "weight", "callsites", "offcpu_ns"},
		}[list]
		for i, it := range items {
			if err := keys(it, want...); err != nil {
				return fmt.Errorf("%s[%d]: %w", list, i, err)
			}
		}
	}
	top, nctx := o.limits()
	all := top < 0
	tot := p.Map.Totals()

	if top >= 0 && len(r.Functions) > top || nctx >= 0 && len(r.Contexts) > nctx || top >= 0 && len(r.Edges) > top {
		return fmt.Errorf("%d functions, %d edges, %d contexts for %+v", len(r.Functions), len(r.Edges), len(r.Contexts), o)
	}
	var selfSum, callSum float64
	for i, f := range r.Functions {
		selfSum += f.Self
		if (f.CallsShare != nil) != p.HasCalls {
			return fmt.Errorf("function %d: calls_share %v with HasCalls %v", i, f.CallsShare, p.HasCalls)
		}
		if f.CallsShare != nil {
			if want := share(*f.Calls, tot.Calls); math.Abs(*f.CallsShare-want) > 1e-12 {
				return fmt.Errorf("function %d: calls_share %v, want %v", i, *f.CallsShare, want)
			}
			callSum += *f.CallsShare
		}
		if f.Self < 0 || f.Total < f.Self-1e-12 || f.Total > 1+1e-12 {
			return fmt.Errorf("function %d: self %v total %v", i, f.Self, f.Total)
		}
		if (f.Calls != nil) != p.HasCalls {
			return fmt.Errorf("function %d: calls %v with HasCalls %v", i, f.Calls, p.HasCalls)
		}
		if f.Object != nil && *f.Object == "" {
			return fmt.Errorf("function %d: empty object instead of null", i)
		}
		if i > 0 {
			g := r.Functions[i-1]
			if f.Self > g.Self || f.Self == g.Self && (f.Total > g.Total || f.Total == g.Total && f.Name < g.Name && (f.Calls == nil || *f.Calls == *g.Calls)) {
				return fmt.Errorf("functions %d and %d out of order", i-1, i)
			}
		}
	}
	if all && tot.Samples > 0 && math.Abs(selfSum-1) > 1e-9 {
		return fmt.Errorf("functions' self sums to %v", selfSum)
	}
	if all && p.HasCalls && tot.Calls > 0 && math.Abs(callSum-1) > 1e-9 {
		return fmt.Errorf("functions' calls_share sums to %v", callSum)
	}

	var wsum float64
	var csum uint64
	for i, e := range r.Edges {
		wsum += e.Weight
		if (e.Count != nil) != p.HasCalls {
			return fmt.Errorf("edge %d: count %v with HasCalls %v", i, e.Count, p.HasCalls)
		}
		if e.Count != nil {
			csum += *e.Count
		}
		if (e.SamplesShare != nil) != (tot.Samples > 0) || e.SamplesShare != nil && (*e.SamplesShare < 0 || *e.SamplesShare > 1+1e-12) {
			return fmt.Errorf("edge %d: samples_share %v with %d sampled weight", i, e.SamplesShare, tot.Samples)
		}
		if s := e.Callsite; s != nil {
			if !offsetRE.MatchString(s.Offset) || (s.File == nil) != (s.Line == nil) {
				return fmt.Errorf("edge %d: callsite %+v", i, s)
			}
		}
		if i > 0 {
			g := r.Edges[i-1]
			if e.Weight > g.Weight || e.Weight == g.Weight && (e.Caller < g.Caller || e.Caller == g.Caller && e.Callee < g.Callee) {
				return fmt.Errorf("edges %d and %d out of order", i-1, i)
			}
		}
	}
	if all && len(r.Edges) > 0 && math.Abs(wsum-1) > 1e-9 {
		return fmt.Errorf("edge weights sum to %v", wsum)
	}
	if all && p.HasCalls {
		for i, e := range r.Edges {
			if math.Abs(e.Weight-float64(*e.Count)/float64(csum)) > 1e-12 {
				return fmt.Errorf("edge %d: weight %v is not count %d / %d", i, e.Weight, *e.Count, csum)
			}
		}
		if csum != tot.Calls {
			return fmt.Errorf("edge counts sum to %d, calls %d", csum, tot.Calls)
		}
	}

	wsum = 0
	for i, c := range r.Contexts {
		wsum += c.Weight
		if len(c.Path) == 0 || (c.Count != nil) != p.HasCalls {
			return fmt.Errorf("context %d: %+v", i, c)
		}
		if len(c.Callsites) != len(c.Path) || c.Callsites[len(c.Path)-1] != nil {
			return fmt.Errorf("context %d: call sites %v for a path of %d, want the last null", i, c.Callsites, len(c.Path))
		}
		for _, s := range c.Callsites {
			if s != nil && (!offsetRE.MatchString(s.Offset) || (s.File == nil) != (s.Line == nil)) {
				return fmt.Errorf("context %d: callsite %+v", i, s)
			}
		}
		if i > 0 {
			g := r.Contexts[i-1]
			if c.Weight > g.Weight || c.Weight == g.Weight && slices.Compare(c.Path, g.Path) < 0 {
				return fmt.Errorf("contexts %d and %d out of order", i-1, i)
			}
		}
	}
	if nctx < 0 && len(r.Contexts) > 0 && math.Abs(wsum-1) > 1e-9 {
		return fmt.Errorf("context weights sum to %v", wsum)
	}
	if dec.More() {
		return fmt.Errorf("data after the report")
	}
	return nil
}

// keys checks that m has exactly the keys want.
func keys(m map[string]json.RawMessage, want ...string) error {
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("keys %s, want %s", strings.Join(got, ","), strings.Join(want, ","))
	}
	return nil
}

// TestEdgeSamplesShare: an edge's samples_share is the share of the
// sampled weight whose stack holds it, once per stack: main → A, on every
// stack (once through recursion), has 1; A → A has the weight of the one
// stack that recurses; B → C the weight of its stack. The text report
// shows the same shares in its "of stacks" column, and weight stays the
// edge's share of all adjacent frames.
func TestEdgeSamplesShare(t *testing.T) {
	const main, a, b, c = 0, 1, 2, 3
	p := &profile.Profile{Map: ccmap.New(), Sites: map[ccmap.CallSite]profile.Site{},
		Funcs: []profile.Func{{Name: "main"}, {Name: "A"}, {Name: "B"}, {Name: "C"}}}
	// innermost first; each frame but the first has the site of its call
	p.Map.AddStack([]ccmap.Frame{{Func: a}, {Func: main, Site: 0x10}}, 2)
	p.Map.AddStack([]ccmap.Frame{{Func: b}, {Func: a, Site: 0x20}, {Func: main, Site: 0x10}}, 3)
	p.Map.AddStack([]ccmap.Frame{{Func: a}, {Func: a, Site: 0x30}, {Func: main, Site: 0x10}}, 4)
	p.Map.AddStack([]ccmap.Frame{{Func: c}, {Func: b, Site: 0x40}, {Func: a, Site: 0x20}, {Func: main, Site: 0x10}}, 1)
	var buf bytes.Buffer
	if err := JSON(&buf, p, Options{Top: -1, Contexts: -1}); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Edges []struct {
			Caller, Callee string
			Weight         float64
			SamplesShare   *float64 `json:"samples_share"`
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	// adjacent frames: main→A 10, A→B 4, A→A 4, B→C 1: 19 in all
	want := map[string][2]float64{
		"main→A": {10.0 / 19, 1}, "A→B": {4.0 / 19, 4.0 / 10}, "A→A": {4.0 / 19, 4.0 / 10}, "B→C": {1.0 / 19, 1.0 / 10},
	}
	if len(r.Edges) != len(want) {
		t.Fatalf("%d edges, want %d:\n%s", len(r.Edges), len(want), buf.Bytes())
	}
	for _, e := range r.Edges {
		w, ok := want[e.Caller+"→"+e.Callee]
		if !ok || e.SamplesShare == nil || math.Abs(e.Weight-w[0]) > 1e-12 || math.Abs(*e.SamplesShare-w[1]) > 1e-12 {
			t.Errorf("edge %s → %s: weight %v samples_share %v, want %v", e.Caller, e.Callee, e.Weight, e.SamplesShare, w)
		}
	}
	buf.Reset()
	if err := Text(&buf, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s+52\.63%\s+100\.00%\s+-\s+main → A\b`).Match(buf.Bytes()) ||
		!regexp.MustCompile(`(?m)^\s+5\.26%\s+10\.00%\s+-\s+B → C\b`).Match(buf.Bytes()) ||
		!strings.Contains(buf.String(), "of edges  of stacks") {
		t.Errorf("the text report's edge table does not show main → A on 100%% of stacks and B → C on 10%%:\n%s", buf.String())
	}
}
