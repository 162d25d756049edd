package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report/flamegraph"
)

// DiffJSONVersion is the value of "hwprof_diff_json": the version of the
// diff format of docs/REPORT-JSON.md.
const DiffJSONVersion = 1

// A Diff is how the shares of two recordings of one program changed, base
// to new: functions (flamegraph.DiffTable over FlameStacks, under Weight)
// and call edges.
//
// Edges are matched by caller and callee name alone, every call site of a
// pair summed, so that the call sites a rebuilt program moved still line
// up. An edge's share is its weight in the report's edges (docs/
// REPORT-JSON.md): of the calls for a source that counts them, else of
// the period-weighted adjacent caller and callee frames of the sampled
// stacks. A timer recording against an exact one therefore shows where
// sampling time misattributes calls.
type Diff struct {
	Base, New  *profile.Profile
	Weight     flamegraph.Weight   // the weight of Funcs' shares of New
	BaseWeight flamegraph.Weight   // of Base: Weight, unless the two share none (DiffWeight)
	Funcs      []flamegraph.Change // largest change first
	Edges      []EdgeChange        // largest change first
}

// EdgeChange is how one call edge's share changed.
type EdgeChange struct {
	Caller, Callee string
	Base, New      float64 // shares of each recording's edge total
}

// Delta is New − Base.
func (e EdgeChange) Delta() float64 { return e.New - e.Base }

// DiffWeight returns the weight new is shown by and the weight base is
// compared by: calls when w asks for them and both count calls, else time
// when both have sampled stacks, else calls when both count calls. Two
// recordings that share no weight (a timer recording, time only, against
// an exact one, calls only) are compared share against share across
// weights: new by its own weight, base by its other one.
func DiffWeight(base, new *profile.Profile, w flamegraph.Weight) (newW, baseW flamegraph.Weight) {
	hasCalls := func(p *profile.Profile) bool { return p.HasCalls && p.Map.Totals().Calls > 0 }
	hasTime := func(p *profile.Profile) bool { return p.Map.Totals().Samples > 0 }
	switch {
	case w == flamegraph.WeightCalls && hasCalls(base) && hasCalls(new):
		return flamegraph.WeightCalls, flamegraph.WeightCalls
	case hasTime(base) && hasTime(new):
		return flamegraph.WeightTime, flamegraph.WeightTime
	case hasCalls(base) && hasCalls(new):
		return flamegraph.WeightCalls, flamegraph.WeightCalls
	case hasTime(new) && hasCalls(base):
		return flamegraph.WeightTime, flamegraph.WeightCalls
	case hasCalls(new) && hasTime(base):
		return flamegraph.WeightCalls, flamegraph.WeightTime
	}
	return flamegraph.WeightTime, flamegraph.WeightTime
}

// diffStacks returns both profiles' flame-graph stacks with the base's
// weight baseW moved into newW's place (when they differ), and the metas
// saying so.
func diffStacks(base, new *profile.Profile, newW, baseW flamegraph.Weight) (bm, nm flamegraph.Meta, bs, ns []flamegraph.Stack) {
	bm, bs = FlameStacks(base)
	nm, ns = FlameStacks(new)
	if newW == baseW {
		return bm, nm, bs, ns
	}
	for i := range bs {
		s := &bs[i]
		if newW == flamegraph.WeightTime {
			s.Time, s.Calls = s.Calls, 0
		} else {
			s.Calls, s.Time = s.Time, 0
		}
	}
	bm.HasTime, bm.HasCalls = newW == flamegraph.WeightTime, newW == flamegraph.WeightCalls
	bm.Source += fmt.Sprintf(" (its shares of %s against the new shares of %s)", weightNoun(baseW), weightNoun(newW))
	return bm, nm, bs, ns
}

// NewDiff compares new against base under weight w (DiffWeight decides).
// It does not change the profiles.
func NewDiff(base, new *profile.Profile, w flamegraph.Weight) (*Diff, error) {
	d := &Diff{Base: base, New: new}
	d.Weight, d.BaseWeight = DiffWeight(base, new, w)
	_, _, bs, ns := diffStacks(base, new, d.Weight, d.BaseWeight)
	d.Funcs = flamegraph.DiffTable(bs, ns, d.Weight)
	var err error
	if d.Edges, err = edgeChanges(base, new); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	return d, nil
}

