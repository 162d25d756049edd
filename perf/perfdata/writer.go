package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hwprof/hwprof/perf"
)

// magic is "PERFILE2" read as a little-endian u64 (__perf_magic2 in
// tools/perf/util/header.c); its byte order tells readers the file's.
const magic = "PERFILE2"

// Sizes of the file structures, from tools/perf/util/header.h.
const (
	fileHeaderSize  = 104 // sizeof(struct perf_file_header)
	fileSectionSize = 16  // sizeof(struct perf_file_section)
	eventHeaderSize = 8   // sizeof(struct perf_event_header)
)

// bufferSize is the write buffer in front of the file. It holds whole
// records only (a record is at most 64 KiB).
const bufferSize = 1 << 20

// ErrClosed is returned by every method of a Writer after Close.
var ErrClosed = errors.New("perfdata: writer closed")

// EventAttr is one event of a recording: its attr, the sample ids the
// kernel gave its instances (one per opened fd, from PERF_EVENT_IOC_ID),
// and its name as the user spelled it ("cpu-clock"); an empty name is
// replaced by perf's default name for the attr.
type EventAttr struct {
	Attr perf.Attr
	IDs  []uint64
	Name string
}

// fileSection mirrors struct perf_file_section in tools/perf/util/header.h.
type fileSection struct {
	Offset, Size uint64
}

// fileHeader mirrors struct perf_file_header in tools/perf/util/header.h.
type fileHeader struct {
	Size       uint64 // size of this header, 104
	AttrSize   uint64 // size of one attrs entry: attr + its ids section
	Attrs      fileSection
	Data       fileSection
	EventTypes fileSection // unused, zero
	Features   [FeatBits / 64]uint64
}

func (h *fileHeader) marshal(b *[fileHeaderSize]byte) {
	le := binary.LittleEndian
	copy(b[0:], magic)
	le.PutUint64(b[8:], h.Size)
	le.PutUint64(b[16:], h.AttrSize)
	le.PutUint64(b[24:], h.Attrs.Offset)
	le.PutUint64(b[32:], h.Attrs.Size)
	le.PutUint64(b[40:], h.Data.Offset)
	le.PutUint64(b[48:], h.Data.Size)
	le.PutUint64(b[56:], h.EventTypes.Offset)
	le.PutUint64(b[64:], h.EventTypes.Size)
	for i, w := range h.Features {
		le.PutUint64(b[72+8*i:], w)
	}
}

// Writer writes a perf.data file (the PERFILE2 format of
// tools/perf/Documentation/perf.data-file-format.txt): the header, the ids
// and attrs sections, then the records, and at Close the feature sections.
//
// Records go through a buffer that holds whole records. Whenever it is
// written to the file — when it fills, at Checkpoint and at Close — the
// header is rewritten with the data size so far (and no feature bits until
// Close), so the file on disk is a valid perf.data file ending at a record
// boundary. A recording whose process is killed is readable by perf up to
// the last flush: perf reads the data size from the header and ignores
// bytes past it. A Writer is not safe for concurrent use.
//
// A write that fails (a full disk: ENOSPC; a pipe whose reader left:
// EPIPE) may have put part of the buffer in the output. The Writer keeps
// the whole records among those bytes and drops the rest: in file mode it
// cuts the file after the last whole record and rewrites the header to
// cover exactly the records before it (best effort: a header that cannot
// be rewritten still covers the records of the previous flush). The
// Writer then keeps returning the error, and Close writes nothing more.
// NotifyWritten tells the caller which records reached the output.
type Writer struct {
	f   *os.File  // file mode: the file, whose header is rewritten in place; nil in pipe mode
	out io.Writer // where records go: f, or the stream in pipe mode
	buf []byte    // whole records not yet written, cap bufferSize
	hdr fileHeader
	raw [fileHeaderSize]byte // header encoding buffer

	events      []eventDesc
	branchStack bool

	dataSize int64 // bytes of records written, buffered or not
	flushed  int64 // bytes of records in the file (in its header from the next flush)
	records  int64
	// recStart is where the records in buf begin: past the pipe header
	// until the first flush, 0 after.
	recStart int
	written  func(records []byte) // NotifyWritten's fn, or nil

	// timeOff is the offset of the time field in every SAMPLE record, or
	// 0 when the attrs do not put it at one fixed place.
	timeOff             int
	firstTime, lastTime uint64

	err    error // sticky write error
	closed bool
}

