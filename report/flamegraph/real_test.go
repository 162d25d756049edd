package flamegraph_test

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report"
	"github.com/hwprof/hwprof/report/flamegraph"
)

// Pages made from real recordings, loaded in headless Chromium: every
// frame has the width its weight implies (the reference model of
// ref_test.go over the stacks report.FlameStacks gives the page), a click
// zooms, reset and Esc undo it, a search shows the matched share, the
// time/calls switch redraws, and the page asks nothing of the network.

// checkRealPage draws p and drives its page through zoom, reset, search
// and the weight switch.
func checkRealPage(t *testing.T, name string, p *profile.Profile) {
	t.Helper()
	meta, stacks := report.FlameStacks(p)
	var b bytes.Buffer
	if err := report.Flamegraph(&b, p, flamegraph.Options{}); err != nil {
		t.Fatal(err)
	}
	pg := flamegraph.OpenPage(t, b.Bytes())
	ref := flamegraph.BuildRef(stacks, meta)
	pg.CheckLayout(ref)
	pg.Screenshot(name)
	t.Logf("%s: %d bytes, %d frames drawn, weights %v, ready %.0f ms after navigation", name, b.Len(), len(pg.Frames()),
		pg.State().Weights, pg.Eval(`performance.getEntriesByName('hwprof-ready')[0].startTime`))

	// Click zooms into the widest frame below the root that is not a
	// merged one; reset undoes it.
	var best flamegraph.Drawn
	for _, f := range pg.Frames() {
		if f.Depth >= 1 && f.Width > best.Width && !flamegraph.IsNarrow(f.Name) && len(f.Path) > 0 {
			best = f
		}
	}
	pg.Click(best)
	if st := pg.State(); st.Zoom != best.ID || st.ZoomPath != best.Path {
		t.Fatalf("click on %q: zoom %d %q, want %d", best.Path, st.Zoom, st.ZoomPath, best.ID)
	}
	pg.CheckLayout(ref)
	pg.Screenshot(name + "-zoom")
	pg.JS(`document.getElementById('reset').click()`)
	if st := pg.State(); st.Zoom != 0 {
		t.Errorf("reset left the zoom at %q", st.ZoomPath)
	}
	pg.CheckLayout(ref)

	// Search for the widest frame's function: the page's matched share is
	// the reference's.
	query := "^" + regexp.QuoteMeta(best.Name) + "$"
	pg.JS(fmt.Sprintf(`(function(){ var s = document.getElementById('search'); s.value = %s; s.dispatchEvent(new Event('input')); })()`,
		strconv.Quote(query)))
	st := pg.State()
	want := ref.MatchShare(stacks, regexp.MustCompile(query), st.Weight)
	if math.Abs(st.MatchShare-want) > 1e-9 || want == 0 {
		t.Errorf("search %q: matched share %.6f, want %.6f (> 0)", query, st.MatchShare, want)
	}
	pg.Screenshot(name + "-search")

	// The weight switch, when the recording counts calls.
	if meta.HasCalls && meta.HasTime {
		pg.JS(`document.querySelector('#weights button[data-weight="calls"]').click()`)
		if st := pg.State(); st.Weight != "calls" {
			t.Fatalf("weight %q after clicking calls", st.Weight)
		}
		pg.CheckLayout(ref)
		pg.Screenshot(name + "-calls")
		pg.JS(`document.querySelector('#weights button[data-weight="time"]').click()`)
		pg.CheckLayout(ref)
	} else if n := pg.Eval(`document.querySelectorAll('#weights button').length`); n != 0 {
		t.Errorf("%d weight buttons on a recording with one weight", int(n))
	}
	pg.CheckNoNetwork()
}

// TestBrowserRealLBR: the autofdo LBR recording of test.binary (call
// counts from the branch stacks, time from the samples), symbolized
// through a symfs that holds the binary at its recorded path.
func TestBrowserRealLBR(t *testing.T) {
	t.Parallel() // a page in a tab of its own; it measures no time
	auto := filepath.Join(fixtures.Dir(t), "autofdo")
	symfs := t.TempDir()
	fixtures.Place(t, filepath.Join(auto, "test.binary"), filepath.Join(symfs, "export", "hda3", "tmp", "test.binary"))
	p, err := engine.Load(filepath.Join(auto, "test.lbr"), engine.LoadOptions{SymFS: symfs})
	if p == nil {
		t.Fatal(err)
	}
	if !p.HasCalls || p.Map.Totals().Calls == 0 || p.Map.Totals().Samples == 0 {
		t.Fatalf("test.lbr: calls %v (%d), time %d: want both", p.HasCalls, p.Map.Totals().Calls, p.Map.Totals().Samples)
	}
	checkRealPage(t, "real-lbr", p)
}