// edgeChanges returns the edges of both profiles, their shares summed by
// caller and callee name, sorted by the size of their change, then by
// caller and callee.
func edgeChanges(base, new *profile.Profile) ([]EdgeChange, error) {
	type pair struct{ caller, callee string }
	sums := map[pair]*EdgeChange{}
	for i, p := range []*profile.Profile{base, new} {
		s := &summary{p: p}
		rows, err := s.edgeRows(-1)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			k := pair{r.caller.Name, r.callee.Name}
			e := sums[k]
			if e == nil {
				e = &EdgeChange{Caller: k.caller, Callee: k.callee}
				sums[k] = e
			}
			if i == 0 {
				e.Base += r.share
			} else {
				e.New += r.share
			}
		}
	}
	out := make([]EdgeChange, 0, len(sums))
	for _, e := range sums {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(x, y EdgeChange) int {
		return cmp.Or(cmp.Compare(math.Abs(y.Delta()), math.Abs(x.Delta())),
			cmp.Compare(x.Caller, y.Caller), cmp.Compare(x.Callee, y.Callee))
	})
	return out, nil
}

// diffTop is the first n of a list of length l (all when n < 0).
func diffTop(l, n int) int {
	if n < 0 || n > l {
		return l
	}
	return n
}

// Text writes the top functions and edges of d whose shares changed most
// (all when top < 0), in percentage points.
func (d *Diff) Text(w io.Writer, top int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "base: %s\nnew:  %s\n", diffRecording(d.Base), diffRecording(d.New))
	what := weightNoun(d.Weight)
	switch d.New.Measure {
	case profile.OffCPUTime:
		what = "time off the CPU"
	case profile.WallTime:
		what = "wall time (on and off the CPU)"
	}
	if d.BaseWeight != d.Weight {
		what = fmt.Sprintf("%s (base: of the %s)", what, weightNoun(d.BaseWeight))
	}
	fmt.Fprintf(w, "\nfunctions whose share of the %s changed most (percent of each recording's total):\n\n", what)
	fmt.Fprint(tw, "Δtotal\tbase\tnew\tΔself\tbase\tnew\t\tfunction\n")
	for _, c := range d.Funcs[:diffTop(len(d.Funcs), top)] {
		fmt.Fprintf(tw, "%+.2f\t%.2f\t%.2f\t%+.2f\t%.2f\t%.2f\t\t%s\n", 100*c.DeltaTotal(), 100*c.BaseTotal, 100*c.NewTotal,
			100*c.DeltaSelf(), 100*c.BaseSelf, 100*c.NewSelf, funcLabel(c.Name, c.Object))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	fmt.Fprintf(w, "\ncall edges whose share changed most (percent of each recording's %s):\n\n", edgeNoun(d))
	fmt.Fprint(tw, "Δshare\tbase\tnew\t\tcaller -> callee\n")
	for _, e := range d.Edges[:diffTop(len(d.Edges), top)] {
		fmt.Fprintf(tw, "%+.2f\t%.2f\t%.2f\t\t%s -> %s\n", 100*e.Delta(), 100*e.Base, 100*e.New, e.Caller, e.Callee)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	return nil
}

func diffRecording(p *profile.Profile) string {
	return fmt.Sprintf("%s (%s, %d samples, %d lost)", p.Recording.File, p.Recording.Source, p.Recording.Samples, p.Recording.Lost)
}

// funcLabel is a function's name with its object's in brackets; an
// object named in brackets already ([kernel.kallsyms], [vdso]) keeps
// its own.
func funcLabel(name, object string) string {
	if object == "" {
		return name
	}
	if strings.HasPrefix(object, "[") && strings.HasSuffix(object, "]") {
		return name + " " + object
	}
	return name + " [" + filepath.Base(object) + "]"
}

func weightNoun(w flamegraph.Weight) string {
	if w == flamegraph.WeightCalls {
		return "calls"
	}
	return "time"
}

// edgeNoun says what the edges' shares are of.
func edgeNoun(d *Diff) string {
	measure := func(p *profile.Profile) string {
		if p.HasCalls {
			return "calls"
		}
		return "sampled time"
	}
	b, n := measure(d.Base), measure(d.New)
	if b == n {
		return b
	}
	return "edge weight: base " + b + ", new " + n
}

// The JSON diff, in docs/REPORT-JSON.md's order.
type jsonDiff struct {
	Version    int              `json:"hwprof_diff_json"`
	Base       jsonDiffRec      `json:"base"`
	New        jsonDiffRec      `json:"new"`
	Weight     string           `json:"weight"`
	BaseWeight string           `json:"base_weight"`
	Functions  []jsonFuncChange `json:"functions"`
	Edges      []jsonEdgeChange `json:"edges"`
}

type jsonDiffRec struct {
	File       string `json:"file"`
	Source     string `json:"source"`
	Samples    uint64 `json:"samples"`
	Lost       uint64 `json:"lost"`
	EdgeWeight string `json:"edge_weight"`
}

type jsonFuncChange struct {
	Name       string  `json:"name"`
	Object     *string `json:"object"`
	Kind       string  `json:"kind"`
	BaseSelf   float64 `json:"base_self"`
	NewSelf    float64 `json:"new_self"`
	BaseTotal  float64 `json:"base_total"`
	NewTotal   float64 `json:"new_total"`
	DeltaSelf  float64 `json:"delta_self"`
	DeltaTotal float64 `json:"delta_total"`
}

type jsonEdgeChange struct {
	Caller string  `json:"caller"`
	Callee string  `json:"callee"`
	Base   float64 `json:"base"`
	New    float64 `json:"new"`
	Delta  float64 `json:"delta"`
}

// JSON writes d as JSON (docs/REPORT-JSON.md), the top functions and
// edges only (all when top < 0).
func (d *Diff) JSON(w io.Writer, top int) error {
	rec := func(p *profile.Profile) jsonDiffRec {
		ew := "sampled_time"
		if p.HasCalls {
			ew = "calls"
		}
		return jsonDiffRec{File: p.Recording.File, Source: p.Recording.Source.String(), Samples: p.Recording.Samples,
			Lost: p.Recording.Lost, EdgeWeight: ew}
	}
	out := jsonDiff{Version: DiffJSONVersion, Base: rec(d.Base), New: rec(d.New), Weight: weightNoun(d.Weight),
		BaseWeight: weightNoun(d.BaseWeight), Functions: []jsonFuncChange{}, Edges: []jsonEdgeChange{}}
	for _, c := range d.Funcs[:diffTop(len(d.Funcs), top)] {
		f := jsonFuncChange{Name: c.Name, Kind: c.Kind.String(), BaseSelf: c.BaseSelf, NewSelf: c.NewSelf,
			BaseTotal: c.BaseTotal, NewTotal: c.NewTotal, DeltaSelf: c.DeltaSelf(), DeltaTotal: c.DeltaTotal()}
		if c.Object != "" {
			f.Object = &c.Object
		}
		out.Functions = append(out.Functions, f)
	}
	for _, e := range d.Edges[:diffTop(len(d.Edges), top)] {
		out.Edges = append(out.Edges, jsonEdgeChange{Caller: e.Caller, Callee: e.Callee, Base: e.Base, New: e.New, Delta: e.Delta()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	return nil
}

// DiffFlamegraph writes the differential flame graph of new against base
// (flamegraph.WriteDiffHTML): new's frames, red where their share grew,
// blue where it shrank.
func DiffFlamegraph(w io.Writer, base, new *profile.Profile, o flamegraph.Options) error {
	nw, bw := DiffWeight(base, new, o.Weight)
	bm, nm, bs, ns := diffStacks(base, new, nw, bw)
	nm.Title = fmt.Sprintf("hwprof diff: %s (%s) against %s (%s)", filepath.Base(new.Recording.File), new.Recording.Source,
		filepath.Base(base.Recording.File), base.Recording.Source)
	o.Weight = nw
	if err := flamegraph.WriteDiffHTML(w, bm, nm, bs, ns, o); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	return nil
}
