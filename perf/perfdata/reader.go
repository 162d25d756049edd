package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"

	"github.com/hwprof/hwprof/perf"
)

// ErrNotPerfData is matched by the error for input that does not start
// with a perf.data header.
var ErrNotPerfData = errors.New("not a perf.data file")

// ErrTruncated is matched by the error for input that ends inside a record
// or before the data section's end.
var ErrTruncated = errors.New("perf.data truncated")

// pipeHeaderSize is sizeof(struct perf_pipe_file_header): magic and size.
const pipeHeaderSize = 16

// fileHeaderSizeV1 is offsetof(struct perf_file_header, adds_features):
// files of perf before feature bits had this header (perf still reads it).
const fileHeaderSizeV1 = 72

// maxAttrSize bounds the attr entries of the attrs section; the largest
// attr known is 136 bytes.
const maxAttrSize = 4096

// Section mirrors struct perf_file_section: a byte range of the file.
type Section struct {
	Offset, Size uint64
}

// End returns the offset just past the section (saturating, never
// wrapping around).
func (s Section) End() uint64 {
	if s.Size > math.MaxUint64-s.Offset {
		return math.MaxUint64
	}
	return s.Offset + s.Size
}

// Header is the perf.data file header (struct perf_file_header), or for
// pipe mode only Pipe and Size (struct perf_pipe_file_header).
type Header struct {
	Pipe bool
	// Version is the format's version: 2 for the "PERFILE2" magic, 1 for
	// the "PERFFILE" magic of perf before 2012 (struct perf_file_header is
	// the same; only the magic and the attrs are read differently).
	Version    int
	Size       uint64  // header size: 104, 72 (old files) or 16 (pipe)
	AttrSize   uint64  // size of one attrs entry (attr and its ids section)
	Attrs      Section // the attrs section
	Data       Section // the records
	EventTypes Section // old tracepoint names (perf_trace_event_type), usually empty
	// Features is the adds_features bitmap: which feature sections follow
	// the data.
	Features [FeatBits / 64]uint64
	FileSize int64 // size of the file, -1 for a stream
}

// HasFeature reports whether the header announces feature f.
func (h *Header) HasFeature(f Feature) bool {
	return f >= 0 && f < FeatBits && h.Features[f/64]>>(f%64)&1 != 0
}

// Record is one record as the Reader delivers it.
type Record struct {
	// Offset is where the record starts in the file (in a stream, from its
	// first byte). A record decompressed from a COMPRESSED or COMPRESSED2
	// record has that record's offset, and Compressed set.
	Offset     int64
	Compressed bool
	// Time is the record's timestamp (TIME of a sample, or of the
	// sample_id trailer); HasTime is false for records without one, which
	// are delivered as soon as they are read.
	Time    uint64
	HasTime bool
	// Raw is the whole record, header first. It is valid until the next
	// call to Next, until Close if Stable, or for good if Kept.
	Raw []byte
	// Kept says Raw is never overwritten by the Reader: the caller may
	// keep it after Next without copying. With SetKeepRecords(true) it is
	// true for the records read from the file or stream (Raw is then a
	// slice of a buffer the Reader never writes again). It is false for
	// records from COMPRESSED records, whose buffer is reused, and for
	// every record without SetKeepRecords(true): the Reader then reuses
	// its buffers once it needs their records no more.
	Kept bool
	// Stable says Raw is never overwritten and stays valid until Close
	// (not after it, unless Kept): true for the Kept records and for those
	// of a file whose data section the Reader maps (file mode, not
	// compressed, not SetKeepRecords), false for those from COMPRESSED
	// records.
	Stable bool
}

// Type returns the record's type.
func (r Record) Type() perf.RecordType { return perf.RecordType(binary.LittleEndian.Uint32(r.Raw)) }

// Header returns the record's header.
func (r Record) Header() perf.RecordHeader {
	h, _ := perf.ParseHeader(r.Raw)
	return h
}