// TestBrowserRealTimer: a live timer recording (cpu-clock, frame-pointer
// callchains, as hwprof demo records) of a C program that runs for a set
// time.
func TestBrowserRealTimer(t *testing.T) {
	prog := testprog.Build(t, "c/flamelive.c", "-O0", "-fno-omit-frame-pointer")
	dir := t.TempDir()
	events, err := event.BuildAttrs(event.RecordConfig{Events: []string{"cpu-clock"}, CallGraph: "fp", Freq: 4000, Target: event.TargetCommand})
	if err != nil {
		t.Fatal(err)
	}
	testenv.PerfEvents(t) // the machine can sample: hwprof failing is a failure
	data := filepath.Join(dir, "live.data")
	st, err := record.Record(record.Options{Events: events, Argv: []string{prog, "1500"}, Output: data})
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	t.Logf("recorded %d samples", st.Samples)
	p, err := engine.Load(data, engine.LoadOptions{})
	if p == nil {
		t.Fatal(err)
	}
	if p.Map.Totals().Samples == 0 {
		t.Fatal("the live recording has no sampled weight")
	}
	checkRealPage(t, "real-timer", p)
}

// TestBrowserRealTooltip: the tooltip of a live timer recording with a
// fixed period gives every frame its samples, which are then its time
// over the period (an independent count: the page's time comes from the
// samples' periods), and after a zoom an ancestor of the zoomed frame
// says how much of it the zoomed frame is, never a share of the zoomed
// frame above 100%.
func TestBrowserRealTooltip(t *testing.T) {
	prog := testprog.Build(t, "c/flamelive.c", "-O0", "-fno-omit-frame-pointer")
	dir := t.TempDir()
	testenv.PerfEvents(t) // the machine can sample: hwprof failing is a failure
	const period = 500000 // ns of CPU time
	events, err := event.BuildAttrs(event.RecordConfig{Events: []string{"cpu-clock"}, CallGraph: "fp", Period: period, Target: event.TargetCommand})
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "live.data")
	if _, err := record.Record(record.Options{Events: events, Argv: []string{prog, "1000"}, Output: data}); err != nil {
		t.Fatalf("record: %v", err)
	}
	p, err := engine.Load(data, engine.LoadOptions{})
	if p == nil {
		t.Fatal(err)
	}
	meta, stacks := report.FlameStacks(p)
	var b bytes.Buffer
	if err := report.Flamegraph(&b, p, flamegraph.Options{}); err != nil {
		t.Fatal(err)
	}
	pg := flamegraph.OpenPage(t, b.Bytes())
	ref := flamegraph.BuildRef(stacks, meta)

	// samples reads "N total, M self" and checks N against the frame's
	// time over the period.
	samples := func(f flamegraph.Drawn, tip map[string]string) {
		t.Helper()
		var total, self uint64
		if _, err := fmt.Sscanf(strings.ReplaceAll(tip["samples"], ",", ""), "%d total %d self", &total, &self); err != nil {
			t.Fatalf("frame %q: samples row %q: %v (tooltip %v)", f.Path, tip["samples"], err, tip)
		}
		tm, ok := ref.Time(f.Path)
		if !ok {
			t.Fatalf("frame %q not in the reference", f.Path)
		}
		if want := uint64(math.Round(tm / period)); total != want || self > total || want == 0 {
			t.Errorf("frame %q: tooltip says %d samples in total, %d self; its time %.0f ns is %d samples of %d ns",
				f.Path, total, self, tm, want, period)
		}
	}
	root := pg.Find("")
	samples(root, pg.Hover(root))
	var widest flamegraph.Drawn
	for _, f := range pg.Frames() {
		if f.Depth >= 2 && f.Width > widest.Width && !flamegraph.IsNarrow(f.Name) {
			widest = f
		}
	}
	samples(widest, pg.Hover(widest))

	// Zoom into the deepest frame that is at least a tenth of the width,
	// then hover every frame drawn.
	var deep flamegraph.Drawn
	for _, f := range pg.Frames() {
		if f.Depth >= 3 && f.Width >= pg.State().Width/10 && f.Depth > deep.Depth && !flamegraph.IsNarrow(f.Name) {
			deep = f
		}
	}
	if deep.Path == "" {
		t.Fatalf("no frame 3 deep and a tenth of the width in %d frames", len(pg.Frames()))
	}
	pg.Click(deep)
	zoomTime, _ := ref.Time(deep.Path)
	over := regexp.MustCompile(`([0-9.]+)%`)
	for _, f := range pg.Frames() {
		if flamegraph.IsNarrow(f.Name) || f.Width < 4 {
			continue
		}
		tip := pg.Hover(f)
		if v, ok := tip["of zoomed"]; ok {
			for _, m := range over.FindAllStringSubmatch(v, -1) {
				if x, _ := strconv.ParseFloat(m[1], 64); x > 100.005 {
					t.Errorf("frame %q after zooming into %q: of zoomed %q", f.Path, deep.Path, v)
				}
			}
		}
		if f.Depth < deep.Depth {
			// the page rounds halves up, Go's %.2f to even: a share on
			// a half of 0.01% may read either way
			tm, _ := ref.Time(f.Path)
			want := 100 * zoomTime / tm
			m := over.FindStringSubmatch(tip["zoomed frame"])
			if m == nil {
				t.Errorf("ancestor %q of the zoomed %q: tooltip %v, want a zoomed frame row with %.2f%%", f.Path, deep.Path, tip, want)
			} else if x, _ := strconv.ParseFloat(m[1], 64); math.Abs(x-want) > 0.0051 {
				t.Errorf("ancestor %q of the zoomed %q: tooltip %v, want a zoomed frame row with %.2f%%", f.Path, deep.Path, tip, want)
			}
		}
		if f.Depth >= deep.Depth {
			samples(f, tip)
		}
	}
	pg.Screenshot("real-tooltip-zoom")
}

