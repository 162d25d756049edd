package otlp

import (
	"testing"

	"github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"

	"github.com/hwprof/hwprof/report/pprof"
)

// testProfile is a small profile as pprof.Build makes them: time and
// calls, an edge sample, two mappings, an inlined frame.
func testProfile() *profile.Profile {
	exe := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x500000, File: "/bin/app", BuildID: "0123abcd"}
	lib := &profile.Mapping{ID: 2, Start: 0x7f0000000000, Limit: 0x7f0000100000, File: "/lib/libc.so.6", BuildID: "go-ish/Build-ID"}
	main := &profile.Function{ID: 1, Name: "main", SystemName: "main", Filename: "app.c", StartLine: 10}
	work := &profile.Function{ID: 2, Name: "work", SystemName: "_Z4workv", Filename: "app.c", StartLine: 20}
	memcpy := &profile.Function{ID: 3, Name: "memcpy", SystemName: "memcpy"}
	site := &profile.Location{ID: 1, Mapping: exe, Address: 0x401000, Line: []profile.Line{{Function: main, Line: 12}}}
	leaf := &profile.Location{ID: 2, Mapping: exe, Address: 0x402000, Line: []profile.Line{{Function: work, Line: 21}, {Function: main, Line: 13}}}
	libc := &profile.Location{ID: 3, Mapping: lib, Address: 0x7f0000000100, Line: []profile.Line{{Function: memcpy}}}
	entry := &profile.Location{ID: 4, Line: []profile.Line{{Function: work, Line: 20}}}
	stack := map[string][]string{pprof.KindLabel: {pprof.KindStack}}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}, {Type: "samples", Unit: "count"}, {Type: "calls", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1000,
		TimeNanos: 1e18, DurationNanos: 2e9, Comments: []string{"recorded by a test"},
		Mapping: []*profile.Mapping{exe, lib}, Function: []*profile.Function{main, work, memcpy},
		Location: []*profile.Location{site, leaf, libc, entry},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{leaf, site}, Value: []int64{5000, 5, 0}, Label: stack},
			{Location: []*profile.Location{libc, leaf, site}, Value: []int64{2000, 2, 0}, Label: stack},
			{Location: []*profile.Location{site}, Value: []int64{1000, 1, 0}, Label: stack},
			{Location: []*profile.Location{entry, site}, Value: []int64{0, 7, 7}, Label: map[string][]string{pprof.KindLabel: {pprof.KindEdge}}},
		},
	}
}

// TestFromPProf checks the OTLP message sample by sample against its
// pprof profile, after a protobuf round trip.
func TestFromPProf(t *testing.T) {
	pp := testProfile()
	ps, err := FromPProf(pp, Resource{ServiceName: "svc", HostName: "h", PID: 42, Executable: "app", BuildID: "0123abcd", Version: "v"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pprofileotlp.NewExportRequestFromProfiles(ps).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	req := pprofileotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		t.Fatal(err)
	}
	ps = req.Profiles()
	d := ps.Dictionary()
	// Entry 0 of every table is the zero entry.
	if d.StringTable().At(0) != "" || d.MappingTable().At(0).FilenameStrindex() != 0 || d.LocationTable().At(0).Lines().Len() != 0 ||
		d.FunctionTable().At(0).NameStrindex() != 0 || d.StackTable().At(0).LocationIndices().Len() != 0 || d.AttributeTable().At(0).KeyStrindex() != 0 {
		t.Error("a table's entry 0 is not empty")
	}
	attrs := ps.ResourceProfiles().At(0).Resource().Attributes().AsRaw()
	for k, v := range map[string]any{AttrServiceName: "svc", AttrHostName: "h", AttrPID: int64(42), AttrExecutable: "app", AttrBuildIDGNU: "0123abcd"} {
		if attrs[k] != v {
			t.Errorf("resource attribute %s = %v, want %v", k, attrs[k], v)
		}
	}
	profs := ps.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles()
	if profs.Len() != 2 {
		t.Fatalf("%d profiles, want 2 (cpu and calls; samples/count is not sent)", profs.Len())
	}
	str := func(i int32) string { return d.StringTable().At(int(i)) }
	for pi, want := range []struct {
		typ   string
		value int
	}{{"cpu/nanoseconds", 0}, {"calls/count", 2}} {
		p := profs.At(pi)
		if got := str(p.SampleType().TypeStrindex()) + "/" + str(p.SampleType().UnitStrindex()); got != want.typ {
			t.Fatalf("profile %d is %s, want %s", pi, got, want.typ)
		}
		var samples []*profile.Sample
		for _, s := range pp.Sample {
			if s.Value[want.value] != 0 {
				samples = append(samples, s)
			}
		}
		if p.Samples().Len() != len(samples) {
			t.Fatalf("%s: %d samples, want %d", want.typ, p.Samples().Len(), len(samples))
		}
		for i, s := range samples {
			os := p.Samples().At(i)
			if os.Values().Len() != 1 || os.Values().At(0) != s.Value[want.value] {
				t.Errorf("%s sample %d: values %v, want %d", want.typ, i, os.Values().AsRaw(), s.Value[want.value])
			}
			st := d.StackTable().At(int(os.StackIndex()))
			if st.LocationIndices().Len() != len(s.Location) {
				t.Fatalf("%s sample %d: %d locations, want %d", want.typ, i, st.LocationIndices().Len(), len(s.Location))
			}
			for j, l := range s.Location {
				ol := d.LocationTable().At(int(st.LocationIndices().At(j)))
				if ol.Address() != l.Address || ol.Lines().Len() != len(l.Line) {
					t.Errorf("%s sample %d frame %d: address %#x with %d lines, want %#x with %d", want.typ, i, j, ol.Address(), ol.Lines().Len(), l.Address, len(l.Line))
					continue
				}
				for k, ln := range l.Line {
					f := d.FunctionTable().At(int(ol.Lines().At(k).FunctionIndex()))
					if str(f.NameStrindex()) != ln.Function.Name || str(f.SystemNameStrindex()) != ln.Function.SystemName ||
						str(f.FilenameStrindex()) != ln.Function.Filename || f.StartLine() != ln.Function.StartLine || ol.Lines().At(k).Line() != ln.Line {
						t.Errorf("%s sample %d frame %d line %d differs from %+v", want.typ, i, j, k, ln)
					}
				}
				if l.Mapping == nil {
					if ol.MappingIndex() != 0 {
						t.Errorf("a location without a mapping has mapping %d", ol.MappingIndex())
					}
					continue
				}
				m := d.MappingTable().At(int(ol.MappingIndex()))
				if str(m.FilenameStrindex()) != l.Mapping.File || m.MemoryStart() != l.Mapping.Start || m.MemoryLimit() != l.Mapping.Limit {
					t.Errorf("mapping of %#x differs from %+v", l.Address, l.Mapping)
				}
				ma, err := pprofile.FromAttributeIndices(d.AttributeTable(), m, d)
				if err != nil {
					t.Fatal(err)
				}
				key := AttrBuildIDGNU
				if l.Mapping.BuildID == "go-ish/Build-ID" {
					key = AttrBuildIDGo
				}
				if v, _ := ma.Get(key); v.Str() != l.Mapping.BuildID {
					t.Errorf("mapping %s: %s = %q, want %q", l.Mapping.File, key, v.Str(), l.Mapping.BuildID)
				}
			}
		}
	}
	if _, err := FromPProf(pp, Resource{}); err == nil {
		t.Error("no service name: no error")
	}
}