// Reader reads a perf.data file or stream record by record, shaped like
// bufio.Scanner:
//
//	r, err := perfdata.Open(path)
//	...
//	defer r.Close()
//	for r.Next() {
//		rec := r.Record()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
//
// Records come in time order across CPUs, as perf report delivers them:
// records with a timestamp are held until the FINISHED_ROUND (or
// FINISHED_INIT) record that ends their round, sorted stably by time and
// delivered; records without one (perf's own records, and kernel records
// without sample_id_all) are delivered when read. Memory is bounded by one
// round (and by a cap past which the older half is delivered early, as
// perf does). COMPRESSED and COMPRESSED2 records are delivered, followed
// by the records they hold. PERF_RECORD_HEADER_ATTR, EVENT_UPDATE
// and HEADER_FEATURE records update Attrs, Format and Features as
// they pass.
//
// Problems that leave the rest readable (an undecodable feature section,
// a record whose event is unknown, trailing bytes) are collected in
// Warnings; the library prints nothing. Incomplete tells the warnings that
// mean records were lost (a COMPRESSED record that could not be
// decompressed, a record skipped, a file cut short) from mere notes. A
// Reader is not safe for concurrent use.
type Reader struct {
	hdr    Header
	file   *os.File // Open's file, closed by Close
	src    source
	format *perf.SampleFormat
	attrs  []EventAttr
	feats  FileFeatures

	unordered bool // deliver in file order
	queue     roundQueue
	badEvent  int64             // kernel records whose event could not be told
	updNames  map[int]string    // event names from EVENT_UPDATE records
	descByID  map[uint64]int    // EVENT_DESC entry of each id (indexEventDesc)
	typeNames map[uint64]string // tracepoint names by id (EventTypes; the last wins)

	// The budget (reader_budget.go): the file's byte ranges read so far,
	// and the bytes of header sections and records applied.
	read       spans
	hdrBytes   int64
	hdrSkipped int64 // header records from COMPRESSED records ignored

	cur      Record
	counts   [128]int64
	other    map[perf.RecordType]int64
	total    int64
	warnings []string
	lossy    bool // a warning said that records were lost (lose)
	err      error
	done     bool
	closed   bool
	// growing: the file is being written (OpenGrowing); paused: Next
	// stopped at the end of what its header covered (Grow goes on)
	growing, paused bool
	ra              io.ReaderAt // the file, for Grow
}

// Open opens a perf.data file: file mode, or pipe mode (a stream written
// by `perf record -o -` and saved), told apart by the header's size; a
// FIFO or character device is read as a pipe-mode stream. It reads the
// header, the attrs and the feature sections; Next reads the records.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("perfdata: %w", err) // "open PATH: ..."
	}
	return OpenFile(f)
}

// OpenFile reads a perf.data file from f, an open file (os.Stdin for
// "-i -"), as Open does: a regular file in file or pipe mode, anything
// else as a pipe-mode stream. The Reader owns f: Close closes it, and so
// does OpenFile when it fails.
func OpenFile(f *os.File) (*Reader, error) {
	path := f.Name()
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("perfdata: open: %w", err)
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		// A FIFO or a character device (/dev/stdin): a pipe-mode stream.
		r, err := newPipeReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("perfdata: open %s: %w", path, err)
		}
		r.file = f
		return r, nil
	}
	r, err := newReader(f, st.Size(), false)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("perfdata: open %s: %w", path, err)
	}
	r.file = f
	return r, nil
}

// NewReader reads a perf.data file of size bytes from ra (file or pipe
// mode); see Open.
func NewReader(ra io.ReaderAt, size int64) (*Reader, error) {
	r, err := newReader(ra, size, false)
	if err != nil {
		return nil, fmt.Errorf("perfdata: %w", err)
	}
	return r, nil
}

// NewPipeReader reads a pipe-mode stream (`perf record -o -`): the
// 16-byte header, then records, attrs and features among them.
func NewPipeReader(rd io.Reader) (*Reader, error) {
	r, err := newPipeReader(rd)
	if err != nil {
		return nil, fmt.Errorf("perfdata: %w", err)
	}
	return r, nil
}

func newPipeReader(rd io.Reader) (*Reader, error) {
	var b [pipeHeaderSize]byte
	if _, err := io.ReadFull(rd, b[:]); err != nil {
		return nil, fmt.Errorf("read pipe header: %w (%w)", err, ErrNotPerfData)
	}
	version, err := checkMagic(b[:])
	if err != nil {
		return nil, err
	}
	switch sz := binary.LittleEndian.Uint64(b[8:]); sz {
	case pipeHeaderSize:
	case fileHeaderSize, fileHeaderSizeV1:
		return nil, fmt.Errorf("header size %d at offset 8: a file-mode perf.data cannot be read from a stream; read it from a file", sz)
	default:
		return nil, fmt.Errorf("header size %d at offset 8: want %d for a pipe (%w)", sz, pipeHeaderSize, ErrNotPerfData)
	}
	r := newEmptyReader()
	r.hdr = Header{Pipe: true, Version: version, Size: pipeHeaderSize, FileSize: -1}
	r.src.init(rd, pipeHeaderSize, -1, -1)
	return r, nil
}

