package pprof

import (
	"bytes"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// roundTrip writes p with o and parses it back with the pprof library.
func roundTrip(t *testing.T, p *Profile, o Options) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, p, o); err != nil {
		t.Fatalf("Write(%+v): %v", o, err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte{0x1f, 0x8b}) {
		t.Fatalf("Write(%+v) did not gzip its output", o)
	}
	pp, err := profile.Parse(&buf)
	if err != nil {
		t.Fatalf("parse what Write(%+v) wrote: %v", o, err)
	}
	return pp
}

func typesOf(pp *profile.Profile) []string {
	var s []string
	for _, st := range pp.SampleType {
		s = append(s, st.Type+"/"+st.Unit)
	}
	return s
}

func sampleIndex(t *testing.T, pp *profile.Profile, typ string) int {
	t.Helper()
	for i, st := range pp.SampleType {
		if st.Type == typ {
			return i
		}
	}
	t.Fatalf("no sample type %s in %v", typ, typesOf(pp))
	return -1
}

// gotPairs is the adjacent-pair weight of sample type idx in a parsed
// profile, as pprof and the Go compiler derive it.
func gotPairs(pp *profile.Profile, idx int) map[pair]int64 {
	m := map[pair]int64{}
	for _, s := range pp.Sample {
		var fs []frame
		for _, l := range s.Location {
			for _, ln := range l.Line {
				fs = append(fs, frame{ln.Function.Name, int(ln.Line)})
			}
		}
		addPairs(m, fs, s.Value[idx])
	}
	return m
}

func TestRoundTrip(t *testing.T) {
	p := synthetic()
	pp := roundTrip(t, p, Options{Weight: Calls})

	if got, want := typesOf(pp), []string{"cpu/nanoseconds", "samples/count", "calls/count"}; !slices.Equal(got, want) {
		t.Errorf("sample types %v, want %v", got, want)
	}
	if pp.DefaultSampleType != "calls" {
		t.Errorf("default sample type %q, want calls", pp.DefaultSampleType)
	}
	if pp.Period != p.PeriodNS || pp.PeriodType.Type != "cpu" || pp.TimeNanos != p.StartNS || pp.DurationNanos != p.DurationNS {
		t.Errorf("header: period %d %v, time %d, duration %d", pp.Period, pp.PeriodType, pp.TimeNanos, pp.DurationNanos)
	}
	for i, m := range p.Mappings {
		got := pp.Mapping[i]
		if got.File != m.Path || got.BuildID != m.BuildID || got.Start != m.Start || got.Limit != m.Limit || got.Offset != m.Offset {
			t.Errorf("mapping %d: %+v, want %+v", i, got, m)
		}
		if !got.HasFunctions || !got.HasInlineFrames {
			t.Errorf("mapping %d (%s) does not say it has functions and inlined frames: pprof would symbolize it again", i, m.Path)
		}
	}
	if pp.Mapping[1].HasFilenames || !pp.Mapping[0].HasFilenames {
		t.Errorf("HasFilenames: program %v, libc %v; want true, false (memcpy has no file)", pp.Mapping[0].HasFilenames, pp.Mapping[1].HasFilenames)
	}
	for i, f := range p.Functions {
		got := pp.Function[i]
		sys := f.SystemName
		if sys == "" {
			sys = f.Name
		}
		if got.Name != f.Name || got.SystemName != sys || got.Filename != f.File || got.StartLine != int64(f.StartLine) {
			t.Errorf("function %d: %+v, want %+v", i, got, f)
		}
	}
	for i, l := range p.Locations {
		got := pp.Location[i]
		if got.Address != l.Address || (l.Mapping < 0) != (got.Mapping == nil) || (got.Mapping != nil && got.Mapping.ID != uint64(l.Mapping+1)) {
			t.Errorf("location %d: address %#x mapping %v, want %#x %d", i, got.Address, got.Mapping, l.Address, l.Mapping)
		}
		var lines []frame
		for _, ln := range got.Line {
			lines = append(lines, frame{ln.Function.Name, int(ln.Line)})
		}
		if want := p.frames([]int{i}); !slices.Equal(lines, want) {
			t.Errorf("location %d lines %v, want %v (innermost first)", i, lines, want)
		}
	}
	for _, c := range append(slices.Clone(p.Comments), commentEdges) {
		if !slices.Contains(pp.Comments, c) {
			t.Errorf("comment %q missing from %q", c, pp.Comments)
		}
	}

	// The stacks keep their weights, leaf first, labelled.
	cpu, samples, calls := sampleIndex(t, pp, "cpu"), sampleIndex(t, pp, "samples"), sampleIndex(t, pp, "calls")
	for i, s := range p.Samples {
		got := pp.Sample[i]
		var stack []int
		for _, l := range got.Location {
			stack = append(stack, int(l.ID)-1)
		}
		if !slices.Equal(stack, s.Stack) || got.Value[cpu] != s.TimeNS || got.Value[samples] != s.Samples || got.Value[calls] != 0 {
			t.Errorf("sample %d: stack %v values %v, want %v %d ns %d samples 0 calls", i, stack, got.Value, s.Stack, s.TimeNS, s.Samples)
		}
		if got.Label[KindLabel][0] != KindStack {
			t.Errorf("sample %d labels %v", i, got.Label)
		}
	}
	if n := len(pp.Sample) - len(p.Samples); n != len(p.Edges) {
		t.Errorf("%d edge samples, want %d", n, len(p.Edges))
	}

	// The point of the encoding: adjacent-pair weights under calls are the
	// measured counts exactly, and time stays with the stacks. Under
	// samples/count an edge sample weighs its calls (what go build -pgo
	// reads when the profile has no time), a stack its samples.
	if got, want := gotPairs(pp, calls), wantEdgePairs(p); !maps.Equal(got, want) {
		t.Errorf("calls/count pair weights\n got %v\nwant %v", got, want)
	}
	if got, want := gotPairs(pp, cpu), wantStackPairs(p); !maps.Equal(got, want) {
		t.Errorf("cpu/nanoseconds pair weights\n got %v\nwant %v", got, want)
	}
	want := wantEdgePairs(p)
	for _, s := range p.Samples {
		addPairs(want, p.frames(s.Stack), s.Samples)
	}
	if got := gotPairs(pp, samples); !maps.Equal(got, want) {
		t.Errorf("samples/count pair weights\n got %v\nwant %v", got, want)
	}
}

