package perf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
)

// This file holds what every record decoder shares: the bounds-checked
// cursor, the errors, and SampleFormat, which knows the events of a
// recording and so how each record is laid out.

// ErrShortRecord is matched (errors.Is) by a *DecodeError for a field that
// runs past the end of its record.
var ErrShortRecord = errors.New("record too short")

// ErrUnknownID is matched by the error for a record whose sample id
// belongs to no event of the SampleFormat, when the events lay records out
// differently so the record cannot be read without knowing its event.
var ErrUnknownID = errors.New("sample id matches no event")

// DecodeError describes a record that cannot be decoded: the record type,
// the field, and the field's byte offset inside the record.
type DecodeError struct {
	Type   RecordType
	Field  string // "callchain nr", "branch entries", ...
	Offset int    // of the field, from the start of the record (its header)
	Need   int    // bytes the field needs; 0 when the problem is not length
	Have   int    // bytes left in the record at Offset
	Detail string // what is wrong when it is not length
}

func (e *DecodeError) Error() string {
	if e.Need > 0 && e.Detail == "" {
		return fmt.Sprintf("decode %v: %s at byte %d: need %d bytes, record has %d left",
			e.Type, e.Field, e.Offset, e.Need, e.Have)
	}
	return fmt.Sprintf("decode %v: %s at byte %d: %s", e.Type, e.Field, e.Offset, e.Detail)
}

// Is makes errors.Is(err, ErrShortRecord) true for length errors.
func (e *DecodeError) Is(target error) bool {
	return target == ErrShortRecord && e.Need > 0 && e.Detail == ""
}

// cursor reads little-endian fields from a record. The first failure is
// kept in err and every later read returns zero, so a decoder reads its
// fields in order and checks err once.
type cursor struct {
	b   []byte
	off int
	typ RecordType
	err *DecodeError
}

func (c *cursor) short(field string, n int) {
	if c.err == nil {
		c.err = &DecodeError{Type: c.typ, Field: field, Offset: c.off, Need: n, Have: len(c.b) - c.off}
	}
}

func (c *cursor) bad(field, format string, args ...any) {
	if c.err == nil {
		c.err = &DecodeError{Type: c.typ, Field: field, Offset: c.off, Detail: fmt.Sprintf(format, args...)}
	}
}

func (c *cursor) left() int { return len(c.b) - c.off }

func (c *cursor) u64(field string) uint64 {
	if c.err != nil || len(c.b)-c.off < 8 {
		c.short(field, 8)
		return 0
	}
	v := binary.LittleEndian.Uint64(c.b[c.off:])
	c.off += 8
	return v
}

func (c *cursor) u32(field string) uint32 {
	if c.err != nil || len(c.b)-c.off < 4 {
		c.short(field, 4)
		return 0
	}
	v := binary.LittleEndian.Uint32(c.b[c.off:])
	c.off += 4
	return v
}

func (c *cursor) u16(field string) uint16 {
	if c.err != nil || len(c.b)-c.off < 2 {
		c.short(field, 2)
		return 0
	}
	v := binary.LittleEndian.Uint16(c.b[c.off:])
	c.off += 2
	return v
}

func (c *cursor) u8(field string) uint8 {
	if c.err != nil || len(c.b)-c.off < 1 {
		c.short(field, 1)
		return 0
	}
	v := c.b[c.off]
	c.off++
	return v
}

// bytes returns the next n bytes (aliasing the record).
func (c *cursor) bytes(field string, n uint64) []byte {
	if c.err != nil || uint64(len(c.b)-c.off) < n {
		c.short(field, int(min(n, 1<<30)))
		return nil
	}
	v := c.b[c.off : c.off+int(n) : c.off+int(n)]
	c.off += int(n)
	return v
}

// count reads a u64 element count and checks that n elements of size
// bytes fit in the rest of the record.
func (c *cursor) count(field string, size int) int {
	n := c.u64(field)
	if c.err != nil {
		return 0
	}
	if n > uint64(c.left()/size) {
		c.off -= 8
		c.bad(field, "%d entries of %d bytes do not fit in the %d bytes left", n, size, c.left()-8)
		return 0
	}
	return int(n)
}