func newEmptyReader() *Reader {
	f, _ := perf.NewSampleFormat()
	return &Reader{format: f}
}

// magicV1 is the magic of perf.data version 1 ("PERFFILE", __perf_magic1
// in tools/perf/util/header.c). Unlike "PERFILE2" it reads the same in
// both byte orders: perf tells a big-endian version 1 file by its attr
// entry size (try_all_file_abis).
const magicV1 = "PERFFILE"

// checkMagic returns the format version of the magic in b[:8], as perf's
// check_magic_endian tells it.
func checkMagic(b []byte) (int, error) {
	switch string(b[:8]) {
	case magic:
		return 2, nil
	case magicV1:
		return 1, nil
	case "2ELIFREP":
		return 0, fmt.Errorf("big-endian perf.data (magic %q) is not supported", b[:8])
	}
	return 0, fmt.Errorf("magic %q at offset 0: want %q (%w)", b[:8], magic, ErrNotPerfData)
}

// attrEntrySizesV1 are the attr entry sizes perf accepts in a version 1
// file: sizeof(struct perf_file_section) plus PERF_ATTR_SIZE_VER0 to
// VER4 (attr_file_abi_sizes in tools/perf/util/header.c). perf refuses a
// version 1 file with any other size, and takes one that matches only
// byte-swapped for a big-endian file.
var attrEntrySizesV1 = [...]uint64{
	perf.AttrSizeVer0 + fileSectionSize,
	perf.AttrSizeVer1 + fileSectionSize,
	perf.AttrSizeVer2 + fileSectionSize,
	perf.AttrSizeVer3 + fileSectionSize,
	perf.AttrSizeVer4 + fileSectionSize,
}

// checkAttrSizeV1 checks the attr entry size (header offset 16) of a
// version 1 file as try_all_file_abis does.
func checkAttrSizeV1(size uint64) error {
	for _, want := range attrEntrySizesV1 {
		if size == want {
			return nil
		}
	}
	for _, want := range attrEntrySizesV1 {
		if bits.ReverseBytes64(size) == want {
			return fmt.Errorf("big-endian perf.data version 1 (attr entry size %d at offset 16 byte-swapped) is not supported", want)
		}
	}
	return fmt.Errorf("perf.data version 1 with attr entry size %d at offset 16: want one of %v, as perf", size, attrEntrySizesV1)
}