func TestDefaultSampleType(t *testing.T) {
	for _, tc := range []struct {
		time, calls bool
		w           Weight
		types       []string
		def         string
	}{
		{true, true, Time, []string{"cpu/nanoseconds", "samples/count", "calls/count"}, "cpu"},
		{true, true, Calls, []string{"cpu/nanoseconds", "samples/count", "calls/count"}, "calls"},
		{true, false, Calls, []string{"cpu/nanoseconds", "samples/count"}, "cpu"},
		{false, true, Time, []string{"samples/count", "calls/count"}, "calls"},
		{false, false, Time, []string{"samples/count"}, "samples"},
	} {
		p := synthetic()
		p.HasTime, p.HasCalls = tc.time, tc.calls
		pp := roundTrip(t, p, Options{Weight: tc.w})
		if got := typesOf(pp); !slices.Equal(got, tc.types) || pp.DefaultSampleType != tc.def {
			t.Errorf("time %v calls %v weight %v: types %v default %q, want %v %q", tc.time, tc.calls, tc.w, got, pp.DefaultSampleType, tc.types, tc.def)
		}
	}
}

func TestPGOProfiles(t *testing.T) {
	p := synthetic()

	pp := roundTrip(t, p, Options{PGO: true, Weight: Calls})
	if got, want := typesOf(pp), []string{"samples/count", "calls/count"}; !slices.Equal(got, want) {
		t.Errorf("PGO calls: sample types %v, want %v", got, want)
	}
	if len(pp.Sample) != len(p.Edges) || !slices.Contains(pp.Comments, commentPGOCalls) {
		t.Errorf("PGO calls: %d samples, comments %q; want %d edge samples and the calls comment", len(pp.Sample), pp.Comments, len(p.Edges))
	}
	if got, want := gotPairs(pp, 0), wantEdgePairs(p); !maps.Equal(got, want) {
		t.Errorf("PGO calls: samples/count pair weights\n got %v\nwant %v", got, want)
	}

	pp = roundTrip(t, p, Options{PGO: true, Weight: Time})
	if got, want := typesOf(pp), []string{"cpu/nanoseconds", "samples/count"}; !slices.Equal(got, want) {
		t.Errorf("PGO time: sample types %v, want %v", got, want)
	}
	if got, want := gotPairs(pp, 0), wantStackPairs(p); !maps.Equal(got, want) {
		t.Errorf("PGO time: cpu/nanoseconds pair weights\n got %v\nwant %v", got, want)
	}
}