// Create creates (or truncates) the file at path and writes a perf.data
// file into it as NewWriter does. It replaces whatever is at path: a
// recorder that must not (hwprof record) opens the path by its own rules
// and calls NewWriter or NewPipeWriter.
func Create(path string, attrs []EventAttr) (*Writer, error) {
	if _, _, _, err := layout(attrs); err != nil {
		return nil, fmt.Errorf("perfdata: create %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("perfdata: create: %w", err)
	}
	w, err := NewWriter(f, attrs)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// NewWriter writes a perf.data file into f, an empty file open for
// writing that can seek (the header is rewritten in place): a header, the
// ids and the attrs of the events, and positions the writer at the data
// section. The data starts with one PERF_RECORD_EVENT_UPDATE per event
// naming it (perf record writes such records too), already flushed, so the
// file is readable by perf, with the events' names, from the start.
// All attrs are written with one size: the largest EffectiveSize among
// them. perf 6.1 reads attrs of at most 128 bytes (PERF_ATTR_SIZE_VER7).
// The Writer owns f from then on: Close closes it. On error f is left
// open.
func NewWriter(f *os.File, attrs []EventAttr) (*Writer, error) {
	events, hdr, head, err := layout(attrs)
	if err != nil {
		return nil, fmt.Errorf("perfdata: create %s: %w", f.Name(), err)
	}
	w := &Writer{f: f, out: f, hdr: hdr, events: events, timeOff: sampleTimeOffset(attrs)}
	w.branchStack = anyBranchStack(attrs)
	if _, err := f.Write(head); err != nil {
		return nil, fmt.Errorf("perfdata: create: write header: %w", err)
	}
	w.buf = make([]byte, 0, bufferSize)
	if err := w.appendNames(attrs); err != nil {
		return nil, err
	}
	if err := w.flush(); err != nil {
		return nil, err
	}
	return w, nil
}

func anyBranchStack(attrs []EventAttr) bool {
	for _, a := range attrs {
		if a.Attr.SampleType&perf.SampleBranchStack != 0 {
			return true
		}
	}
	return false
}

// appendNames buffers the EVENT_UPDATE records that name the events.
func (w *Writer) appendNames(attrs []EventAttr) error {
	for i, a := range attrs {
		if rec := appendEventUpdateName(nil, a.IDs, w.events[i].name, len(attrs) == 1); rec != nil {
			if err := w.append(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// Event update types, mirrors enum perf_event_update_type in
// tools/lib/perf/include/perf/event.h.
const eventUpdateName = 2 // PERF_EVENT_UPDATE__NAME

// maxEventName bounds event names, so an EVENT_UPDATE record fits its u16
// size with room to spare.
const maxEventName = 4096

// appendEventUpdateName appends a PERF_RECORD_EVENT_UPDATE (struct
// perf_record_event_update: header, u64 type, u64 id, name NUL-padded to 8
// bytes) that names the event with the given ids. perf applies it to the
// event that owns the id, so the name survives in a file that is never
// closed (and so has no EVENT_DESC). An event without ids can be named
// only when it is the only one.
func appendEventUpdateName(b []byte, ids []uint64, name string, only bool) []byte {
	var id uint64
	switch {
	case len(ids) > 0:
		id = ids[0]
	case !only:
		return b
	}
	size := eventHeaderSize + 16 + alignUp(len(name)+1, 8)
	le := binary.LittleEndian
	b = le.AppendUint32(b, uint32(perf.RecordEventUpdate))
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, uint16(size))
	b = le.AppendUint64(b, eventUpdateName)
	b = le.AppendUint64(b, id)
	b = append(b, name...)
	for range alignUp(len(name)+1, 8) - len(name) {
		b = append(b, 0)
	}
	return b
}

// layout builds the header (data size zero, no features) and the bytes of
// header, ids sections and attrs section, laid out as perf record does:
// header, every attr's ids, the attrs, then the data.
func layout(attrs []EventAttr) ([]eventDesc, fileHeader, []byte, error) {
	if len(attrs) == 0 {
		return nil, fileHeader{}, nil, errors.New("no events")
	}
	size := uint32(0)
	for _, a := range attrs {
		size = max(size, a.Attr.EffectiveSize())
	}
	if size < perf.AttrSizeVer0 || size%8 != 0 || size > 4096 {
		return nil, fileHeader{}, nil, fmt.Errorf("attr size %d: want a multiple of 8 from %d", size, perf.AttrSizeVer0)
	}
	nIDs := 0
	for _, a := range attrs {
		nIDs += len(a.IDs)
	}
	idsOff := uint64(fileHeaderSize)
	attrsOff := idsOff + 8*uint64(nIDs)
	entry := uint64(size) + fileSectionSize
	h := fileHeader{
		Size:     fileHeaderSize,
		AttrSize: entry,
		Attrs:    fileSection{attrsOff, entry * uint64(len(attrs))},
	}
	h.Data.Offset = h.Attrs.Offset + h.Attrs.Size
	var raw [fileHeaderSize]byte
	h.marshal(&raw)
	head := make([]byte, 0, h.Data.Offset)
	head = append(head, raw[:]...)
	le := binary.LittleEndian
	for _, a := range attrs {
		for _, id := range a.IDs {
			head = le.AppendUint64(head, id)
		}
	}
	events := make([]eventDesc, len(attrs))
	off := idsOff
	for i, a := range attrs {
		at := a.Attr
		at.Size = size
		b := at.Marshal()
		head = append(head, b...)
		head = le.AppendUint64(head, off)
		head = le.AppendUint64(head, 8*uint64(len(a.IDs)))
		off += 8 * uint64(len(a.IDs))
		name := a.Name
		if name == "" {
			name = DefaultEventName(&a.Attr)
		}
		if len(name) > maxEventName || strings.IndexByte(name, 0) >= 0 {
			return nil, fileHeader{}, nil, fmt.Errorf("event %d: bad name %.40q", i, name)
		}
		events[i] = eventDesc{attr: b, ids: append([]uint64(nil), a.IDs...), name: name}
	}
	return events, h, head, nil
}

// sampleTimeOffset returns where PERF_SAMPLE_TIME sits in a SAMPLE record
// of every attr, or 0 if some attr has no time or the attrs disagree. Only
// fixed-size fields come before it: IDENTIFIER, IP, TID.
func sampleTimeOffset(attrs []EventAttr) int {
	off := 0
	for i, a := range attrs {
		st := a.Attr.SampleType
		if st&perf.SampleTime == 0 {
			return 0
		}
		o := eventHeaderSize
		for _, bit := range []perf.SampleType{perf.SampleIdentifier, perf.SampleIP, perf.SampleTID} {
			if st&bit != 0 {
				o += 8
			}
		}
		if i > 0 && o != off {
			return 0
		}
		off = o
	}
	return off
}

// WriteRecord appends one record exactly as the kernel produced it
// (perf_event_header first; its size must equal len(rec)). The record is
// buffered; it reaches the file at the next Checkpoint or Close, or when
// the buffer fills. rec is not retained. After a write error the Writer
// keeps returning that error.
func (w *Writer) WriteRecord(rec []byte) error {
	if err := w.usable(); err != nil {
		return err
	}
	if len(rec) < eventHeaderSize {
		return fmt.Errorf("perfdata: write record: %d bytes, shorter than a header", len(rec))
	}
	if n := int(binary.LittleEndian.Uint16(rec[6:])); n != len(rec) {
		return fmt.Errorf("perfdata: write record: header size %d, record has %d bytes", n, len(rec))
	}
	if err := w.append(rec); err != nil {
		return err
	}
	w.records++
	if w.timeOff != 0 && perf.RecordType(binary.LittleEndian.Uint32(rec)) == perf.RecordSample && len(rec) >= w.timeOff+8 {
		t := binary.LittleEndian.Uint64(rec[w.timeOff:])
		if w.firstTime == 0 || t < w.firstTime {
			w.firstTime = t
		}
		w.lastTime = max(w.lastTime, t)
	}
	return nil
}

// finishedRound is a PERF_RECORD_FINISHED_ROUND: a bare header.
var finishedRound = [eventHeaderSize]byte{byte(perf.RecordFinishedRound), 0, 0, 0, 0, 0, eventHeaderSize, 0}

// WriteFinishedRound appends a PERF_RECORD_FINISHED_ROUND (type 68, size
// 8): every record before it may be sorted by time and delivered. Write
// one after each pass over all ring buffers, as perf record does. It is
// not counted by Records.
//
// The round's records then go to the file (not the header, which
// Checkpoint and Close rewrite): a recorder killed before its next
// checkpoint leaves them past the header's data size, where the Reader
// recovers them.
func (w *Writer) WriteFinishedRound() error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.append(finishedRound[:]); err != nil {
		return err
	}
	return w.writeBuffer()
}

// writeBuffer writes the buffered records to the file without updating
// the header.
func (w *Writer) writeBuffer() error {
	if len(w.buf) == 0 {
		return nil
	}
	if n, err := w.out.Write(w.buf); err != nil {
		return w.fail(n, err)
	}
	w.wrote(w.buf)
	w.flushed += int64(len(w.buf))
	w.buf, w.recStart = w.buf[:0], 0
	return nil
}

// append buffers one record, writing the buffer out first if the record
// does not fit.
func (w *Writer) append(rec []byte) error {
	if len(w.buf)+len(rec) > cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, rec...)
	w.dataSize += int64(len(rec))
	return nil
}

// flush writes the buffered records and then, in file mode, the header
// with the new data size. The header is written second, so a crash between
// the two leaves a file whose header still describes only whole records.
func (w *Writer) flush() error {
	if err := w.writeBuffer(); err != nil {
		return err
	}
	if w.f == nil {
		return nil // pipe mode: no header to bring up to date
	}
	w.hdr.Data.Size = uint64(w.flushed)
	if err := w.writeHeader(); err != nil {
		w.err = fmt.Errorf("perfdata: write header: %w", err)
		return w.err
	}
	return nil
}

// fail ends the Writer after a write of the buffer that stopped after n
// bytes with err: the whole records among those n bytes are kept, the
// rest of the buffer is dropped, and in file mode the file is cut after
// the last whole record and the header rewritten to cover the records
// before it. Errors of those two repairs are not reported: the write's
// error is the one that matters, and the header then still covers the
// records of the previous flush.
func (w *Writer) fail(n int, err error) error {
	keep := wholeRecords(w.buf, w.recStart, n)
	w.wrote(w.buf[:keep])
	w.dataSize -= int64(len(w.buf) - max(keep, w.recStart))
	w.flushed += int64(keep)
	w.buf, w.recStart = w.buf[:0], 0
	w.err = fmt.Errorf("perfdata: write records: %w", err)
	if w.f != nil {
		w.f.Truncate(int64(w.hdr.Data.Offset) + w.flushed)
		w.hdr.Data.Size = uint64(w.flushed)
		w.writeHeader()
	}
	return w.err
}

// wholeRecords returns the end of the whole records among the first n
// bytes of buf, whose records begin at start (buf holds whole records
// only); 0 if n does not reach start.
func wholeRecords(buf []byte, start, n int) int {
	if n < start {
		return 0
	}
	end := start
	for end+eventHeaderSize <= n {
		size := int(binary.LittleEndian.Uint16(buf[end+6:]))
		if size < eventHeaderSize || end+size > n {
			break
		}
		end += size
	}
	return end
}

// wrote tells NotifyWritten's fn about the records in b, a written
// prefix of the buffer.
func (w *Writer) wrote(b []byte) {
	if w.written != nil && len(b) > w.recStart {
		w.written(b[w.recStart:])
	}
}

// NotifyWritten makes the Writer call fn with the records each write put
// in the output, in order and whole records only, from within the call
// that wrote them (WriteRecord, WriteFinishedRound, Checkpoint, Close):
// the records of WriteRecord and those the Writer adds itself
// (FINISHED_ROUND, and the build-ids of a pipe-mode Close). After a failed
// write, fn has seen exactly the records the output holds. b is valid
// only during the call. Records written before NotifyWritten (the events'
// names, from NewWriter) are not reported.
func (w *Writer) NotifyWritten(fn func(b []byte)) { w.written = fn }

// Checkpoint writes the buffered records and rewrites the header with the
// data size so far, so the file up to here is a valid perf.data file (with
// no feature sections) even if the process is killed before Close. It does
// not fsync. Call it about once a second. In pipe mode it writes the
// buffered records, so that a reader at the other end sees them.
func (w *Writer) Checkpoint() error {
	if err := w.usable(); err != nil {
		return err
	}
	return w.flush()
}

// writeHeader rewrites the header in place without moving the file offset.
func (w *Writer) writeHeader() error {
	w.hdr.marshal(&w.raw)
	_, err := w.f.WriteAt(w.raw[:], 0)
	return err
}

// Close flushes the records, writes the feature sections after the data
// and the final header with the feature bits, and closes the file. The
// file is closed even when Close returns an error. In pipe mode (a Writer
// from NewPipeWriter) the features were written at the start; Close
// flushes the records and writes one PERF_RECORD_HEADER_BUILD_ID per
// f.BuildIDs entry, and leaves the stream open.
func (w *Writer) Close(f Features) error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.f == nil {
		return w.finishPipe(f)
	}
	err := w.finish(f)
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("perfdata: close: %w", cerr)
	}
	return err
}

func (w *Writer) finish(f Features) error {
	if w.err != nil {
		return w.err
	}
	if err := w.flush(); err != nil {
		return err
	}
	if f.SampleTimeFirst == 0 && f.SampleTimeLast == 0 {
		f.SampleTimeFirst, f.SampleTimeLast = w.firstTime, w.lastTime
	}
	secs, err := encodeFeatures(&f, w.events, w.branchStack)
	if err != nil {
		return fmt.Errorf("perfdata: close: %w", err)
	}
	featOff := w.hdr.Data.Offset + w.hdr.Data.Size
	b := make([]byte, fileSectionSize*len(secs))
	off := featOff + uint64(len(b))
	var bits [FeatBits / 64]uint64
	for i, s := range secs {
		binary.LittleEndian.PutUint64(b[16*i:], off)
		binary.LittleEndian.PutUint64(b[16*i+8:], uint64(len(s.data)))
		off += uint64(len(s.data))
		bits[s.feat/64] |= 1 << (s.feat % 64)
	}
	for _, s := range secs {
		b = append(b, s.data...)
	}
	// A file whose features cannot all be written ends at its last
	// record, with the header of the last flush (no feature bits): no
	// partial section is left past the data for a reader to take for
	// records.
	if _, err := w.f.WriteAt(b, int64(featOff)); err != nil {
		w.f.Truncate(int64(featOff))
		return fmt.Errorf("perfdata: close: write features: %w", err)
	}
	w.hdr.Features = bits
	if err := w.writeHeader(); err != nil {
		w.f.Truncate(int64(featOff))
		return fmt.Errorf("perfdata: close: write header: %w", err)
	}
	return nil
}

func (w *Writer) usable() error {
	if w.closed {
		return ErrClosed
	}
	return w.err
}

// DataSize returns the bytes of records written so far (buffered or not):
// the data section's size if the file were closed now.
func (w *Writer) DataSize() int64 { return w.dataSize }

// Records returns the number of records written with WriteRecord.
func (w *Writer) Records() int64 { return w.records }
