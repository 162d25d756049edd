package perfdata

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/klauspost/compress/zstd"
)

// stream builds a pipe-mode perf.data stream: the 16-byte header, then
// records.
type stream struct{ b []byte }

func newStream() *stream {
	s := &stream{b: []byte(magic)}
	s.b = le.AppendUint64(s.b, pipeHeaderSize)
	return s
}

func (s *stream) add(recs ...[]byte) *stream {
	for _, r := range recs {
		s.b = append(s.b, r...)
	}
	return s
}

// attrRecord is a PERF_RECORD_HEADER_ATTR for a with ids.
func attrRecord(a perf.Attr, ids ...uint64) []byte {
	b := a.Marshal()
	for _, id := range ids {
		b = le.AppendUint64(b, id)
	}
	return record(perf.RecordHeaderAttr, 0, b)
}

// timedSample is a sample of the cpuClockAttr layout (IP|TID|TIME|ID|CPU|
// PERIOD) at time t on cpu.
func timedSample(t uint64, cpu uint32) []byte {
	return sampleRecord(orderST, sampleID{pid: 1, tid: 1, time: t, id: 7, cpu: cpu}, 0x1000+t, 1)
}

const orderST = perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleID | perf.SampleCPU | perf.SamplePeriod

func orderAttr() perf.Attr { return cpuClockAttr(orderST) }