func TestPGORefusals(t *testing.T) {
	var buf bytes.Buffer
	p := synthetic()
	for i := range p.Functions {
		p.Functions[i].StartLine = 0
	}
	if err := Write(&buf, p, Options{PGO: true, Weight: Calls}); !errors.Is(err, ErrNoStartLine) {
		t.Errorf("PGO profile without start lines: error %v, want ErrNoStartLine", err)
	}
	// An ordinary profile does not need start lines.
	if err := Write(&buf, p, Options{}); err != nil {
		t.Errorf("ordinary profile without start lines: %v", err)
	}
	p = synthetic()
	p.HasCalls = false
	if err := Write(&buf, p, Options{PGO: true, Weight: Calls}); err == nil || !strings.Contains(err.Error(), "no measured call counts") {
		t.Errorf("PGO calls from a time profile: error %v", err)
	}
	p = synthetic()
	p.HasTime = false
	if err := Write(&buf, p, Options{PGO: true, Weight: Time}); err == nil || !strings.Contains(err.Error(), "no time") {
		t.Errorf("PGO time from a call-count profile: error %v", err)
	}
	if err := Write(&buf, synthetic(), Options{Weight: Weight(7)}); err == nil {
		t.Errorf("unknown weight accepted")
	}
}

// TestRepair: every broken index or weight is repaired or left out with
// a warning naming it, never an error that costs the whole profile nor a
// panic: Write writes the rest (pprof reads it back).
// A function without a name (an empty ELF symbol) is named from its
// object and lowest address.
func TestRepair(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(p *Profile)
		want   string
	}{
		{"mapping range", func(p *Profile) { p.Mappings[0].Limit = p.Mappings[0].Start }, "1 mappings whose start is not below their limit, widened to their locations (the first: mapping 0 (/usr/bin/app)"},
		{"function name", func(p *Profile) { p.Functions[2].Name = "" }, "1 functions without a name, named from their object and address (the first: function 2, now [app+0x3000])"},
		{"system name", func(p *Profile) { p.Functions[5].Name = "" }, "function 5, now [app+0x4000]"},
		{"name of no location", func(p *Profile) { p.Functions[6].Name = "" }, "function 6, now [function 6]"},
		{"start line", func(p *Profile) { p.Functions[2].StartLine = -1 }, "negative start lines, made 0"},
		{"location mapping", func(p *Profile) { p.Locations[1].Mapping = 9 }, "locations naming no mapping there is, left without one (the first: location 1, mapping 9)"},
		{"location address", func(p *Profile) { p.Locations[1].Address = 0x10 }, "locations outside their mapping, left without one (the first: location 1 at 0x10"},
		{"line function", func(p *Profile) { p.Locations[2].Lines[1].Function = -3 }, "lines of no function there is, left out (the first: location 2, function -3)"},
		{"line", func(p *Profile) { p.Locations[2].Lines[0].Line = -1 }, "negative lines, made 0"},
		{"stack", func(p *Profile) { p.Samples[3].Stack[1] = 99 }, "samples with a location there is not, left out (the first: a sample with location 99)"},
		{"sample weight", func(p *Profile) { p.Samples[0].TimeNS = -5 }, "samples with a negative weight, left out"},
		{"edge caller", func(p *Profile) { p.Edges[1].Caller = 42 }, "edges of a function there is not, left out (the first: functions 42 → 2)"},
		{"edge site", func(p *Profile) { p.Edges[1].Site = 99 }, "edges whose call site is not in their caller, kept without a call site (the first: main → parse, site 99)"},
		{"edge site caller", func(p *Profile) { p.Edges[2].Site = 0 }, "edges whose call site is not in their caller"},
		{"edge site without lines", func(p *Profile) { p.Locations[3].Lines = nil }, "edges whose call site is not in their caller"},
		{"edge calls", func(p *Profile) { p.Edges[0].Calls = -1 }, "edges with negative calls, left out (the first: main → process, -1 calls)"},
	} {
		p := synthetic()
		tc.mutate(p)
		before := p.clone()
		var warnings []string
		var buf bytes.Buffer
		if err := Write(&buf, p, Options{Warn: func(w string) { warnings = append(warnings, w) }}); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], tc.want) || !strings.HasPrefix(warnings[0], "pprof: ") {
			t.Errorf("%s: warnings %q, want one containing %q", tc.name, warnings, tc.want)
		}
		if _, err := profile.Parse(&buf); err != nil {
			t.Errorf("%s: pprof does not read what Write wrote: %v", tc.name, err)
		}
		if !reflect.DeepEqual(p, before) {
			t.Errorf("%s: Write changed its input", tc.name)
		}
		if fixed, _ := p.Repair(); fixed.Validate() != nil {
			t.Errorf("%s: the repaired profile does not validate: %v", tc.name, fixed.Validate())
		}
	}
}

func TestParseWeight(t *testing.T) {
	for _, w := range []Weight{Time, Calls} {
		if got, err := ParseWeight(w.String()); err != nil || got != w {
			t.Errorf("ParseWeight(%q) = %v, %v", w.String(), got, err)
		}
	}
	if _, err := ParseWeight("cycles"); err == nil {
		t.Errorf("ParseWeight(cycles) accepted")
	}
}