// newReader reads the header, attrs and feature sections of a file of
// size bytes; growing: one its writer is still writing (OpenGrowing), read
// up to the end of its header's data section, without a mapping.
func newReader(ra io.ReaderAt, size int64, growing bool) (*Reader, error) {
	var b [fileHeaderSize]byte
	n, err := ra.ReadAt(b[:], 0)
	if n < pipeHeaderSize {
		if err == nil || err == io.EOF {
			err = ErrNotPerfData
		}
		return nil, fmt.Errorf("read header: %d bytes: %w", n, err)
	}
	version, err := checkMagic(b[:])
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	hsz := le.Uint64(b[8:])
	if hsz == pipeHeaderSize {
		if growing {
			return nil, errors.New("a pipe-mode file cannot be read while it is written: it has no data size to go by")
		}
		r := newEmptyReader()
		r.hdr = Header{Pipe: true, Version: version, Size: pipeHeaderSize, FileSize: size}
		r.src.init(io.NewSectionReader(ra, pipeHeaderSize, size-pipeHeaderSize), pipeHeaderSize, -1, size-pipeHeaderSize)
		return r, nil
	}
	if version == 1 {
		// perf tells the byte order of a version 1 file by its attr entry
		// size, before it looks at the header size.
		if n < fileHeaderSizeV1 {
			return nil, fmt.Errorf("header: file has %d bytes, header needs %d (%w)", n, fileHeaderSizeV1, ErrTruncated)
		}
		if err := checkAttrSizeV1(le.Uint64(b[16:])); err != nil {
			return nil, err
		}
	}
	if hsz != fileHeaderSize && hsz != fileHeaderSizeV1 {
		return nil, fmt.Errorf("header size %d at offset 8: want %d (file) or %d (pipe) (%w)", hsz, fileHeaderSize, pipeHeaderSize, ErrNotPerfData)
	}
	if int64(n) < int64(hsz) {
		return nil, fmt.Errorf("header: file has %d bytes, header needs %d (%w)", n, hsz, ErrTruncated)
	}
	r := newEmptyReader()
	h := &r.hdr
	*h = Header{
		Version:    version,
		Size:       hsz,
		AttrSize:   le.Uint64(b[16:]),
		Attrs:      Section{le.Uint64(b[24:]), le.Uint64(b[32:])},
		Data:       Section{le.Uint64(b[40:]), le.Uint64(b[48:])},
		EventTypes: Section{le.Uint64(b[56:]), le.Uint64(b[64:])},
		FileSize:   size,
	}
	if hsz == fileHeaderSize {
		for i := range h.Features {
			h.Features[i] = le.Uint64(b[72+8*i:])
		}
	}
	r.read.claim([]span{{Section{0, hsz}, "header"}})
	if h.Data.Offset <= uint64(size) {
		r.read.claim([]span{{Section{h.Data.Offset, min(h.Data.Size, uint64(size)-h.Data.Offset)}, "data section"}})
	}
	if err := r.readAttrs(ra); err != nil {
		return nil, err
	}
	if err := r.checkSection("data", 40, h.Data); err != nil {
		return nil, err
	}
	r.readEventTypes(ra)
	cut := r.cutShort()
	if growing {
		r.growing = h.Features == [FeatBits / 64]uint64{} || h.Data.Size == 0
		cut = cut && !r.growing // the records past the data section are being written
	}
	if !cut { // else there are no feature sections: records follow
		r.readFeatureSections(ra)
	}
	r.nameEvents()
	// The data section as claimed (bounded to stay an int64) and as far
	// as the file goes.
	claimed := h.Data.Offset + min(h.Data.Size, math.MaxInt64-h.Data.Offset)
	avail := h.Data.Offset + min(h.Data.Size, uint64(size)-h.Data.Offset)
	off := int64(h.Data.Offset)
	if cut {
		// Records past the header's data size, up to the end of the file.
		r.src.cut = int64(claimed)
		claimed, avail = uint64(size), uint64(size)
		r.lose(fmt.Sprintf("the recording was cut short (its writer did not finish it): the header's data section ends at %#x, the file at %#x: reading the records up to the end of the file", h.Data.End(), size))
	} else if h.Data.Size == 0 && !r.growing {
		r.warn("the data section is empty (size 0 at offset 48): no records")
	}
	r.src.init(io.NewSectionReader(ra, off, int64(avail)-off), off, int64(claimed), int64(avail)-off)
	if f, ok := ra.(*os.File); ok && !growing && r.feats.Compression == nil && avail-uint64(off) <= math.MaxUint32 {
		// Records are placed in a chunk by a 32-bit start: map at most 4 GiB.
		r.src.mp = dataMap{f: f, off: off, end: int64(avail)}
	}
	return r, nil
}

// cutShort reports whether the file is one whose writer died before
// finishing it: perf and hwprof write the feature sections last, after the
// records, and rewrite the header with the data size then (hwprof also at
// checkpoints, perf not before the end). A file with bytes past its data
// section but no feature bits (hwprof), or a data size of 0 (perf), holds
// records written after the last header update.
func (r *Reader) cutShort() bool {
	h := &r.hdr
	if h.Data.End() >= uint64(h.FileSize) {
		return false
	}
	// perf record writes the feature bits at the start, with a data size
	// of 0 until it finishes.
	if h.Features != [FeatBits / 64]uint64{} && h.Data.Size != 0 {
		return false
	}
	// Feature sections, attrs, ids and event types may sit after the
	// data (files of other writers): then the bytes are not records.
	end := h.Data.End()
	for _, s := range []Section{h.Attrs, h.EventTypes} {
		if s.Size > 0 && s.Offset >= end {
			return false
		}
	}
	return true
}

