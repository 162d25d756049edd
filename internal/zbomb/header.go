package zbomb

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/hwprof/hwprof/perf"
	"github.com/klauspost/compress/zstd"
)

// This file builds file-mode perf.data files whose header names sections
// that make a reader read or allocate far more than the file holds:
// sections that overlap, sizes just under a reader's caps, counts that a
// tiny file cannot hold, and header records inside COMPRESSED records.

var le = binary.LittleEndian

// Feature numbers (HEADER_* in tools/perf/util/header.h) the files use.
const (
	featBuildID     = 2
	featHostname    = 3
	featOSRelease   = 4
	featVersion     = 5
	featArch        = 6
	featNrCPUs      = 7
	featCPUDesc     = 8
	featCPUID       = 9
	featCmdline     = 11
	featEventDesc   = 12
	featCPUTopology = 13
	featNUMA        = 14
	featPMUMappings = 16
	featGroupDesc   = 17
	featHybrid      = 30
)

// stringFeatures are the features that hold one string each.
var stringFeatures = []int{featHostname, featOSRelease, featVersion, featArch, featCPUDesc, featCPUID}

// A file is a file-mode perf.data being built: the header's 104 bytes,
// then whatever put appends; finish writes the header.
type file struct {
	b []byte
}

// section mirrors struct perf_file_section.
type section struct{ off, size uint64 }

// newFile starts a file after its header.
func newFile() *file { return &file{b: make([]byte, 104)} }

// put appends p and returns where it lies.
func (f *file) put(p []byte) section {
	s := section{uint64(len(f.b)), uint64(len(p))}
	f.b = append(f.b, p...)
	return s
}

// feature is one entry of the feature table: a feature number and the
// section its entry names.
type feature struct {
	id  int
	sec section
}

// finish writes the header (attr entries of attrSize bytes in attrs, the
// records in data, the event types) and the feature table, which must
// come right after the data; feats' sections must lie in the file or be
// appended after the table by the caller.
func (f *file) finish(attrSize uint64, attrs, data, eventTypes section, feats []feature) []byte {
	h := f.b[:104]
	copy(h, "PERFILE2")
	le.PutUint64(h[8:], 104)
	le.PutUint64(h[16:], attrSize)
	for i, s := range []section{attrs, data, eventTypes} {
		le.PutUint64(h[24+16*i:], s.off)
		le.PutUint64(h[32+16*i:], s.size)
	}
	if data.off+data.size != uint64(len(f.b)) {
		panic("zbomb: the feature table must follow the data")
	}
	feats = slices.Clone(feats)
	slices.SortStableFunc(feats, func(a, b feature) int { return cmp.Compare(a.id, b.id) })
	for _, ft := range feats {
		h[72+ft.id/8] |= 1 << (ft.id % 8)
		f.b = le.AppendUint64(f.b, ft.sec.off)
		f.b = le.AppendUint64(f.b, ft.sec.size)
	}
	return f.b
}

// cpuClock is the attr of the files' events: cpu-clock sampling IP, TID,
// TIME and PERIOD, with IDENTIFIER so that events can be told apart.
func cpuClock() []byte {
	a := perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, Size: perf.AttrSizeVer8,
		SamplePeriod: 1000000, SampleType: perf.SampleIdentifier | perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod,
		Flags: perf.FlagSampleIDAll}
	return a.Marshal()
}

// finishedRound is a PERF_RECORD_FINISHED_ROUND record: the data of the
// files, which need no samples.
var finishedRound = []byte{68, 0, 0, 0, 0, 0, 8, 0}

// featBlob names blob number blob as feature id's section.
type featBlob struct{ id, blob int }

// simple builds a file with one cpu-clock event (no ids), a data section
// of one FINISHED_ROUND record, and after the feature table the blobs,
// which feats name as feature sections (several may name one blob).
func simple(blobs [][]byte, feats []featBlob) []byte {
	f := newFile()
	attr := cpuClock()
	attrs := f.put(append(attr, make([]byte, 16)...))
	data := f.put(finishedRound)
	at := uint64(len(f.b)) + 16*uint64(len(feats))
	var where []section
	for _, b := range blobs {
		where = append(where, section{at, uint64(len(b))})
		at += uint64(len(b))
	}
	var table []feature
	for _, fb := range feats {
		table = append(table, feature{fb.id, where[fb.blob]})
	}
	out := f.finish(uint64(len(attr)+16), attrs, data, section{}, table)
	for _, b := range blobs {
		out = append(out, b...)
	}
	return out
}