// str reads a NUL-terminated string from the next n bytes (all the rest
// when n < 0) and moves past them.
func (c *cursor) str(field string, n int) string {
	if n < 0 {
		n = c.left()
	}
	b := c.bytes(field, uint64(n))
	return cString(b)
}

func cString(b []byte) string {
	for i, ch := range b {
		if ch == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// ParseHeader reads the perf_event_header at the start of b.
func ParseHeader(b []byte) (RecordHeader, error) {
	if len(b) < RecordHeaderSize {
		return RecordHeader{}, &DecodeError{Field: "header", Need: RecordHeaderSize, Have: len(b)}
	}
	le := binary.LittleEndian
	return RecordHeader{Type: RecordType(le.Uint32(b)), Misc: le.Uint16(b[4:]), Size: le.Uint16(b[6:])}, nil
}

// SampleFormat knows the events (attrs) of a recording and their sample
// ids, and so how every record is laid out: which event a record belongs
// to, where its time is, and which fields a sample has. Build it with
// NewSampleFormat and Add; it is not safe for concurrent use while being
// added to, and safe for concurrent decoding afterwards.
//
// A record's event is resolved as perf does (evlist__event2evsel): the
// only event when there is one; otherwise the sample id, read at the
// position every event shares (PERF_SAMPLE_IDENTIFIER first in a sample
// and last in a sample_id trailer, or PERF_SAMPLE_ID where it falls); id 0
// (synthesized records) means the first event.
type SampleFormat struct {
	events []formatEvent
	byID   map[uint64]int
	// idPos is the u64 index of the id in a sample body, isPos its index
	// counted from the end of a trailer; -1 when the first event's
	// sample_type has no id.
	idPos, isPos int
	// uniform: every event lays records out the same way, so a record of
	// an unknown id can still be decoded.
	uniform bool
	// sampleTime is where TIME sits in every SAMPLE when the events are
	// uniform and sample it, and sampleTimeMin the least record length
	// for which Time reads it there (with room for the id EventOf reads
	// when there are several events; MaxInt if there is no such place):
	// Time's shortcut.
	sampleTime, sampleTimeMin int
}

// formatEvent is one attr and what its layout implies.
type formatEvent struct {
	attr        Attr
	sampleIDAll bool
	timeOff     int // byte offset of TIME in a SAMPLE, -1 if none
	layout      SampleLayout
	trailerSize int // bytes of the sample_id trailer of other records
	trailerTime int // offset of TIME from the end of the record, 0 if none
	nRegsUser   int
	nRegsIntr   int
}

// NewSampleFormat returns a format for the attrs, in order, without ids
// (Add them with AddIDs); see Add.
func NewSampleFormat(attrs ...Attr) (*SampleFormat, error) {
	f := &SampleFormat{byID: make(map[uint64]int), idPos: -1, isPos: -1, uniform: true, sampleTimeMin: math.MaxInt}
	for _, a := range attrs {
		if _, err := f.Add(a, nil); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Add appends an event with its sample ids and returns its index. As perf
// (evlist__valid_sample_type) it refuses a second event whose sample id
// sits elsewhere than the first's, or that has none: records could not be
// told apart.
func (f *SampleFormat) Add(a Attr, ids []uint64) (int, error) {
	ev := newFormatEvent(a)
	idPos, isPos := idPosition(a.SampleType), isPosition(a.SampleType)
	if len(f.events) == 0 {
		f.idPos, f.isPos = idPos, isPos
	} else {
		if idPos != f.idPos || isPos != f.isPos || f.idPos < 0 {
			return -1, fmt.Errorf("event %d (sample_type %v): sample ids of events %d and %d sit at different places (or nowhere): records cannot be told apart",
				len(f.events), a.SampleType, 0, len(f.events))
		}
		if !sameLayout(&f.events[0], &ev) {
			f.uniform = false
		}
	}
	f.events = append(f.events, ev)
	idx := len(f.events) - 1
	f.AddIDs(idx, ids)
	f.sampleTime, f.sampleTimeMin = 0, math.MaxInt
	if e := &f.events[0]; f.uniform && e.timeOff > 0 {
		f.sampleTime, f.sampleTimeMin = e.timeOff, e.timeOff+8
		if len(f.events) > 1 {
			f.sampleTimeMin = max(f.sampleTimeMin, RecordHeaderSize+8*f.idPos+8)
		}
	}
	return idx, nil
}

// Grow makes room for n more events, for a caller that knows how many it
// will Add.
func (f *SampleFormat) Grow(n int) { f.events = slices.Grow(f.events, n) }

// AddIDs records more sample ids of event idx (from an ID_INDEX or an
// EVENT_DESC section). An id already known is moved to idx.
func (f *SampleFormat) AddIDs(idx int, ids []uint64) {
	for _, id := range ids {
		f.byID[id] = idx
	}
}

// Len returns the number of events.
func (f *SampleFormat) Len() int { return len(f.events) }

// Clone returns a copy of f that later Adds to f do not change, for
// decoding on another goroutine while f is added to.
func (f *SampleFormat) Clone() *SampleFormat {
	c := *f
	c.events = slices.Clone(f.events)
	c.byID = maps.Clone(f.byID)
	if c.byID == nil {
		c.byID = make(map[uint64]int)
	}
	return &c
}

// Attr returns event i's attr.
func (f *SampleFormat) Attr(i int) *Attr { return &f.events[i].attr }

// EventOfID returns the index of the event that owns a sample id.
func (f *SampleFormat) EventOfID(id uint64) (int, bool) {
	i, ok := f.byID[id]
	return i, ok
}

func newFormatEvent(a Attr) formatEvent {
	st := a.SampleType
	ev := formatEvent{
		attr:        a,
		sampleIDAll: a.Flags.Has(FlagSampleIDAll),
		timeOff:     -1,
		nRegsUser:   bits.OnesCount64(a.SampleRegsUser),
		nRegsIntr:   bits.OnesCount64(a.SampleRegsIntr),
	}
	if st&SampleTime != 0 {
		ev.timeOff = RecordHeaderSize + 8*bits.OnesCount64(uint64(st&(SampleIdentifier|SampleIP|SampleTID)))
	}
	ev.layout = sampleLayout(st)
	if ev.sampleIDAll {
		ev.trailerSize = TrailerSize(st)
		if st&SampleTime != 0 {
			// TIME is preceded only by TID in the trailer.
			after := st & (SampleID | SampleStreamID | SampleCPU | SampleIdentifier)
			ev.trailerTime = 8 + 8*bits.OnesCount64(uint64(after))
		}
	}
	return ev
}

// SampleLayout says where the fields a stack profiler reads first sit in
// the SAMPLE records of one event, so that they can be read without
// decoding the record (SampleFormat.Layout): byte offsets from the start
// of the record (header included), -1 for a field the event does not
// sample. They are the same in every sample of the event: every field
// before CALLCHAIN has a fixed size, but READ, after which Callchain is
// -1 (decode such samples).
type SampleLayout struct {
	IP, TID, Time, Period int
	// Callchain is the offset of the callchain's nr, followed by nr u64s.
	Callchain int
}

func sampleLayout(st SampleType) SampleLayout {
	l := SampleLayout{IP: -1, TID: -1, Time: -1, Period: -1, Callchain: -1}
	off := RecordHeaderSize
	field := func(bit SampleType, size int) int {
		if st&bit == 0 {
			return -1
		}
		at := off
		off += size
		return at
	}
	field(SampleIdentifier, 8)
	l.IP = field(SampleIP, 8)
	l.TID = field(SampleTID, 8)
	l.Time = field(SampleTime, 8)
	field(SampleAddr, 8)
	field(SampleID, 8)
	field(SampleStreamID, 8)
	field(SampleCPU, 8)
	l.Period = field(SamplePeriod, 8)
	if st&SampleRead == 0 {
		l.Callchain = field(SampleCallchain, 8)
	}
	return l
}

// Layout returns the index of a SAMPLE record's event (as EventOf) and
// where its first fields sit; the caller checks them against len(rec).
func (f *SampleFormat) Layout(rec []byte) (int, *SampleLayout, error) {
	i, ev, err := f.layoutOf(rec)
	if err != nil {
		return -1, nil, err
	}
	return i, &ev.layout, nil
}

// TrailerSize returns the bytes of the sample_id trailer for sample_type
// st (the caller checks sample_id_all).
func TrailerSize(st SampleType) int {
	return 8 * bits.OnesCount64(uint64(st&sampleIDBits))
}

// idPosition mirrors __evsel__calc_id_pos: the u64 index of the id in a
// sample body, -1 if none.
func idPosition(st SampleType) int {
	if st&SampleIdentifier != 0 {
		return 0
	}
	if st&SampleID == 0 {
		return -1
	}
	return bits.OnesCount64(uint64(st & (SampleIP | SampleTID | SampleTime | SampleAddr)))
}

// isPosition mirrors __evsel__calc_is_pos: the id's index from the end of
// a sample_id trailer, counted from 1; -1 if none.
func isPosition(st SampleType) int {
	if st&SampleIdentifier != 0 {
		return 1
	}
	if st&SampleID == 0 {
		return -1
	}
	return 1 + bits.OnesCount64(uint64(st&(SampleCPU|SampleStreamID)))
}

// layoutBranch are the branch_sample_type bits that change a sample's
// layout.
const layoutBranch = BranchHWIndex | BranchCounters

func sameLayout(a, b *formatEvent) bool {
	x, y := &a.attr, &b.attr
	return x.SampleType == y.SampleType && x.ReadFormat == y.ReadFormat &&
		x.BranchSampleType&layoutBranch == y.BranchSampleType&layoutBranch &&
		x.SampleRegsUser == y.SampleRegsUser && x.SampleRegsIntr == y.SampleRegsIntr &&
		a.sampleIDAll == b.sampleIDAll
}

// EventOf returns the index of the event rec belongs to, or -1 with
// ErrUnknownID (wrapped) when its id is no event's; see SampleFormat.
// When the events agree on the layout, -1 is returned with a nil error
// instead: the record can be decoded anyway.
func (f *SampleFormat) EventOf(rec []byte) (int, error) {
	if len(f.events) == 0 {
		return -1, errors.New("decode: no events (attrs) known")
	}
	if len(f.events) == 1 {
		return 0, nil
	}
	if len(rec) < RecordHeaderSize {
		return -1, &DecodeError{Field: "header", Need: RecordHeaderSize, Have: len(rec)}
	}
	typ := RecordType(binary.LittleEndian.Uint32(rec))
	if typ >= RecordHeaderAttr {
		return -1, fmt.Errorf("decode %v: perf's own records belong to no event", typ)
	}
	if typ != RecordSample && !f.events[0].sampleIDAll {
		return 0, nil
	}
	n := (len(rec) - RecordHeaderSize) / 8
	var pos int
	if typ == RecordSample {
		if f.idPos >= n {
			return -1, &DecodeError{Type: typ, Field: "sample id", Offset: RecordHeaderSize + 8*f.idPos, Need: 8, Have: len(rec) - RecordHeaderSize - 8*f.idPos}
		}
		pos = f.idPos
	} else {
		if f.isPos > n {
			return -1, &DecodeError{Type: typ, Field: "sample_id trailer", Offset: RecordHeaderSize, Need: 8 * f.isPos, Have: len(rec) - RecordHeaderSize}
		}
		pos = n - f.isPos
	}
	id := binary.LittleEndian.Uint64(rec[RecordHeaderSize+8*pos:])
	if id == 0 {
		return 0, nil
	}
	if i, ok := f.byID[id]; ok {
		return i, nil
	}
	if f.uniform {
		return -1, nil
	}
	return -1, fmt.Errorf("decode %v: id %d: %w", typ, id, ErrUnknownID)
}

// layoutOf returns the event whose layout decodes rec: the resolved event,
// or the first when the id is unknown but every event agrees.
func (f *SampleFormat) layoutOf(rec []byte) (int, *formatEvent, error) {
	i, err := f.EventOf(rec)
	if err != nil {
		return -1, nil, err
	}
	if i < 0 {
		return -1, &f.events[0], nil
	}
	return i, &f.events[i], nil
}

// SampleTimeAt returns where the TIME of a SAMPLE record of these events
// sits, and the least length of a SAMPLE record for which Time reads it
// there: Time(rec) is rec[at:at+8] for a SAMPLE of at least minLen
// bytes. minLen is math.MaxInt when that holds for no SAMPLE (events that
// place it differently, or that do not sample TIME). It is cheap
// (inlined), for a caller that reads the time of every record.
func (f *SampleFormat) SampleTimeAt() (at, minLen int) { return f.sampleTime, f.sampleTimeMin }

// Time returns the timestamp of a record and whether it has one: the TIME
// of a sample, or of the sample_id trailer of another kernel record with
// sample_id_all. Records of perf's own types (64 and up) have none. It
// does not decode the rest of the record.
func (f *SampleFormat) Time(rec []byte) (uint64, bool) {
	// The usual case first: a sample of uniform events, long enough.
	if len(rec) >= f.sampleTimeMin && binary.LittleEndian.Uint32(rec) == uint32(RecordSample) {
		return binary.LittleEndian.Uint64(rec[f.sampleTime:]), true
	}
	return f.time(rec)
}

// time is Time for every record.
func (f *SampleFormat) time(rec []byte) (uint64, bool) {
	if len(rec) < RecordHeaderSize || len(f.events) == 0 {
		return 0, false
	}
	typ := RecordType(binary.LittleEndian.Uint32(rec))
	if typ >= RecordHeaderAttr {
		return 0, false
	}
	ev := &f.events[0]
	if !f.uniform || len(f.events) > 1 && !f.idFits(rec, typ) {
		// Which event the record is of matters (or it has no room for an
		// id: then layoutOf fails, as EventOf does).
		var err error
		if _, ev, err = f.layoutOf(rec); err != nil {
			return 0, false
		}
	}
	if typ == RecordSample {
		if ev.timeOff < 0 || ev.timeOff+8 > len(rec) {
			return 0, false
		}
		return binary.LittleEndian.Uint64(rec[ev.timeOff:]), true
	}
	if ev.trailerTime == 0 || len(rec)-RecordHeaderSize < ev.trailerSize {
		return 0, false
	}
	return binary.LittleEndian.Uint64(rec[len(rec)-ev.trailerTime:]), true
}

// idFits reports whether rec, a kernel record of type typ, has room for
// the sample id EventOf reads (or needs none), so that EventOf returns no
// error for it when the events agree on the layout (uniform): Time then
// reads the first event's layout without looking the id up.
func (f *SampleFormat) idFits(rec []byte, typ RecordType) bool {
	n := (len(rec) - RecordHeaderSize) / 8
	if typ == RecordSample {
		return f.idPos < n
	}
	return !f.events[0].sampleIDAll || f.isPos <= n
}

// decodeTrailer reads the sample_id trailer at the end of a non-sample
// record and returns the record without it.
func decodeTrailer(rec []byte, ev *formatEvent, t *Trailer) ([]byte, error) {
	*t = Trailer{}
	if ev == nil || !ev.sampleIDAll || ev.trailerSize == 0 {
		return rec, nil
	}
	n := len(rec) - ev.trailerSize
	typ := RecordType(binary.LittleEndian.Uint32(rec))
	if n < RecordHeaderSize {
		return rec, &DecodeError{Type: typ, Field: "sample_id trailer", Offset: RecordHeaderSize, Need: ev.trailerSize, Have: len(rec) - RecordHeaderSize}
	}
	c := cursor{b: rec, off: n, typ: typ}
	st := ev.attr.SampleType
	t.Present = st & sampleIDBits
	if st&SampleTID != 0 {
		t.PID, t.TID = c.u32("trailer pid"), c.u32("trailer tid")
	}
	if st&SampleTime != 0 {
		t.Time = c.u64("trailer time")
	}
	if st&SampleID != 0 {
		t.ID = c.u64("trailer id")
	}
	if st&SampleStreamID != 0 {
		t.StreamID = c.u64("trailer stream_id")
	}
	if st&SampleCPU != 0 {
		t.CPU, t.Res = c.u32("trailer cpu"), c.u32("trailer res")
	}
	if st&SampleIdentifier != 0 {
		t.Identifier = c.u64("trailer identifier")
	}
	return rec[:n], nil
}