// TestBrowserRealOffCPU: a live off-CPU recording (cpu-clock samples,
// switch records and the stacks threads leave the CPU with, as record
// --off-cpu makes) of testdata/c/waits.c, whose threads sleep, read a
// pipe, wait for a mutex and a child, and spin. The page's buttons switch
// CPU → Off-CPU → Wall; each view draws every frame at its width under
// that weight, says the profile's total in the header, and draws the
// frames whose weight is all off the CPU in the off-CPU palette.
func TestBrowserRealOffCPU(t *testing.T) {
	prog := testprog.Build(t, "c/waits.c", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread")
	dir := t.TempDir()
	testenv.PerfEvents(t) // the machine can sample: hwprof failing is a failure
	events, err := event.BuildAttrs(event.RecordConfig{Events: []string{"cpu-clock"}, CallGraph: "fp", Freq: 4000, Target: event.TargetCommand})
	if err != nil {
		t.Fatal(err)
	}
	o := record.Options{Events: events, Argv: []string{prog, "0.5"}, Output: filepath.Join(dir, "off.data")}
	facts := source.Gather()
	if err := o.OffCPU(!facts.UserOnly()); err != nil {
		t.Fatal(err)
	}
	if _, err := record.Record(o); err != nil {
		t.Fatalf("record --off-cpu: %v", err)
	}
	p, err := engine.Load(o.Output, engine.LoadOptions{})
	if p == nil {
		t.Fatal(err)
	}
	if p.OffCPU == nil || p.OffCPU.Totals().Samples == 0 || !p.Recording.OffCPU.OnCPUTime {
		t.Fatalf("the recording has no time off the CPU (%+v) or its samples are not of a clock", p.Recording.OffCPU)
	}
	meta, stacks := report.FlameStacks(p)
	var b bytes.Buffer
	if err := report.Flamegraph(&b, p, flamegraph.Options{Weight: report.MeasureWeight(profile.OffCPUTime, flamegraph.WeightTime)}); err != nil {
		t.Fatal(err)
	}
	pg := flamegraph.OpenPage(t, b.Bytes())
	if st := pg.State(); st.Weight != "off-cpu" || strings.Join(st.Weights, ",") != "time,off-cpu,wall" {
		t.Fatalf("page opens on %q with weights %v; want off-cpu of time, off-cpu, wall", st.Weight, st.Weights)
	}
	ref := flamegraph.BuildRef(stacks, meta)
	off := float64(p.OffCPU.Totals().Samples)
	for _, w := range []struct {
		weight string
		total  float64
	}{{"time", float64(p.Map.Totals().Samples)}, {"off-cpu", off}, {"wall", float64(p.Map.Totals().Samples) + off}} {
		pg.JS(`document.querySelector('#weights button[data-weight="` + w.weight + `"]').click()`)
		if st := pg.State(); st.Weight != w.weight {
			t.Fatalf("weight %q after clicking %s", st.Weight, w.weight)
		}
		pg.CheckLayout(ref)
		// The header rounds the total to its last digit shown (JavaScript's
		// toFixed rounds halves up, Go's %f to even: compare the values).
		shown := pg.Text(`document.getElementById('total-shown').textContent`)
		if v, ulp, err := flamegraph.ParseDur(shown); err != nil || math.Abs(v-w.total) > ulp/2*(1+1e-9) {
			t.Errorf("%s: the header's total is %q (%v), want %s (%.0f ns)", w.weight, shown, err, flamegraph.Dur(w.total), w.total)
		}
		blue, preempted, others := pg.CheckOffColours(ref, w.weight)
		t.Logf("%s view: total %s; %d frames drawn blue, %d [preempted], %d in their kind's colour", w.weight, flamegraph.Dur(w.total), blue, preempted, others)
		if w.weight == "off-cpu" && (blue == 0 || others != 0) || w.weight == "time" && blue+preempted != 0 {
			t.Errorf("%s view: %d blue, %d [preempted], %d other frames", w.weight, blue, preempted, others)
		}
		pg.Screenshot("real-offcpu-" + w.weight)
	}
	// The sleeper's wait: wait_sleep's frame holds its time off the CPU.
	for _, f := range pg.Frames() {
		if f.Name == "wait_sleep" {
			tot, _ := ref.Total(f.Path, "off-cpu")
			t.Logf("%s: %s off the CPU", f.Path, flamegraph.Dur(tot))
		}
	}
	pg.CheckNoNetwork()
}