// times reads a stream and returns what it delivered: the time of each
// sample, "R" for a FINISHED_ROUND, "C" for a COMM.
func deliveries(t *testing.T, r *Reader) []string {
	t.Helper()
	var out []string
	var s perf.Sample
	for r.Next() {
		rec := r.Record()
		switch rec.Type() {
		case perf.RecordSample:
			if err := r.DecodeSample(&s); err != nil {
				t.Fatal(err)
			}
			if !rec.HasTime || rec.Time != s.Time {
				t.Errorf("record time %d %v, sample time %d", rec.Time, rec.HasTime, s.Time)
			}
			out = append(out, fmt.Sprint(s.Time))
		case perf.RecordFinishedRound:
			out = append(out, "R")
		case perf.RecordFinishedInit:
			out = append(out, "I")
		case perf.RecordComm:
			out = append(out, "C")
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReaderOrdersByRounds(t *testing.T) {
	comm := commRecord(0, sampleID{}, "x") // no sample_id_all trailer: no time
	s := newStream().add(attrRecord(orderAttr(), 7),
		timedSample(30, 0), timedSample(10, 1), comm, timedSample(20, 0), timedSample(10, 2),
		finishedRound[:],
		timedSample(50, 1), timedSample(40, 0),
		record(perf.RecordFinishedInit, 0, nil),
		timedSample(5, 3), // older than what was delivered: counted, delivered in its round
		timedSample(60, 0))
	r, err := NewPipeReader(bytes.NewReader(s.b))
	if err != nil {
		t.Fatal(err)
	}
	got := deliveries(t, r)
	want := []string{"C", "10", "10", "20", "30", "R", "40", "50", "I", "5", "60"}
	if !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
	if r.OutOfOrder() != 1 {
		t.Errorf("OutOfOrder = %d, want 1", r.OutOfOrder())
	}
	// Ties keep file order: the two samples at time 10 came from CPU 1 then 2.
	r, _ = NewPipeReader(bytes.NewReader(s.b))
	var cpus []uint32
	var smp perf.Sample
	for r.Next() {
		if r.Record().Type() == perf.RecordSample && r.DecodeSample(&smp) == nil && smp.Time == 10 {
			cpus = append(cpus, smp.CPU)
		}
	}
	if !slices.Equal(cpus, []uint32{1, 2}) {
		t.Errorf("ties delivered from CPUs %v, want [1 2]", cpus)
	}
	// File order on request.
	r, _ = NewPipeReader(bytes.NewReader(s.b))
	r.SetFileOrder(true)
	if got := deliveries(t, r); !slices.Equal(got, []string{"30", "10", "C", "20", "10", "R", "50", "40", "I", "5", "60"}) {
		t.Errorf("file order %v", got)
	}
	if r.Count(perf.RecordSample) != 8 || r.Total() != 12 {
		t.Errorf("counts %v, total %d", r.Counts(), r.Total())
	}
}

// Without rounds, the queue is bounded: past its limit (queueLimit, 1 MiB
// here) the older half is delivered, and every record still comes out.
func TestReaderBoundsTheQueue(t *testing.T) {
	const limit = 1 << 20
	s := newStream().add(attrRecord(orderAttr(), 7))
	n := 5*limit/len(timedSample(1, 0)) + 100
	for i := range n {
		s.add(timedSample(uint64(n-i), 0)) // descending: worst case
	}
	r, err := NewPipeReader(bytes.NewReader(s.b))
	if err != nil {
		t.Fatal(err)
	}
	r.queue.limit = limit
	count, maxArena, last, late := 0, 0, uint64(0), int64(0)
	for r.Next() {
		if rec := r.Record(); rec.Type() == perf.RecordSample {
			count++
			if rec.Time < last {
				late++
			}
			last = rec.Time
		}
		maxArena = max(maxArena, r.queue.held+cap(r.queue.arena))
	}
	if count != n || r.Err() != nil {
		t.Errorf("delivered %d of %d samples, err %v", count, n, r.Err())
	}
	if maxArena > 3*limit {
		t.Errorf("queue arena grew to %d bytes, limit %d", maxArena, limit)
	}
	// Descending times cannot all come out in order once halves go out
	// early; such records are counted, as perf counts them.
	if late == 0 || r.OutOfOrder() == 0 {
		t.Errorf("%d records delivered late, OutOfOrder %d", late, r.OutOfOrder())
	}
}

func TestReaderWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perf.data")
	st := perf.SampleIdentifier | perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod
	a0 := cpuClockAttr(st)
	a1 := cpuClockAttr(st)
	a1.Config = perf.SWTaskClock
	a1.Size = perf.AttrSizeVer8 // 136 bytes, as perf 6.3+ writes
	a1.Config3 = 5
	attrs := []EventAttr{{Attr: a0, IDs: []uint64{100, 101}, Name: "cpu-clock"}, {Attr: a1, IDs: []uint64{200}, Name: "task-clock:u"}}
	w, err := Create(path, attrs)
	must(t, err)
	var want [][]byte
	for i := range 10 {
		id := []uint64{100, 101, 200}[i%3]
		rec := sampleRecord(st, sampleID{pid: 1, tid: 2, time: uint64(1000 + i), id: id, cpu: uint32(i % 2)}, 0x1000, 1)
		must(t, w.WriteRecord(rec))
		want = append(want, rec)
	}
	must(t, w.WriteFinishedRound())
	feats := Features{Hostname: "host", OSRelease: "6.18.0", Version: "hwprof 0.1", Arch: "x86_64", CPUDesc: "Some CPU",
		CPUID: "GenuineIntel,6,85,7", NrCPUsOnline: 2, NrCPUsAvail: 4, TotalMemKB: 1 << 20, Cmdline: []string{"hwprof", "record"},
		BuildIDs: []BuildID{{PID: -1, Misc: perf.MiscUser, ID: testID([]byte{1, 2, 3}), Path: "/bin/true"}}}
	must(t, w.Close(feats))

	r, err := Open(path)
	must(t, err)
	defer r.Close()
	if r.Header().Pipe || r.Header().AttrSize != perf.AttrSizeVer8+fileSectionSize {
		t.Errorf("header %+v", r.Header())
	}
	if len(r.Attrs()) != 2 || r.Attrs()[0].Name != "cpu-clock" || r.Attrs()[1].Name != "task-clock:u" ||
		!slices.Equal(r.Attrs()[0].IDs, []uint64{100, 101}) || r.Attrs()[1].Attr.Config3 != 5 {
		t.Errorf("attrs %+v", r.Attrs())
	}
	got := r.Features()
	feats.SampleTimeFirst, feats.SampleTimeLast = 1000, 1009
	if !reflect.DeepEqual(got.Features, feats) {
		t.Errorf("features\n %+v\nwant\n %+v", got.Features, feats)
	}
	if len(got.EventDesc) != 2 || got.EventDesc[1].Name != "task-clock:u" || !slices.Equal(got.EventDesc[1].IDs, []uint64{200}) {
		t.Errorf("event desc %+v", got.EventDesc)
	}
	var s perf.Sample
	i := 0
	for r.Next() {
		rec := r.Record()
		if rec.Type() != perf.RecordSample {
			continue
		}
		if !bytes.Equal(rec.Raw, want[i]) {
			t.Errorf("sample %d differs", i)
		}
		must(t, r.DecodeSample(&s))
		if wantAttr := []int{0, 0, 1}[i%3]; s.Attr != wantAttr {
			t.Errorf("sample %d: event %d, want %d", i, s.Attr, wantAttr)
		}
		i++
	}
	if i != 10 || r.Err() != nil || len(r.Warnings()) != 0 {
		t.Errorf("%d samples, err %v, warnings %v", i, r.Err(), r.Warnings())
	}
}

// zstdFrames compresses data into one zstd frame, as perf record -z
// writes one per COMPRESSED record.
func zstdFrame(t testing.TB, data []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// compressedRecord is a PERF_RECORD_COMPRESSED: the frame right after
// the header, unpadded (the record size need not be a multiple of 8).
func compressedRecord(frame []byte) []byte {
	return record(perf.RecordCompressed, 0, frame)
}

func compressed2Record(frame []byte) []byte {
	b := le.AppendUint64(nil, uint64(len(frame)))
	b = append(b, frame...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return record(perf.RecordCompressed2, 0, b)
}

func TestReaderDecompresses(t *testing.T) {
	var inner []byte
	for _, tm := range []uint64{30, 10, 20, 40} {
		inner = append(inner, timedSample(tm, 0)...)
	}
	cut := len(inner) - 20 // the last sample is split across two records, as perf allows
	for _, tc := range []struct {
		name string
		wrap func([]byte) []byte
	}{
		{"COMPRESSED", compressedRecord},
		{"COMPRESSED2", compressed2Record},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStream().add(attrRecord(orderAttr(), 7),
				tc.wrap(zstdFrame(t, inner[:cut])), tc.wrap(zstdFrame(t, inner[cut:])), finishedRound[:])
			r, err := NewPipeReader(bytes.NewReader(s.b))
			must(t, err)
			defer r.Close()
			var offs []bool
			got := []string{}
			var smp perf.Sample
			for r.Next() {
				rec := r.Record()
				if rec.Type() == perf.RecordSample {
					must(t, r.DecodeSample(&smp))
					got = append(got, fmt.Sprint(smp.Time))
					offs = append(offs, rec.Compressed)
				}
			}
			if r.Err() != nil || len(r.Warnings()) > 0 {
				t.Fatalf("err %v, warnings %v", r.Err(), r.Warnings())
			}
			if !slices.Equal(got, []string{"10", "20", "30", "40"}) || slices.Contains(offs, false) {
				t.Errorf("samples %v, compressed %v", got, offs)
			}
			if typ := perf.RecordType(le.Uint32(tc.wrap(nil))); r.Count(perf.RecordSample) != 4 || r.Count(typ) != 2 {
				t.Errorf("counts %v", r.Counts())
			}
		})
	}
	// A corrupt frame is a warning; the records after it are read.
	s := newStream().add(attrRecord(orderAttr(), 7), compressed2Record([]byte("not zstd at all")), timedSample(5, 0))
	r, err := NewPipeReader(bytes.NewReader(s.b))
	must(t, err)
	if got := deliveries(t, r); !slices.Equal(got, []string{"5"}) || len(r.Warnings()) != 1 || !strings.Contains(r.Warnings()[0], "zstd") {
		t.Errorf("after a corrupt frame: %v, warnings %q", got, r.Warnings())
	}
}

func TestReaderSkipsPayloads(t *testing.T) {
	aux := le.AppendUint64(nil, 16) // size
	aux = append(aux, make([]byte, 8+8+16)...)
	tracing := le.AppendUint32(nil, 13) // aligned to 16
	tracing = le.AppendUint32(tracing, 0)
	s := newStream().add(attrRecord(orderAttr(), 7),
		record(perf.RecordAuxtrace, 0, aux), bytes.Repeat([]byte{0xff}, 16),
		record(perf.RecordHeaderTracing, 0, tracing), bytes.Repeat([]byte{0xee}, 16),
		record(perf.RecordType(200), 0, []byte("future..")), // unknown: skipped by size
		timedSample(1, 0))
	r, err := NewPipeReader(bytes.NewReader(s.b))
	must(t, err)
	if got := deliveries(t, r); !slices.Equal(got, []string{"1"}) {
		t.Errorf("delivered %v", got)
	}
	if r.Unknown() != 1 || r.Count(perf.RecordType(200)) != 1 || r.Total() != 5 {
		t.Errorf("unknown %d, counts %v", r.Unknown(), r.Counts())
	}
}

// smallFile writes a valid file with a few records and returns its bytes.
func smallFile(t testing.TB) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "small.data")
	w, err := Create(path, []EventAttr{{Attr: orderAttr(), IDs: []uint64{7}, Name: "cpu-clock"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range []uint64{3, 1, 2} {
		if err := w.WriteRecord(timedSample(tm, 0)); err != nil {
			t.Fatal(err)
		}
	}
	w.WriteFinishedRound()
	if err := w.Close(Features{Hostname: "h", Arch: "x86_64", Cmdline: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readBytes(b []byte) (*Reader, int, error) {
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, 0, err
	}
	n := 0
	for r.Next() {
		n++
	}
	return r, n, r.Err()
}

func TestReaderBadInput(t *testing.T) {
	good := smallFile(t)
	dataOff := le.Uint64(good[40:])
	dataEnd := dataOff + le.Uint64(good[48:])
	set := func(off int, v uint64) []byte {
		b := bytes.Clone(good)
		le.PutUint64(b[off:], v)
		return b
	}
	withRecordSize := func(i int, size uint16) []byte {
		// the i-th record of the data section gets a new size field
		b := bytes.Clone(good)
		off := dataOff
		for range i {
			off += uint64(le.Uint16(b[off+6:]))
		}
		le.PutUint16(b[off+6:], size)
		return b
	}
	for _, tc := range []struct {
		name    string
		in      []byte
		openErr string // error from NewReader
		readErr string // error from Err
		warn    string
		records int // -1: don't check
	}{
		{"valid", good, "", "", "", 5},
		{"garbage after the data section", append(bytes.Clone(good), []byte("garbage!garbage!")...), "", "", "", 5},
		{"not perf.data", []byte("#!/bin/sh\necho hello, not perf data\n"), "magic", "", "", -1},
		{"empty", nil, "not a perf.data", "", "", -1},
		{"big-endian", append([]byte("2ELIFREP"), good[8:]...), "big-endian", "", "", -1},
		{"header size", set(8, 99), "header size 99 at offset 8", "", "", -1},
		{"attr section outside the file", set(24, uint64(len(good))+64), "attrs section", "", "", -1},
		{"attr entry size", set(16, 8), "attr entry size 8", "", "", -1},
		{"file cut inside a record", good[:dataOff+50], "", "truncated", "runs past the end of the file", -1},
		{"data section size covers the features", set(48, uint64(len(good))-dataOff), "", "offset 0x", "", -1},
		{"file cut before the features", good[:dataEnd], "", "", "feature table", 5},
		{"zero-size record", withRecordSize(2, 0), "", "size 0 is smaller than its 8-byte header", "", 2},
		{"record size past the data end", withRecordSize(3, 0xfff8), "", "runs past the end of the data section", "", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, n, err := readBytes(tc.in)
			if tc.openErr != "" {
				if r != nil || err == nil || !strings.Contains(err.Error(), tc.openErr) {
					t.Fatalf("open: %v, want %q", err, tc.openErr)
				}
				return
			}
			if r == nil {
				t.Fatalf("open: %v", err)
			}
			if tc.readErr == "" && err != nil {
				t.Fatalf("read: %v", err)
			}
			if tc.readErr != "" && (err == nil || !strings.Contains(err.Error(), tc.readErr) || !strings.Contains(err.Error(), "0x")) {
				t.Fatalf("read error %v, want %q with an offset", err, tc.readErr)
			}
			if tc.warn != "" && !strings.Contains(strings.Join(r.Warnings(), "\n"), tc.warn) {
				t.Errorf("warnings %q, want %q", r.Warnings(), tc.warn)
			}
			if tc.records >= 0 && n != tc.records {
				t.Errorf("%d records delivered, want %d", n, tc.records)
			}
		})
	}
	// Every prefix and every single-byte corruption of the file: no panic,
	// no endless loop, an error or a read.
	for n := 0; n < len(good); n++ {
		readBytes(good[:n])
		b := bytes.Clone(good)
		b[n] ^= 0xff
		readBytes(b)
	}
}

func TestPipeReaderErrors(t *testing.T) {
	if _, err := NewPipeReader(strings.NewReader("PERFILE2")); !errors.Is(err, ErrNotPerfData) {
		t.Errorf("short pipe header: %v", err)
	}
	b := append([]byte(magic), make([]byte, 8)...)
	le.PutUint64(b[8:], fileHeaderSize)
	if _, err := NewPipeReader(bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "header size 104") {
		t.Errorf("file header on a pipe: %v", err)
	}
	// A few stray bytes at the end of a stream: a warning.
	s := newStream().add(attrRecord(orderAttr(), 7), timedSample(1, 0), []byte{1, 2, 3})
	r, _ := NewPipeReader(bytes.NewReader(s.b))
	if got := deliveries(t, r); len(got) != 1 || len(r.Warnings()) != 1 || !strings.Contains(r.Warnings()[0], "3 bytes at offset") {
		t.Errorf("stray bytes: %v, warnings %q", got, r.Warnings())
	}
}

// Attrs of every size read back: the oldest (64 bytes), 72, the newest
// known (136, perf 6.3+) and one newer than any known (160).
func TestReaderAttrSizes(t *testing.T) {
	for _, size := range []uint32{perf.AttrSizeVer0, perf.AttrSizeVer1, perf.AttrSizeVer8, 160} {
		path := filepath.Join(t.TempDir(), "a.data")
		a := orderAttr()
		a.Flags = 0 // sample_id_all lives past the first 64 bytes only in name: keep the attr comparable
		a.Size = size
		w, err := Create(path, []EventAttr{{Attr: a, IDs: []uint64{7}, Name: "cpu-clock"}})
		must(t, err)
		must(t, w.WriteRecord(timedSample(5, 1)))
		must(t, w.Close(Features{}))
		r, err := Open(path)
		must(t, err)
		got := r.Attrs()
		if r.Header().AttrSize != uint64(size)+fileSectionSize || len(got) != 1 || got[0].Attr.Size != size ||
			got[0].Attr.SampleType != orderST || got[0].Name != "cpu-clock" {
			t.Errorf("size %d: header %+v attrs %+v", size, r.Header(), got)
		}
		if d := deliveries(t, r); !slices.Equal(d, []string{"5"}) {
			t.Errorf("size %d: delivered %v", size, d)
		}
		r.Close()
	}
}

// callchainSample is a sample like perf record -g's: IP|TID|TIME|CPU|
// PERIOD|CALLCHAIN with a kernel and a user part.
func callchainSample(tm uint64, depth int) []byte {
	var b []byte
	b = le.AppendUint64(b, 0x401000+tm%4096)
	b = le.AppendUint32(b, 42)
	b = le.AppendUint32(b, 42)
	b = le.AppendUint64(b, tm)
	b = le.AppendUint32(b, uint32(tm%4))
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, 20000)
	b = le.AppendUint64(b, uint64(depth+2))
	b = le.AppendUint64(b, perf.ContextKernel)
	b = le.AppendUint64(b, 0xffffffff81000000)
	b = le.AppendUint64(b, perf.ContextUser)
	for i := range depth - 1 {
		b = le.AppendUint64(b, 0x401000+uint64(i)*16)
	}
	return record(perf.RecordSample, perf.MiscUser, b)
}

// BenchmarkReader reads a file of 100,000 callchain samples in rounds of
// 1,000, decoding every sample: the allocations per op are the reader's
// setup, not per record.
func BenchmarkReader(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.data")
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod | perf.SampleCallchain
	w, err := Create(path, []EventAttr{{Attr: cpuClockAttr(st), Name: "cpu-clock"}})
	if err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	size := 0
	for i := range n {
		rec := callchainSample(uint64(1_000_000+i*1000-(i%7)*3000), 20)
		size += len(rec)
		w.WriteRecord(rec)
		if i%1000 == 999 {
			w.WriteFinishedRound()
		}
	}
	if err := w.Close(Features{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	var s perf.Sample
	for b.Loop() {
		r, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for r.Next() {
			if r.Record().Type() == perf.RecordSample {
				if err := r.DecodeSample(&s); err != nil {
					b.Fatal(err)
				}
				got++
			}
		}
		r.Close()
		if got != n || r.Err() != nil {
			b.Fatalf("%d samples, %v", got, r.Err())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sample")
}

// Open reads a FIFO as a pipe-mode stream, as `perf record -o - | ...`
// through a named pipe or /dev/stdin.
func TestOpenFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s := newStream().add(attrRecord(orderAttr(), 7), timedSample(2, 0), timedSample(1, 0), finishedRound[:])
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(s.b)
		f.Close()
	}()
	r, err := Open(path)
	must(t, err)
	defer r.Close()
	if got := deliveries(t, r); !slices.Equal(got, []string{"1", "2", "R"}) || !r.Header().Pipe {
		t.Errorf("from a FIFO: %v, pipe %v", got, r.Header().Pipe)
	}
}

// Pipe-mode HEADER_BUILD_ID records (perf writes them at the end of a
// stream) join the build-id table.
func TestPipeBuildIDRecords(t *testing.T) {
	body := le.AppendUint32(nil, uint32(0xffffffff)) // pid -1
	id := make([]byte, buildIDField)
	copy(id, []byte{0xca, 0xfe})
	id[buildIDSize] = 2
	body = append(body, id...)
	body = appendString(body, "/usr/bin/true")
	s := newStream().add(attrRecord(orderAttr(), 7), timedSample(1, 0),
		record(perf.RecordHeaderBuildID, perf.MiscUser|miscBuildIDSize, body))
	r, err := NewPipeReader(bytes.NewReader(s.b))
	must(t, err)
	deliveries(t, r)
	want := []BuildID{{PID: -1, Misc: perf.MiscUser, ID: testID([]byte{0xca, 0xfe}), Path: "/usr/bin/true"}}
	if !reflect.DeepEqual(r.Features().BuildIDs, want) {
		t.Errorf("build-ids %+v", r.Features().BuildIDs)
	}
}
