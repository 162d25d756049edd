package pprof

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/google/pprof/profile"
)

// The sample types written, in pprof's type/unit form.
var (
	typeSamples = &profile.ValueType{Type: "samples", Unit: "count"}
	typeTime    = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
	typeCalls   = &profile.ValueType{Type: "calls", Unit: "count"}
	typeOffCPU  = &profile.ValueType{Type: "off-cpu", Unit: "nanoseconds"}
	typeWall    = &profile.ValueType{Type: "wall", Unit: "nanoseconds"}
)

// KindLabel is the sample label that tells the two kinds of samples apart:
// KindStack for sampled stacks, KindEdge for measured call edges (see the
// package doc). `go tool pprof -tagfocus kind=edge` shows only the edges.
const (
	KindLabel = "kind"
	KindStack = "stack"
	KindEdge  = "edge"
)

// Comments Write adds to say how the file encodes call counts.
const (
	commentEdges = "calls/count: every measured call edge is a two-frame sample (the callee, " +
		"then the caller's call site) labelled kind=edge whose calls/count is the edge's call " +
		"count; pprof's edge weights under calls/count are the measured counts. " +
		"samples/count: an edge sample's is its call count too (a call is what a call-counting " +
		"source samples), so that go build -pgo, which weighs edges by samples/count in a profile " +
		"without cpu/nanoseconds, weighs them by calls"
	commentPGOCalls = "go build -pgo profile weighted by calls: samples/count holds measured " +
		"call counts, not samples; every sample is one call edge (the callee, then the caller's " +
		"call site) weighted by the calls measured on it"
	commentPGOTime = "go build -pgo profile weighted by time: cpu/nanoseconds weights the " +
		"sampled stacks"
)

// Write writes p to w as a gzipped pprof profile (profile.proto), checked
// with the pprof library's CheckValid first. An item Validate refuses is
// repaired or left out (Profile.Repair), and o.Warn told so: it never
// costs the whole profile. See the package doc for what the file holds in
// an ordinary and in a PGO profile.
func Write(w io.Writer, p *Profile, o Options) error {
	pp, err := Build(p, o)
	if err != nil {
		return err
	}
	if err := pp.Write(w); err != nil {
		return fmt.Errorf("write pprof: %w", err)
	}
	return nil
}