// str encodes a feature string as perf does: a u32 length, then the
// bytes, NUL-terminated and padded to the length.
func str(b []byte, s []byte, n int) []byte {
	b = le.AppendUint32(b, uint32(n))
	b = append(b, s...)
	return append(b, make([]byte, n-len(s))...)
}

// A FileShape is one hostile file-mode recording. Warning is a substring
// of the warning a reader that resists it gives.
type FileShape struct {
	Name    string
	File    []byte
	Warning string
}

// SixStrings is the file of issue 28: the six string features' table
// entries all name one string of n bytes ('h', NUL-terminated). It gzips
// to a thousandth of n.
func SixStrings(n int) FileShape {
	s := str(nil, bytes.Repeat([]byte("h"), n-5), n-4)
	var feats []featBlob
	for _, id := range stringFeatures {
		feats = append(feats, featBlob{id, 0})
	}
	return FileShape{"six-strings", simple([][]byte{s}, feats), "HOSTNAME"}
}

// FileShapes returns the hostile files, each at most a few megabytes.
func FileShapes() []FileShape {
	return []FileShape{
		stringsOverlap(),
		idsOverlap(2000, 64<<10),
		tablesUnderCaps(),
		hugeCounts(),
		tracepointsByEventTypes(50000, 1<<20),
		featureInData(),
	}
}

// FuzzSeeds returns small hostile files, for a fuzzer's corpus.
func FuzzSeeds() [][]byte {
	return [][]byte{SixStrings(64).File, idsOverlap(3, 2).File, hugeCounts().File, tracepointsByEventTypes(3, 144).File}
}

// stringsOverlap: the six string features on one string of 60,000 bytes,
// small enough for any cap: a reader reads it once.
func stringsOverlap() FileShape {
	sh := SixStrings(60000)
	sh.Name, sh.Warning = "strings-overlap", "overlaps"
	return sh
}

// idsOverlap: n events whose ids sections all name one section of ids
// sample ids (8 bytes each): n times ids ids from one copy.
func idsOverlap(n, ids int) FileShape {
	f := newFile()
	idb := make([]byte, 8*ids)
	for i := range ids {
		le.PutUint64(idb[8*i:], uint64(i+1))
	}
	idsAt := f.put(idb)
	attr := cpuClock()
	var entries []byte
	for range n {
		entries = append(entries, attr...)
		entries = le.AppendUint64(entries, idsAt.off)
		entries = le.AppendUint64(entries, idsAt.size)
	}
	attrs := f.put(entries)
	data := f.put(finishedRound)
	return FileShape{"ids-overlap", f.finish(uint64(len(attr)+16), attrs, data, section{}, nil), "overlaps"}
}

// tablesUnderCaps: every decoded feature but the two that grow with a
// recording (build-ids, event descriptions) at a size just under the caps
// of hwprof's reader (64 KiB for strings and fixed-size features, 1 MiB
// for topologies and the like, 16 MiB for the command line), made of the
// items that cost most memory once decoded and that the reader still
// takes: strings of 15 bytes, the smallest entries.
func tablesUnderCaps() FileShape {
	const small, topo, cmdline = 64<<10 - 8, 1<<20 - 8, 16<<20 - 8
	var blobs [][]byte
	var feats []featBlob
	add := func(id int, b []byte) {
		feats = append(feats, featBlob{id, len(blobs)})
		blobs = append(blobs, b)
	}
	for _, id := range stringFeatures {
		add(id, str(nil, []byte("x"), small-4))
	}
	// list appends a count and as many copies of item as fit in size
	// bytes.
	list := func(b []byte, size int, item []byte) []byte {
		n := (size - 4) / len(item)
		b = le.AppendUint32(b, uint32(n))
		return append(b, bytes.Repeat(item, n)...)
	}
	name := str(nil, []byte("abcdefghijklmno"), 16)
	zeros := func(n int) []byte { return make([]byte, n) }
	add(featNrCPUs, le.AppendUint32(le.AppendUint32(nil, 4), 4))
	add(featCmdline, list(nil, cmdline, name))
	add(featCPUTopology, list(list(nil, topo/2, name), topo/2, name))
	add(featNUMA, list(nil, topo, append(zeros(20), name...)))       // node, mem_total, mem_free, cpus
	add(featPMUMappings, list(nil, topo, append(zeros(4), name...))) // type, name
	add(featGroupDesc, list(nil, topo, append(name, zeros(8)...)))   // name, leader_idx, nr_members
	add(featHybrid, list(nil, topo, append(name, name...)))          // pmu_name, cpus
	return FileShape{"tables-under-caps", simple(blobs, feats), ""}
}