// checkSection verifies that s (at header offset at) lies inside the
// file. A data section that runs past the end is read up to the end and
// reported there.
func (r *Reader) checkSection(name string, at int, s Section) error {
	size := uint64(r.hdr.FileSize)
	if s.Offset > size || s.Offset > math.MaxInt64 || (name != "data" && s.Size > size-s.Offset) {
		return fmt.Errorf("%s section %#x+%#x (header offset %d) lies outside the file of %d bytes (%w)",
			name, s.Offset, s.Size, at, size, ErrTruncated)
	}
	if name == "data" && s.Size > size-s.Offset {
		r.lose(fmt.Sprintf("data section %#x+%#x runs past the end of the file (%d bytes): reading up to there", s.Offset, s.Size, size))
	}
	return nil
}

// readAttrs reads the attrs section: AttrSize-byte entries, each an attr
// followed by the perf_file_section of its ids. In a version 1 file the
// entries are read as perf reads them all (read_attr in
// tools/perf/util/header.c): Attrs.Size/AttrSize of them one after the
// other, each as long as its attr says (size 0: PERF_ATTR_SIZE_VER0).
// The attrs section and the ids sections are claimed (reader_budget.go):
// an attrs section that overlaps the header or the data is an error, the
// ids of an event that overlap those of another are not read.
func (r *Reader) readAttrs(ra io.ReaderAt) error {
	h := &r.hdr
	if err := r.checkSection("attrs", 24, h.Attrs); err != nil {
		return err
	}
	if h.Attrs.Size == 0 {
		return nil
	}
	if h.AttrSize < perf.AttrSizeVer0+fileSectionSize || h.AttrSize > maxAttrSize+fileSectionSize {
		return fmt.Errorf("attr entry size %d (header offset 16): want %d to %d", h.AttrSize, perf.AttrSizeVer0+fileSectionSize, maxAttrSize+fileSectionSize)
	}
	n := h.Attrs.Size / h.AttrSize
	size := h.Attrs.Size
	if h.Version == 1 {
		// Entries of up to the largest attr known, as far as the file goes.
		size = min(n*(perf.AttrSizeVer8+fileSectionSize), uint64(h.FileSize)-h.Attrs.Offset)
	} else if h.Attrs.Size%h.AttrSize != 0 {
		return fmt.Errorf("attrs section of %d bytes at %#x is not a multiple of the entry size %d", h.Attrs.Size, h.Attrs.Offset, h.AttrSize)
	}
	if c, refused := r.read.claimOne("attrs section", h.Attrs); refused {
		return fmt.Errorf("attrs section %#x+%#x (header offset 24) overlaps the %s (%#x+%#x)", h.Attrs.Offset, h.Attrs.Size, c.what, c.Offset, c.Size)
	}
	buf, err := r.readSection(ra, Section{h.Attrs.Offset, size})
	if err != nil {
		return fmt.Errorf("read attrs section at %#x: %w", h.Attrs.Offset, err)
	}
	entries, err := r.attrEntries(buf, n)
	if err != nil {
		return err
	}
	return r.readIDs(ra, entries)
}

// attrEntry is one entry of the attrs section, at offset start: an attr
// of attrLen bytes, then the section of its ids.
type attrEntry struct {
	attr    perf.Attr
	ids     Section
	start   uint64
	attrLen int
}

// attrEntries decodes the n entries of the attrs section read into buf.
func (r *Reader) attrEntries(buf []byte, n uint64) ([]attrEntry, error) {
	h := &r.hdr
	le := binary.LittleEndian
	out := make([]attrEntry, 0, n)
	off := uint64(0)
	for range n {
		attrLen := h.AttrSize - fileSectionSize
		if h.Version == 1 {
			var err error
			if attrLen, err = attrLenV1(buf[off:], h.Attrs.Offset+off); err != nil {
				return nil, err
			}
		}
		e := buf[off : off+attrLen+fileSectionSize]
		raw := e[:attrLen]
		a, err := perf.UnmarshalAttr(raw)
		if err != nil {
			return nil, fmt.Errorf("attr at %#x: %w", h.Attrs.Offset+off, err)
		}
		ids := Section{le.Uint64(e[len(raw):]), le.Uint64(e[len(raw)+8:])}
		at := h.Attrs.Offset + off + uint64(len(raw))
		if ids.Offset > uint64(h.FileSize) || ids.Size > uint64(h.FileSize)-ids.Offset || ids.Size%8 != 0 {
			return nil, fmt.Errorf("ids of attr %d: section %#x+%#x (at %#x) lies outside the file of %d bytes", len(out), ids.Offset, ids.Size, at, h.FileSize)
		}
		out = append(out, attrEntry{a, ids, h.Attrs.Offset + off, len(raw)})
		off += uint64(len(e))
	}
	return out, nil
}

