package engine

import (
	"fmt"
	"os"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
)

// TestFollowParts reads a recording while it is written, a part after
// each checkpoint of its writer (one with a record half written past the
// header's data size, one with nothing new), and checks that the parts'
// profiles add up to the profile Load gives of the finished file: the
// same samples, weights, functions' self and total weights and call
// edges.
func TestFollowParts(t *testing.T) {
	p := buildStacksProgram(t)
	main, mid, leaf, rec := p.syms["main"].Value, p.syms["mid"].Value, p.syms["leaf"].Value, p.syms["rec"].Value
	stacks := [][]uint64{
		{leaf + 4, p.retMidLeaf, p.retMainMid},
		{mid + 4, p.retMainMid},
		{rec + 4, p.retRecRec, p.retRecRec},
		{main + 4},
	}
	path, w := createStacksFile(t, p)
	f, err := Follow(path, LoadOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var parts []*profile.Profile
	next := func(last bool) {
		t.Helper()
		pp, err := f.Next(last)
		if err != nil {
			t.Fatalf("part %d: %v", len(parts), err)
		}
		parts = append(parts, pp)
	}
	next(false) // the header only
	n := 0
	for part := range 4 {
		for i := range 50 * (part + 1) {
			s := stacks[(i+part)%len(stacks)]
			w.sample(t, s, uint64(1000+part*7+i%3))
			n++
			if i%20 == 19 {
				w.round(t)
			}
		}
		w.checkpoint(t)
		if part == 1 {
			w.partial(t, stacks[0]) // half a record past the header's data size
		}
		next(false)
		if part == 2 {
			next(false) // nothing new
		}
	}
	w.sample(t, stacks[1], 999) // written at Close only
	n++
	w.close(t)
	next(true)
	if pp, err := f.Next(true); pp != nil || err != nil {
		t.Errorf("Next after the last: %v, %v; want nil, nil", pp, err)
	}

	whole, err := Load(path, LoadOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := whole.Recording.Samples; got != uint64(n) {
		t.Fatalf("Load: %d samples, wrote %d", got, n)
	}
	want, got := profileSums(whole), map[string]uint64{}
	var samples uint64
	for _, pp := range parts {
		samples += pp.Recording.Samples
		for k, v := range profileSums(pp) {
			got[k] += v
		}
	}
	if samples != whole.Recording.Samples {
		t.Errorf("parts have %d samples, the whole file %d", samples, whole.Recording.Samples)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: parts add up to %d, the whole file has %d", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %d in the parts, absent from the whole file", k, v)
		}
	}
	// The parts hold what was written before each: the header's records,
	// but the round in progress stays for the next part (the last sample
	// written before a checkpoint goes in the next part).
	var per []uint64
	for _, pp := range parts {
		per = append(per, pp.Recording.Samples)
	}
	t.Logf("samples per part: %v", per)
	if per[1] == 0 || per[2] == 0 || per[3] == 0 || per[4] != 0 || per[5] == 0 || per[6] == 0 {
		t.Errorf("samples per part %v: want some in every part but the first and the one of nothing new", per)
	}
	if len(parts[0].Funcs) != 0 || parts[0].Map.Totals().Samples != 0 {
		t.Errorf("the first part (no samples written) has %d functions, weight %d", len(parts[0].Funcs), parts[0].Map.Totals().Samples)
	}
}

// profileSums names a profile's sums by what they are of: its total
// weight, each function's self and total weight, each call edge's weight
// (functions by name).
func profileSums(p *profile.Profile) map[string]uint64 {
	out := map[string]uint64{"total": p.Map.Totals().Samples}
	for _, fn := range p.Map.Functions(ccmap.Total) {
		name := p.Funcs[fn.Func].Name
		out["self "+name] += fn.Self
		out["total "+name] += fn.Total
	}
	for _, e := range p.Map.Edges(ccmap.Total) {
		out[fmt.Sprintf("edge %s -> %s", p.Funcs[e.Site.Caller].Name, p.Funcs[e.Callee].Name)] += e.Total
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// stacksWriter writes a recording of stacksProgram's process as
// writeStacksFile does, a record at a time.
type stacksWriter struct {
	w    *perfdata.Writer
	path string
	time uint64
}

// createStacksFile starts a recording like writeStacksFile's, with the
// program's mapping as its first record, and brings its header up to
// date.
func createStacksFile(t *testing.T, p *stacksProgram) (string, *stacksWriter) {
	t.Helper()
	path := t.TempDir() + "/follow.data"
	w, err := perfdata.Create(path, []perfdata.EventAttr{{Attr: stacksAttr(), Name: "cpu-clock"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord(stacksMmap(p)); err != nil {
		t.Fatal(err)
	}
	sw := &stacksWriter{w: w, path: path, time: 1000}
	sw.checkpoint(t)
	return path, sw
}

func (sw *stacksWriter) sample(t *testing.T, chain []uint64, period uint64) {
	t.Helper()
	sw.time++
	if err := sw.w.WriteRecord(stacksSample(chain, sw.time, period)); err != nil {
		t.Fatal(err)
	}
}

func (sw *stacksWriter) round(t *testing.T) {
	t.Helper()
	if err := sw.w.WriteFinishedRound(); err != nil {
		t.Fatal(err)
	}
}

func (sw *stacksWriter) checkpoint(t *testing.T) {
	t.Helper()
	if err := sw.w.Checkpoint(); err != nil {
		t.Fatal(err)
	}
}

// partial writes the first half of a sample record past the records
// written, where the writer's next records go, as a writer in the middle
// of a write leaves it.
func (sw *stacksWriter) partial(t *testing.T, chain []uint64) {
	t.Helper()
	f, err := os.OpenFile(sw.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := stacksSample(chain, sw.time+1, 1)
	if _, err := f.Write(rec[:len(rec)/2]); err != nil {
		t.Fatal(err)
	}
}

func (sw *stacksWriter) close(t *testing.T) {
	t.Helper()
	if err := sw.w.Close(perfdata.Features{}); err != nil {
		t.Fatal(err)
	}
}
