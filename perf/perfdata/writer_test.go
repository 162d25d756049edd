package perfdata

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

func testAttrs() []EventAttr {
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod
	return []EventAttr{{Attr: cpuClockAttr(st), IDs: []uint64{17, 18}, Name: "cpu-clock"}}
}

func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perf.data")
	attrs := testAttrs()
	w, err := Create(path, attrs)
	must(t, err)
	start := w.DataSize()
	st := attrs[0].Attr.SampleType
	var want []byte
	for i := range 5 {
		r := sampleRecord(st, sampleID{pid: 1, tid: 2, time: uint64(100 + i)}, 0x1000, 1)
		must(t, w.WriteRecord(r))
		want = append(want, r...)
	}
	must(t, w.WriteFinishedRound())
	want = append(want, finishedRound[:]...)
	if w.Records() != 5 || w.DataSize() != start+int64(len(want)) {
		t.Errorf("Records %d, DataSize %d; want 5, %d", w.Records(), w.DataSize(), start+int64(len(want)))
	}
	must(t, w.Close(Features{Hostname: "h", Cmdline: []string{"hwprof", "record"}}))

	p := parseFile(t, path)
	b, err := os.ReadFile(path)
	must(t, err)
	data := b[p.hdr.Data.Offset : p.hdr.Data.Offset+p.hdr.Data.Size]
	if !bytes.HasSuffix(data, want) || int64(len(data)) != start+int64(len(want)) {
		t.Errorf("data section of %d bytes does not end with the %d bytes written", len(data), len(want))
	}
	if got := perf.RecordType(le.Uint32(data)); got != perf.RecordEventUpdate {
		t.Errorf("data starts with %v, want the EVENT_UPDATE naming the event", got)
	}
	if len(p.attrs) != 1 || p.attrs[0].SampleType != st || !slices.Equal(p.ids[0], []uint64{17, 18}) {
		t.Errorf("attrs %+v, ids %v", p.attrs, p.ids)
	}
	var feats []Feature
	for f := range p.features {
		feats = append(feats, f)
	}
	slices.Sort(feats)
	wantFeats := []Feature{FeatBuildID, FeatHostname, FeatCmdline, FeatEventDesc, FeatSampleTime}
	if !slices.Equal(feats, wantFeats) {
		t.Errorf("features %v, want %v", feats, wantFeats)
	}
	if st := p.features[FeatSampleTime]; len(st) != 16 || le.Uint64(st) != 100 || le.Uint64(st[8:]) != 104 {
		t.Errorf("sample time section %x, want the times of the first and last sample (100, 104)", st)
	}
	if end := p.hdr.Data.Offset + p.hdr.Data.Size; p.hdr.EventTypes != (fileSection{}) || end > uint64(len(b)) {
		t.Errorf("header %+v for a file of %d bytes", p.hdr, len(b))
	}
}

func TestWriterCheckpointUpdatesHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perf.data")
	w, err := Create(path, testAttrs())
	must(t, err)
	defer w.Close(Features{})
	r := sampleRecord(testAttrs()[0].Attr.SampleType, sampleID{}, 0, 0)
	must(t, w.WriteRecord(r))
	if p := parseFile(t, path); p.hdr.Data.Size != uint64(w.DataSize()-int64(len(r))) {
		t.Errorf("before Checkpoint the header says %d bytes, want the %d flushed at Create", p.hdr.Data.Size, w.DataSize()-int64(len(r)))
	}
	must(t, w.Checkpoint())
	p := parseFile(t, path)
	if p.hdr.Data.Size != uint64(w.DataSize()) || len(p.features) != 0 {
		t.Errorf("after Checkpoint: data size %d (want %d), features %v", p.hdr.Data.Size, w.DataSize(), p.features)
	}
}

func TestWriterBufferSpillKeepsFileValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perf.data")
	w, err := Create(path, testAttrs())
	must(t, err)
	defer w.Close(Features{})
	r := make([]byte, 24000) // not a divisor of the buffer size
	le.PutUint32(r, uint32(perf.RecordSample))
	le.PutUint16(r[6:], uint16(len(r)))
	for range 100 {
		must(t, w.WriteRecord(r))
	}
	p := parseFile(t, path)
	b, err := os.ReadFile(path)
	must(t, err)
	if p.hdr.Data.Size == 0 || p.hdr.Data.Offset+p.hdr.Data.Size != uint64(len(b)) {
		t.Fatalf("header data %+v, file %d bytes: want the header to cover exactly the records written out", p.hdr.Data, len(b))
	}
	// The flushed data is whole records.
	data := b[p.hdr.Data.Offset:]
	for len(data) > 0 {
		n := int(le.Uint16(data[6:]))
		if n < 8 || n > len(data) {
			t.Fatalf("record of %d bytes with %d left", n, len(data))
		}
		data = data[n:]
	}
}

func TestCreateErrors(t *testing.T) {
	dir := t.TempDir()
	good := testAttrs()
	tests := []struct {
		name  string
		path  string
		attrs []EventAttr
	}{
		{"no events", "a", nil},
		{"attr size not a multiple of 8", "b", []EventAttr{{Attr: perf.Attr{Size: 100}}}},
		{"attr size below VER0", "c", []EventAttr{{Attr: perf.Attr{Size: 32}}}},
		{"name with a NUL", "d", []EventAttr{{Attr: good[0].Attr, Name: "a\x00b"}}},
		{"no such directory", "no/such/dir", good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if w, err := Create(filepath.Join(dir, tt.path), tt.attrs); err == nil {
				w.Close(Features{})
				t.Fatal("Create succeeded")
			}
		})
	}
}