// hugeCounts: counts of billions in a file of a few hundred bytes.
func hugeCounts() FileShape {
	max32 := le.AppendUint32(nil, 0xffffffff)
	evdesc := le.AppendUint32(le.AppendUint32(nil, 1), 136)
	evdesc = append(evdesc, cpuClock()...)
	evdesc = le.AppendUint32(evdesc, 0xffffffff) // nr_ids
	evdesc = str(evdesc, []byte("cpu-clock"), 12)
	blobs := [][]byte{max32, evdesc, le.AppendUint32(le.AppendUint32(nil, 0xffffffff), 0xffffffff), append(max32, 0, 0, 0, 0), max32, max32}
	var feats []featBlob
	for i, id := range []int{featCmdline, featEventDesc, featNrCPUs, featCPUTopology, featNUMA, featPMUMappings} {
		feats = append(feats, featBlob{id, i})
	}
	return FileShape{"huge-counts", simple(blobs, feats), "do not fit"}
}

// tracepointsByEventTypes: n tracepoint events and an event_types
// section of size bytes naming ids none of them has: a reader that looks
// each event up in the whole list compares n times size/72 names.
func tracepointsByEventTypes(n, size int) FileShape {
	f := newFile()
	types := make([]byte, size/72*72)
	for i := 0; i < len(types); i += 72 {
		le.PutUint64(types[i:], uint64(1<<40+i))
		copy(types[i+8:], "sched:sched_switch")
	}
	et := f.put(types)
	a := perf.Attr{Type: perf.TypeTracepoint, Config: 1, Size: perf.AttrSizeVer0, SamplePeriod: 1,
		SampleType: perf.SampleIdentifier | perf.SampleIP | perf.SampleTID | perf.SampleTime}
	attr := a.Marshal()[:perf.AttrSizeVer0]
	entries := make([]byte, 0, n*(len(attr)+16))
	for range n {
		entries = append(entries, attr...)
		entries = append(entries, make([]byte, 16)...)
	}
	attrs := f.put(entries)
	data := f.put(finishedRound)
	return FileShape{"tracepoints-x-event-types", f.finish(uint64(len(attr)+16), attrs, data, et, nil), ""}
}

// featureInData: the command line's section is the data section itself.
func featureInData() FileShape {
	f := newFile()
	attr := cpuClock()
	attrs := f.put(append(attr, make([]byte, 16)...))
	data := f.put(bytes.Repeat(finishedRound, 100))
	return FileShape{"feature-in-data", f.finish(uint64(len(attr)+16), attrs, data, section{}, []feature{{featCmdline, data}}), "overlaps"}
}

// CompressedHeaderRecords returns a pipe-mode stream of records COMPRESSED
// records, each a zstd frame that expands to about 8 MiB of
// HEADER_BUILD_ID and HEADER_ATTR records: header records a reader would
// keep, records times 8 MiB of them from a stream of a few kilobytes per
// record.
func CompressedHeaderRecords(records int) []byte {
	var unit []byte
	// HEADER_BUILD_ID: header, pid, build_id[24], filename padded.
	bid := le.AppendUint32(nil, 67)
	bid = le.AppendUint16(bid, 0)
	bid = le.AppendUint16(bid, 8+4+24+64)
	bid = le.AppendUint32(bid, 0xffffffff)
	bid = append(bid, bytes.Repeat([]byte{0xab}, 20)...)
	bid = append(bid, 0, 0, 0, 0)
	bid = append(bid, []byte("/usr/lib/x86_64-linux-gnu/libbomb.so")...)
	bid = append(bid, make([]byte, 8+4+24+64-len(bid))...)
	unit = append(unit, bid...)
	// HEADER_ATTR: header, the attr, one id.
	attr := cpuClock()
	ar := le.AppendUint32(nil, 64)
	ar = le.AppendUint16(ar, 0)
	ar = le.AppendUint16(ar, uint16(8+len(attr)+8))
	ar = append(ar, attr...)
	ar = le.AppendUint64(ar, 0x1234)
	unit = append(unit, ar...)
	plain := bytes.Repeat(unit, (8<<20)/len(unit))
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err)
	}
	frame := enc.EncodeAll(plain, nil)
	enc.Close()
	if len(frame) > MaxData {
		panic("zbomb: frame too large for one record")
	}
	data := make([][]byte, records)
	for i := range data {
		data[i] = frame
	}
	return Pipe(data...)
}