// readIDs reads the ids of the entries and adds the events. Ids sections
// that overlap the header, the data, the attrs or those of another event
// are not read: their events get no ids, and one warning says how many.
func (r *Reader) readIDs(ra io.ReaderAt, entries []attrEntry) error {
	cands := make([]span, len(entries))
	for i, e := range entries {
		cands[i] = span{e.ids, fmt.Sprintf("ids of attr %d", i)}
	}
	clash := r.read.claim(cands)
	refused, first := 0, -1
	r.attrs = make([]EventAttr, 0, len(entries))
	r.format.Grow(len(entries))
	for i, e := range entries {
		var list []uint64
		if clash[i].what != "" {
			if refused++; first < 0 {
				first = i
			}
		} else {
			var err error
			if list, err = r.readIDList(ra, i, e.ids); err != nil {
				return err
			}
		}
		if err := r.addAttr(e.attr, list); err != nil {
			return fmt.Errorf("attr at %#x: %w", e.start, err)
		}
	}
	if refused > 0 {
		e, c := entries[first], clash[first]
		r.warn(fmt.Sprintf("ids of %d attrs not read, their samples cannot be told apart: the first, attr %d, names section %#x+%#x (at %#x), which overlaps the %s (%#x+%#x)",
			refused, first, e.ids.Offset, e.ids.Size, e.start+uint64(e.attrLen), c.what, c.Offset, c.Size))
	}
	return nil
}

// readIDList reads the ids of attr i, in section s.
func (r *Reader) readIDList(ra io.ReaderAt, i int, s Section) ([]uint64, error) {
	idb, err := r.readSection(ra, s)
	if err != nil {
		return nil, fmt.Errorf("read ids of attr %d at %#x: %w", i, s.Offset, err)
	}
	list := make([]uint64, s.Size/8)
	for j := range list {
		list[j] = binary.LittleEndian.Uint64(idb[8*j:])
	}
	return list, nil
}

// attrLenV1 returns the length of the attr that starts b, an entry of a
// version 1 file at offset at, as read_attr tells it: its size field,
// PERF_ATTR_SIZE_VER0 if 0. The entry, its ids section included, must lie
// in b.
func attrLenV1(b []byte, at uint64) (uint64, error) {
	if len(b) < perf.AttrSizeVer0+fileSectionSize {
		return 0, fmt.Errorf("attr at %#x: %d bytes left in the file, want at least %d (%w)", at, len(b), perf.AttrSizeVer0+fileSectionSize, ErrTruncated)
	}
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	switch {
	case n == 0:
		n = perf.AttrSizeVer0
	case n < perf.AttrSizeVer0 || n > perf.AttrSizeVer8:
		return 0, fmt.Errorf("attr at %#x: size %d at %#x: want 0 or %d to %d", at, n, at+4, perf.AttrSizeVer0, perf.AttrSizeVer8)
	}
	if n+fileSectionSize > uint64(len(b)) {
		return 0, fmt.Errorf("attr at %#x: size %d: its entry runs past the end of the file (%w)", at, n, ErrTruncated)
	}
	return n, nil
}

// addAttr adds an event to the attrs and the sample format.
func (r *Reader) addAttr(a perf.Attr, ids []uint64) error {
	if _, err := r.format.Add(a, ids); err != nil {
		return err
	}
	r.attrs = append(r.attrs, EventAttr{Attr: a, IDs: ids})
	return nil
}