func TestWriteRecordErrors(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "perf.data"), testAttrs())
	must(t, err)
	tests := []struct {
		name string
		rec  []byte
	}{
		{"empty", nil},
		{"shorter than a header", []byte{9, 0, 0, 0}},
		{"size field too big", []byte{9, 0, 0, 0, 0, 0, 16, 0}},
		{"size field too small", []byte{9, 0, 0, 0, 0, 0, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, tt := range tests {
		if err := w.WriteRecord(tt.rec); err == nil {
			t.Errorf("%s: WriteRecord accepted it", tt.name)
		}
	}
	if w.Records() != 0 {
		t.Errorf("Records %d after rejected records", w.Records())
	}
	must(t, w.Close(Features{}))
	for name, err := range map[string]error{
		"WriteRecord":        w.WriteRecord(finishedRound[:]),
		"WriteFinishedRound": w.WriteFinishedRound(),
		"Checkpoint":         w.Checkpoint(),
		"Close":              w.Close(Features{}),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func TestCloseRejectsBadBuildID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perf.data")
	w, err := Create(path, testAttrs())
	must(t, err)
	err = w.Close(Features{BuildIDs: []BuildID{{PID: -1, Misc: perf.MiscUser, Path: "/x"}}})
	if err == nil {
		t.Fatal("Close accepted an empty build-id")
	}
	if !errors.Is(w.WriteFinishedRound(), ErrClosed) {
		t.Error("writer usable after a failed Close")
	}
	// The file is left as at the last flush: valid, without features.
	if p := parseFile(t, path); len(p.features) != 0 || p.hdr.Data.Size == 0 {
		t.Errorf("after a failed Close: header %+v, features %v", p.hdr, p.features)
	}
}

func TestUniformAttrSize(t *testing.T) {
	a := testAttrs()[0]
	b := a
	b.Attr.Size = perf.AttrSizeVer5 // an older, smaller attr
	b.IDs = []uint64{30}
	_, hdr, head, err := layout([]EventAttr{b, a})
	must(t, err)
	if hdr.AttrSize != perf.AttrSizeVer7+fileSectionSize {
		t.Errorf("attr_size %d, want the largest attr plus its ids section", hdr.AttrSize)
	}
	p, err := parseBytes(head)
	must(t, err)
	for i, at := range p.attrs {
		if at.Size != perf.AttrSizeVer7 {
			t.Errorf("attr %d written with size %d", i, at.Size)
		}
	}
	if !slices.Equal(p.ids[0], []uint64{30}) || !slices.Equal(p.ids[1], []uint64{17, 18}) {
		t.Errorf("ids %v", p.ids)
	}
}

func TestSampleTimeOffset(t *testing.T) {
	attr := func(st perf.SampleType) EventAttr { return EventAttr{Attr: perf.Attr{SampleType: st}} }
	ip, tid, tm, ident := perf.SampleIP, perf.SampleTID, perf.SampleTime, perf.SampleIdentifier
	tests := []struct {
		name  string
		attrs []EventAttr
		want  int
	}{
		{"perf record default IP|TID|TIME", []EventAttr{attr(ip | tid | tm | perf.SamplePeriod)}, 24},
		{"IDENTIFIER first", []EventAttr{attr(ident | ip | tid | tm)}, 32},
		{"TIME only", []EventAttr{attr(tm)}, 8},
		{"no TIME", []EventAttr{attr(ip | tid)}, 0},
		{"two attrs that agree", []EventAttr{attr(ident | ip | tm), attr(ident | ip | tm | perf.SampleCPU)}, 24},
		{"two attrs that disagree", []EventAttr{attr(ip | tm), attr(ip | tid | tm)}, 0},
		{"one attr without TIME", []EventAttr{attr(ip | tm), attr(ip)}, 0},
	}
	for _, tt := range tests {
		if got := sampleTimeOffset(tt.attrs); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestDefaultEventName(t *testing.T) {
	tests := []struct {
		name string
		attr perf.Attr
		want string
	}{
		{"cycles", perf.Attr{Type: perf.TypeHardware, Config: perf.HWCPUCycles}, "cycles"},
		{"user cycles:pp", perf.Attr{Type: perf.TypeHardware, Config: perf.HWCPUCycles, PreciseIP: 2,
			Flags: perf.FlagExcludeKernel | perf.FlagExcludeHV}, "cycles:upp"},
		{"cpu-clock", perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock}, "cpu-clock"},
		{"kernel only", perf.Attr{Type: perf.TypeSoftware, Config: perf.SWTaskClock, Flags: perf.FlagExcludeUser | perf.FlagExcludeHV}, "task-clock:k"},
		{"raw", perf.Attr{Type: perf.TypeRaw, Config: 0x1c4}, "r1c4"},
		{"breakpoint", perf.Attr{Type: perf.TypeBreakpoint, Config1: 0x1000}, "mem:0x1000"},
		{"uprobe PMU", perf.Attr{Type: 8, Config: 0}, "pmu8/config=0x0/"},
		{"unknown software", perf.Attr{Type: perf.TypeSoftware, Config: 99}, "pmu1/config=0x63/"},
	}
	for _, tt := range tests {
		if got := DefaultEventName(&tt.attr); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestFeatureString(t *testing.T) {
	for f, want := range map[Feature]string{FeatBuildID: "BUILD_ID", FeatSampleTime: "SAMPLE_TIME", FeatPMUCaps: "PMU_CAPS", 40: "FEATURE(40)", -1: "FEATURE(-1)"} {
		if got := f.String(); got != want {
			t.Errorf("Feature(%d) = %q, want %q", int(f), got, want)
		}
	}
}

func TestEncodeBuildIDs(t *testing.T) {
	id := testID(bytes.Repeat([]byte{0xab}, 20))
	tests := []struct {
		name    string
		in      BuildID
		size    int
		wantErr bool
	}{
		{"kernel", BuildID{PID: -1, Misc: perf.MiscKernel, ID: id, Path: "[kernel.kallsyms]"}, 100, false},
		{"63-byte path", BuildID{PID: -1, Misc: perf.MiscUser, ID: id, Path: string(bytes.Repeat([]byte{'a'}, 63))}, 100, false},
		{"64-byte path", BuildID{PID: -1, Misc: perf.MiscUser, ID: id, Path: string(bytes.Repeat([]byte{'a'}, 64))}, 164, false},
		{"short md5-sized id", BuildID{PID: 0, Misc: perf.MiscGuestUser, ID: testID(bytes.Repeat([]byte{0xab}, 16)), Path: "/g"}, 100, false},
		{"empty id", BuildID{Path: "/x"}, 0, true},
		{"no path", BuildID{ID: id}, 0, true},
		{"path too long", BuildID{ID: id, Path: string(make([]byte, 70000))}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := encodeBuildIDs([]BuildID{tt.in})
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error: %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if len(b) != tt.size || int(le.Uint16(b[6:])) != tt.size {
				t.Errorf("record of %d bytes (size field %d), want %d", len(b), le.Uint16(b[6:]), tt.size)
			}
			got, err := decodeBuildIDs(b)
			must(t, err)
			if len(got) != 1 || got[0].PID != tt.in.PID || got[0].Misc != tt.in.Misc || got[0].ID != tt.in.ID || got[0].Path != tt.in.Path {
				t.Errorf("decoded %+v, want %+v", got, tt.in)
			}
			if le.Uint32(b) != 0 || le.Uint16(b[4:])&miscBuildIDSize == 0 {
				t.Errorf("header %x: want type 0 and PERF_RECORD_MISC_BUILD_ID_SIZE, as perf writes", b[:8])
			}
		})
	}
}

func TestFeatureStrings(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		size int
	}{
		{"empty", "", "", 4 + 64},
		{"63 bytes", string(bytes.Repeat([]byte{'x'}, 63)), string(bytes.Repeat([]byte{'x'}, 63)), 4 + 64},
		{"64 bytes", string(bytes.Repeat([]byte{'x'}, 64)), string(bytes.Repeat([]byte{'x'}, 64)), 4 + 128},
		{"NUL ends it", "ab\x00cd", "ab", 4 + 64},
	}
	for _, tt := range tests {
		var b featBuf
		b.str(tt.in)
		got, rest, err := readString(b.b)
		if err != nil || got != tt.want || len(rest) != 0 || len(b.b) != tt.size {
			t.Errorf("%s: %q (%d bytes, rest %d, %v), want %q in %d bytes", tt.name, got, len(b.b), len(rest), err, tt.want, tt.size)
		}
	}
}

// FuzzWriteRecord: any bytes are either written whole or rejected, never
// a panic, and the file stays parseable.
func FuzzWriteRecord(f *testing.F) {
	f.Add([]byte{9, 0, 0, 0, 2, 0, 8, 0})
	f.Add([]byte{1, 2, 3})
	f.Add(finishedRound[:])
	path := filepath.Join(f.TempDir(), "perf.data")
	f.Fuzz(func(t *testing.T, rec []byte) {
		w, err := Create(path, testAttrs())
		must(t, err)
		before := w.DataSize()
		err = w.WriteRecord(rec)
		if (err == nil) != (w.DataSize() == before+int64(len(rec)) && len(rec) > 0) {
			t.Errorf("error %v, data size %d -> %d for %d bytes", err, before, w.DataSize(), len(rec))
		}
		must(t, w.Close(Features{}))
		parseFile(t, path)
	})
}

func BenchmarkWriteRecord(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "perf.data"), testAttrs())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close(Features{})
	rec := sampleRecord(testAttrs()[0].Attr.SampleType, sampleID{pid: 1, tid: 1, time: 5}, 0x1000, 1)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteRecord(rec); err != nil {
			b.Fatal(err)
		}
	}
}