// Build returns p as a pprof profile, as Write would write it.
func Build(p *Profile, o Options) (*profile.Profile, error) {
	p, warnings := p.Repair()
	for _, w := range warnings {
		if o.Warn != nil {
			o.Warn(w)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("write pprof: %w", err)
	}
	if o.Weight != Time && o.Weight != Calls {
		return nil, fmt.Errorf("write pprof: unknown weight %v", o.Weight)
	}
	var b builder
	var err error
	if o.PGO {
		err = b.buildPGO(p, o.Weight)
	} else {
		b.buildOrdinary(p, o.Weight, o.DefaultType)
	}
	if err != nil {
		return nil, fmt.Errorf("write pprof: %w", err)
	}
	if err := b.out.CheckValid(); err != nil {
		return nil, fmt.Errorf("write pprof: invalid profile: %w", err)
	}
	return b.out, nil
}

// builder turns a Profile into a profile.Profile.
type builder struct {
	in    *Profile
	out   *profile.Profile
	fns   []*profile.Function
	locs  []*profile.Location
	entry map[int]*profile.Location // callee function → its entry location
	site  map[int]*profile.Location // caller function → its unknown call site
}

// value says which weight a sample type carries.
type value uint8

const (
	valSamples value = iota // Sample.Samples
	valTime                 // Sample.TimeNS
	valCalls                // Edge.Calls
	valWeight               // Sample.Weight
	valOffCPU               // Sample.OffCPUNS
	valWall                 // Sample.TimeNS + Sample.OffCPUNS
)

func (b *builder) buildOrdinary(p *Profile, w Weight, defType string) {
	var types []*profile.ValueType
	var vals []value
	if p.HasTime {
		types, vals = append(types, typeTime), append(vals, valTime)
	}
	types, vals = append(types, typeSamples), append(vals, valSamples)
	if p.WeightType != "" {
		types, vals = append(types, &profile.ValueType{Type: p.WeightType, Unit: "count"}), append(vals, valWeight)
	}
	if p.HasCalls {
		types, vals = append(types, typeCalls), append(vals, valCalls)
	}
	if p.HasOffCPU {
		types, vals = append(types, typeOffCPU), append(vals, valOffCPU)
		if p.HasTime {
			types, vals = append(types, typeWall), append(vals, valWall)
		}
	}
	def := "samples"
	switch {
	case defType != "" && slices.ContainsFunc(types, func(t *profile.ValueType) bool { return t.Type == defType }):
		def = defType
	case p.HasCalls && (w == Calls || !p.HasTime):
		def = "calls"
	case p.HasTime:
		def = "cpu"
	}
	b.start(p, types, def)
	for _, s := range p.Samples {
		b.addStack(s, vals)
	}
	if p.HasCalls {
		// An edge sample's samples/count is its calls (see the package
		// doc); its time and event weight are 0.
		edge := slices.Clone(vals)
		edge[slices.Index(edge, valSamples)] = valCalls
		for _, e := range p.Edges {
			b.addEdge(e, edge)
		}
		b.out.Comments = append(b.out.Comments, commentEdges)
	}
}

// ErrNoStartLine says a PGO profile cannot be written because no function
// has a start line: the Go compiler rejects such profiles.
var ErrNoStartLine = errors.New("no function has a start line (go build -pgo needs Function.start_line)")

func (b *builder) buildPGO(p *Profile, w Weight) error {
	if !p.hasStartLine() {
		return ErrNoStartLine
	}
	switch w {
	case Calls:
		if !p.HasCalls {
			return errors.New("PGO weight calls: the profile has no measured call counts (record with an lbr, calls or exact source, or use time)")
		}
		b.start(p, []*profile.ValueType{typeSamples, typeCalls}, "calls")
		for _, e := range p.Edges {
			b.addEdge(e, []value{valCalls, valCalls})
		}
		b.out.Comments = append(b.out.Comments, commentPGOCalls)
	default:
		if !p.HasTime {
			return errors.New("PGO weight time: the profile has no time (record with a time source, or use calls)")
		}
		b.start(p, []*profile.ValueType{typeTime, typeSamples}, "cpu")
		for _, s := range p.Samples {
			b.addStack(s, []value{valTime, valSamples})
		}
		b.out.Comments = append(b.out.Comments, commentPGOTime)
	}
	return nil
}

// hasStartLine reports whether any function has a start line.
func (p *Profile) hasStartLine() bool {
	for _, f := range p.Functions {
		if f.StartLine != 0 {
			return true
		}
	}
	return false
}

// start makes the output profile with its header, mappings, functions and
// locations.
func (b *builder) start(p *Profile, types []*profile.ValueType, def string) {
	b.in = p
	b.out = &profile.Profile{
		SampleType:        types,
		DefaultSampleType: def,
		Comments:          append([]string(nil), p.Comments...),
		TimeNanos:         p.StartNS,
		DurationNanos:     p.DurationNS,
		PeriodType:        types[0],
	}
	if types[0] == typeTime {
		b.out.Period = p.PeriodNS
	}
	maps := make([]*profile.Mapping, len(p.Mappings))
	for i, m := range p.Mappings {
		maps[i] = &profile.Mapping{
			ID: uint64(i + 1), Start: m.Start, Limit: m.Limit, Offset: m.Offset,
			File: m.Path, BuildID: m.BuildID,
			HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true,
		}
	}
	b.fns = make([]*profile.Function, len(p.Functions))
	for i, f := range p.Functions {
		b.fns[i] = &profile.Function{
			ID: uint64(i + 1), Name: f.Name, SystemName: f.SystemName,
			Filename: f.File, StartLine: int64(f.StartLine),
		}
		if f.SystemName == "" {
			b.fns[i].SystemName = f.Name
		}
	}
	b.locs = make([]*profile.Location, len(p.Locations))
	for i, l := range p.Locations {
		loc := &profile.Location{ID: uint64(i + 1), Address: l.Address}
		if l.Mapping >= 0 {
			loc.Mapping = maps[l.Mapping]
			flagMapping(loc.Mapping, l, p.Functions)
		}
		for _, ln := range l.Lines {
			loc.Line = append(loc.Line, profile.Line{Function: b.fns[ln.Function], Line: int64(ln.Line)})
		}
		b.locs[i] = loc
	}
	b.out.Mapping, b.out.Function, b.out.Location = maps, b.fns, b.locs
	b.entry, b.site = map[int]*profile.Location{}, map[int]*profile.Location{}
}

// flagMapping clears the flags of m that location l does not live up to:
// a mapping has functions (file names, line numbers) only when all its
// locations do, which keeps pprof from symbolizing them again.
func flagMapping(m *profile.Mapping, l Location, fns []Function) {
	if len(l.Lines) == 0 {
		m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames = false, false, false, false
	}
	for _, ln := range l.Lines {
		if fns[ln.Function].File == "" {
			m.HasFilenames = false
		}
		if ln.Line == 0 {
			m.HasLineNumbers = false
		}
	}
}

func (b *builder) addStack(s Sample, vals []value) {
	ps := &profile.Sample{
		Location: make([]*profile.Location, len(s.Stack)),
		Value:    make([]int64, len(vals)),
		Label:    map[string][]string{KindLabel: {KindStack}},
	}
	for i, l := range s.Stack {
		ps.Location[i] = b.locs[l]
	}
	for i, v := range vals {
		switch v {
		case valSamples:
			ps.Value[i] = s.Samples
		case valTime:
			ps.Value[i] = s.TimeNS
		case valWeight:
			ps.Value[i] = s.Weight
		case valOffCPU:
			ps.Value[i] = s.OffCPUNS
		case valWall:
			ps.Value[i] = s.TimeNS + s.OffCPUNS
		}
	}
	b.out.Sample = append(b.out.Sample, ps)
}

// addEdge adds e as a two-frame sample: the callee's entry, then the
// caller's call site.
func (b *builder) addEdge(e Edge, vals []value) {
	site := b.siteLocation(e)
	ps := &profile.Sample{
		Location: []*profile.Location{b.entryLocation(e.Callee), site},
		Value:    make([]int64, len(vals)),
		Label:    map[string][]string{KindLabel: {KindEdge}},
	}
	for i, v := range vals {
		if v == valCalls {
			ps.Value[i] = e.Calls
		}
	}
	b.out.Sample = append(b.out.Sample, ps)
}

// entryLocation returns the location standing for the entry of function
// f: no mapping or address (the input does not give the entry address),
// one line, f's start line.
func (b *builder) entryLocation(f int) *profile.Location {
	if l := b.entry[f]; l != nil {
		return l
	}
	l := b.newLocation(f, b.in.Functions[f].StartLine)
	b.entry[f] = l
	return l
}

// siteLocation returns e's call-site location, or for an unknown call
// site one standing for "somewhere in the caller": line 0.
func (b *builder) siteLocation(e Edge) *profile.Location {
	if e.Site >= 0 {
		return b.locs[e.Site]
	}
	if l := b.site[e.Caller]; l != nil {
		return l
	}
	l := b.newLocation(e.Caller, 0)
	b.site[e.Caller] = l
	return l
}

func (b *builder) newLocation(f, line int) *profile.Location {
	l := &profile.Location{
		ID:   uint64(len(b.out.Location) + 1),
		Line: []profile.Line{{Function: b.fns[f], Line: int64(line)}},
	}
	b.out.Location = append(b.out.Location, l)
	return l
}