// readEventTypes reads the old event_types section: perf_trace_event_type
// entries (u64 event_id, char name[64]) naming tracepoints.
func (r *Reader) readEventTypes(ra io.ReaderAt) {
	s := r.hdr.EventTypes
	if s.Size == 0 {
		return
	}
	if s.Offset > uint64(r.hdr.FileSize) || s.Size > uint64(r.hdr.FileSize)-s.Offset || s.Size > 1<<20 {
		r.warn(fmt.Sprintf("event_types section %#x+%#x (header offset 56) lies outside the file: ignored", s.Offset, s.Size))
		return
	}
	if c, refused := r.read.claimOne("event_types section", s); refused {
		r.warn(fmt.Sprintf("event_types section %#x+%#x (header offset 56) overlaps the %s (%#x+%#x): ignored", s.Offset, s.Size, c.what, c.Offset, c.Size))
		return
	}
	b, err := r.readSection(ra, s)
	if err != nil {
		r.warn(fmt.Sprintf("event_types section at %#x: %v: ignored", s.Offset, err))
		return
	}
	for len(b) >= 72 {
		r.addEventType(EventTypeName{ID: binary.LittleEndian.Uint64(b), Name: cstring(b[8:72])})
		b = b[72:]
	}
}

// addEventType adds a tracepoint's name; a later name for an id replaces
// an earlier one.
func (r *Reader) addEventType(et EventTypeName) {
	r.feats.EventTypes = append(r.feats.EventTypes, et)
	if r.typeNames == nil {
		r.typeNames = make(map[uint64]string)
	}
	r.typeNames[et.ID] = et.Name
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// nameEvents names the events: by an EVENT_UPDATE name record, else by
// EVENT_DESC (matched by ids, or by position), else by the tracepoint
// names of old files, else perf's default name for the attr. It indexes
// the EVENT_DESC entries by id first, so that naming costs the same per
// event however many events there are.
func (r *Reader) nameEvents() {
	r.indexEventDesc()
	for i := range r.attrs {
		r.nameEvent(i)
	}
}

// indexEventDesc maps every id of the EVENT_DESC entries to the first
// entry that has it, for eventDescFor.
func (r *Reader) indexEventDesc() {
	clear(r.descByID)
	for j := range r.feats.EventDesc {
		for _, id := range r.feats.EventDesc[j].IDs {
			if r.descByID == nil {
				r.descByID = make(map[uint64]int)
			}
			if _, ok := r.descByID[id]; !ok {
				r.descByID[id] = j
			}
		}
	}
}

// nameEvent names event i (see nameEvents; the EVENT_DESC index must be
// up to date).
func (r *Reader) nameEvent(i int) {
	a := &r.attrs[i]
	if n, ok := r.updNames[i]; ok {
		a.Name = n
		return
	}
	if d := r.eventDescFor(i, a); d != nil && d.Name != "" {
		a.Name = d.Name
		return
	}
	a.Name = ""
	if a.Attr.Type == perf.TypeTracepoint {
		a.Name = r.typeNames[a.Attr.Config]
	}
	if a.Name == "" {
		a.Name = DefaultEventName(&a.Attr)
	}
}

// eventDescFor returns the EVENT_DESC entry of event i: the one with the
// same ids, or the i-th when the attrs agree.
func (r *Reader) eventDescFor(i int, a *EventAttr) *EventDesc {
	ff := &r.feats
	if len(a.IDs) > 0 {
		if j, ok := r.descByID[a.IDs[0]]; ok && j < len(ff.EventDesc) {
			return &ff.EventDesc[j]
		}
	}
	if i < len(ff.EventDesc) {
		d := &ff.EventDesc[i]
		if d.Attr.Type == a.Attr.Type && d.Attr.Config == a.Attr.Config {
			return d
		}
	}
	return nil
}

// Header returns the file header.
func (r *Reader) Header() *Header { return &r.hdr }

// Attrs returns the events: from the attrs section in file mode, from the
// HEADER_ATTR records read so far in pipe mode. Names come from the
// EVENT_DESC feature or EVENT_UPDATE records, else perf's default name.
func (r *Reader) Attrs() []EventAttr { return r.attrs }

// Features returns the feature sections decoded so far: all of them in
// file mode, those of the HEADER_FEATURE records read so far in pipe mode.
func (r *Reader) Features() *FileFeatures { return &r.feats }

// Format returns the sample format of the events, for decoding records.
func (r *Reader) Format() *perf.SampleFormat { return r.format }

// SetFileOrder makes the Reader deliver records in file order instead of
// time order (as `perf report -D` prints them). Call it before Next.
func (r *Reader) SetFileOrder(fileOrder bool) { r.unordered = fileOrder }

// SetKeepRecords makes the Reader read into fresh buffers that it never
// writes again, so that the records it reads from the file or stream can
// be kept after Next without copying (Record.Kept). It costs a fresh
// allocation (zeroed by Go, then freed by the garbage collector) for every
// 128 KiB read; without it, the Reader reuses a few buffers and every Raw is
// valid until the next call to Next only. Call it before Next.
func (r *Reader) SetKeepRecords(keep bool) { r.src.keep = keep }

// Record returns the current record; its Raw bytes are valid until the
// next call to Next, or for as long as the caller keeps them if Kept.
//
// It copies the fields one by one: Next has just stored them one by one,
// and a copy of the whole struct with wide loads would wait for those
// stores to reach the cache (a failed store forward on every record).
func (r *Reader) Record() Record {
	c := &r.cur
	return Record{Offset: c.Offset, Compressed: c.Compressed, Time: c.Time, HasTime: c.HasTime, Raw: c.Raw, Kept: c.Kept, Stable: c.Stable}
}

// Raw returns the current record's Raw and Stable (see Record), for a
// caller that reads nothing else of it: no Record is built and copied.
func (r *Reader) Raw() (raw []byte, stable bool) { return r.cur.Raw, r.cur.Stable }

// DecodeSample decodes the current record, a SAMPLE, into s; see
// perf.SampleFormat.DecodeSample.
func (r *Reader) DecodeSample(s *perf.Sample) error { return r.format.DecodeSample(r.cur.Raw, s) }

// Decode decodes the current record into its typed struct; see
// perf.SampleFormat.Decode.
func (r *Reader) Decode() (perf.Record, error) { return r.format.Decode(r.cur.Raw) }

// Err returns the error that stopped Next, or nil at a clean end. Records
// read before the error have all been delivered.
func (r *Reader) Err() error { return r.err }

// Warnings returns what was wrong but did not stop reading.
func (r *Reader) Warnings() []string { return r.warnings }

// Incomplete reports whether records of the recording were lost so far:
// reading stopped at an error (Err), or a warning says that records were
// skipped or lost (a COMPRESSED record that could not be decompressed, a
// record that could not be decoded or attributed to its event, a partial
// record at the end of a COMPRESSED record) or that the file was cut
// short. Warnings that lose no record (a feature section that could not
// be read, a few stray bytes after the last record) leave it false.
func (r *Reader) Incomplete() bool { return r.lossy || r.err != nil }

const maxWarnings = 100

// lose is warn for a problem that lost records (see Incomplete).
func (r *Reader) lose(s string) {
	r.lossy = true
	r.warn(s)
}

func (r *Reader) warn(s string) {
	switch {
	case len(r.warnings) < maxWarnings:
		r.warnings = append(r.warnings, s)
	case len(r.warnings) == maxWarnings:
		r.warnings = append(r.warnings, "more warnings not shown")
	}
}

// Count returns how many records of type t were read so far (records
// inside COMPRESSED records included), as perf report --stats counts them.
func (r *Reader) Count(t perf.RecordType) int64 {
	if int(t) < len(r.counts) {
		return r.counts[t]
	}
	return r.other[t]
}

// Counts returns the number of records read so far per type.
func (r *Reader) Counts() map[perf.RecordType]int64 {
	m := make(map[perf.RecordType]int64)
	for t, n := range r.counts {
		if n != 0 {
			m[perf.RecordType(t)] = n
		}
	}
	for t, n := range r.other {
		m[t] = n
	}
	return m
}

// Total returns the number of records read so far.
func (r *Reader) Total() int64 { return r.total }

// Unknown returns the number of records of types this package does not
// know, which were skipped by their size (and delivered).
func (r *Reader) Unknown() int64 {
	var n int64
	for t, c := range r.counts {
		if !knownType(perf.RecordType(t)) {
			n += c
		}
	}
	for _, c := range r.other {
		n += c
	}
	return n
}

// OutOfOrder returns how many records had a timestamp older than records
// already delivered (perf's "out of order events").
func (r *Reader) OutOfOrder() int64 { return r.queue.unordered }

func knownType(t perf.RecordType) bool {
	return t >= perf.RecordMmap && t <= perf.RecordAuxOutputHWID || t >= perf.RecordHeaderAttr && t <= perf.RecordCompressed2
}

// Close releases the file opened by Open and the decompressor.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.src.close()
	// No slice into a mapping outlives it.
	r.cur = Record{}
	clear(r.queue.chunks)
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}
