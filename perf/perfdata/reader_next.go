package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/perf"
)

// queueLimit bounds the bytes of records held for one round; past it the
// older half is delivered early (perf's OE_FLUSH__HALF).
const queueLimit = 64 << 20

// Next advances to the next record, which Record then returns. It returns
// false at the end of the records or on an error (see Err); every record
// read before an error is delivered first.
func (r *Reader) Next() bool {
	if r.closed {
		return false
	}
	rec := &r.cur // filled in place: no copies of the Record
	for {
		if r.queue.pop(rec) {
			return true
		}
		if r.done {
			*rec = Record{}
			return false
		}
		r.src.free = r.queue.firstChunk(r.src.chunk)
		if r.src.mp.mem != nil {
			r.src.release(r.queue.lowStart(r.src.r))
		}
		raw, off, comp, err := r.src.next()
		if err == io.EOF && r.growing {
			// The end of what the header covers of a file still written:
			// the records held stay for Grow's.
			r.paused = true
			*rec = Record{}
			return false
		}
		if err != nil {
			r.finish(err)
			continue
		}
		if r.process(rec, raw, off, comp) {
			return true
		}
	}
}

// finish ends reading: the held records are delivered, then Next stops.
func (r *Reader) finish(err error) {
	r.done = true
	r.queue.flush()
	var tr *errTrailing
	var ct *errCutTail
	switch {
	case err == io.EOF:
	case errors.As(err, &tr):
		r.warn(tr.Error())
	case errors.As(err, &ct):
		r.lose(ct.Error())
	default:
		r.err = fmt.Errorf("perfdata: %w", err)
	}
	if n := r.hdrSkipped; n > 1 {
		r.warn(fmt.Sprintf("%d header records from COMPRESSED records were ignored in all (past the budget)", n))
	}
	if n := r.src.zskipped; n > 0 {
		r.lose(fmt.Sprintf("%d more COMPRESSED records were not decompressed (after the one too large): their records are lost", n))
	}
	if n := r.src.pendingDecompressed(); n > 0 && r.err == nil {
		r.lose(fmt.Sprintf("%d bytes of a record left over at the end of the COMPRESSED record at offset %#x: ignored", n, r.src.zoff))
	}
}

// process counts a record read (raw, at offset off, out of a COMPRESSED
// record if comp), applies what it says about the recording, and either
// queues it for its round (false) or sets rec to it, to be delivered now
// (true). A record that is queued is not made a Record until it is
// delivered.
func (r *Reader) process(rec *Record, raw []byte, off int64, comp bool) bool {
	t := perf.RecordType(binary.LittleEndian.Uint32(raw))
	if int(t) < len(r.counts) {
		r.counts[t]++
	} else {
		if r.other == nil {
			r.other = make(map[perf.RecordType]int64)
		}
		r.other[t]++
	}
	r.total++
	kept := !comp && r.src.keep
	mapped := r.src.mp.mem != nil
	r.queue.mapped = mapped
	stable := kept || !comp && mapped // as pop decides for a queued record
	if t >= perf.RecordHeaderAttr {
		rec.set(off, comp, 0, false, raw, kept, stable)
		return r.processUser(rec, t)
	}
	var tm uint64
	var ok bool
	if !knownType(t) {
		rec.set(off, comp, 0, false, raw, kept, stable)
		return true
	}
	if at, minLen := r.format.SampleTimeAt(); t == perf.RecordSample && len(raw) >= minLen {
		tm, ok = binary.LittleEndian.Uint64(raw[at:]), true // what Time returns, without a call
	} else if tm, ok = r.format.Time(raw); !ok {
		if _, err := r.format.EventOf(raw); err != nil && r.format.Len() > 0 {
			r.badEvent++
			if r.badEvent == 1 {
				r.lose(fmt.Sprintf("record at offset %#x: %v (more such records are counted in the stats)", off, err))
			}
		}
	}
	if !r.unordered && ok && tm != 0 {
		r.queue.push(raw, off, tm, qrecFlags(true, kept, comp), r.src.lastRef())
		return false
	}
	rec.set(off, comp, tm, ok, raw, kept, stable)
	return true
}

// set sets every field of rec. Field by field, not as a composite
// literal: the literal is built on the stack with byte-wide stores, then
// copied with wide loads that wait for them (a store-forwarding stall
// that cost about as much as the rest of Next's work on a record).
func (rec *Record) set(off int64, comp bool, tm uint64, hasTime bool, raw []byte, kept, stable bool) {
	rec.Offset = off
	rec.Compressed = comp
	rec.Time = tm
	rec.HasTime = hasTime
	rec.Raw = raw
	rec.Kept = kept
	rec.Stable = stable
}

// processUser handles perf's own records. FINISHED_ROUND and
// FINISHED_INIT end a round: the held records go first, then the marker.
func (r *Reader) processUser(rec *Record, t perf.RecordType) bool {
	switch t {
	case perf.RecordFinishedRound, perf.RecordFinishedInit:
		if r.unordered {
			return true
		}
		r.queue.flush()
		r.queue.pushReady(rec.Raw, rec.Offset, qrecFlags(rec.HasTime, rec.Kept, rec.Compressed), r.src.lastRef())
		return false
	case perf.RecordHeaderAttr, perf.RecordEventUpdate,
		perf.RecordHeaderFeature, perf.RecordHeaderEventType,
		perf.RecordHeaderTracing, perf.RecordAuxtrace, perf.RecordHeaderBuildID,
		perf.RecordCompressed, perf.RecordCompressed2:
	default:
		return true
	}
	if !r.headerRecordFits(rec, t) {
		return true
	}
	d, err := r.format.Decode(rec.Raw)
	if err != nil {
		r.lose(fmt.Sprintf("record at offset %#x: %v: ignored", rec.Offset, err))
		return true
	}
	switch m := d.(type) {
	case *perf.HeaderAttr:
		if err := r.addAttr(m.Attr, m.IDs); err != nil {
			r.lose(fmt.Sprintf("ATTR record at offset %#x: %v: ignored", rec.Offset, err))
		} else {
			r.nameEvent(len(r.attrs) - 1)
		}
	case *perf.EventUpdate:
		r.eventUpdate(m)
	case *perf.HeaderFeature:
		r.applyFeature(Feature(min(m.FeatID, FeatBits)), m.Data, rec.Offset)
		if m.FeatID == uint64(FeatEventDesc) {
			r.nameEvents()
		}
	case *perf.HeaderBuildID:
		id, _ := buildid.New(m.BuildID) // at most 20 bytes: DecodeBuildID checks
		r.feats.BuildIDs = append(r.feats.BuildIDs, BuildID{PID: m.PID, Misc: m.Misc &^ miscBuildIDSize, ID: id, Path: m.Filename})
	case *perf.HeaderEventType:
		r.addEventType(EventTypeName{ID: m.EventID, Name: m.Name})
	case *perf.HeaderTracingData:
		r.payload(rec, uint64(m.Size+7)&^7)
	case *perf.Auxtrace:
		r.payload(rec, m.Size)
	case *perf.Compressed:
		var mmapLen uint32
		if c := r.feats.Compression; c != nil {
			mmapLen = c.MmapLen
		}
		if err := r.src.decompress(m.Data, rec.Offset, decompressLimit(mmapLen)); err != nil {
			if !errors.Is(err, ErrDecompressedTooLarge) {
				err = fmt.Errorf("%w: its records are lost", err)
			}
			r.lose(err.Error())
		}
	}
	return true
}

// payload arranges for the n bytes that follow rec in the stream to be
// skipped.
func (r *Reader) payload(rec *Record, n uint64) {
	if rec.Compressed {
		r.lose(fmt.Sprintf("%v record with a payload inside a COMPRESSED record at offset %#x: payload not skipped", rec.Type(), rec.Offset))
		return
	}
	r.src.skip = n
}

// eventUpdate applies an EVENT_UPDATE name to the event that owns its id
// (id 0: the only event).
func (r *Reader) eventUpdate(m *perf.EventUpdate) {
	if m.UpdateType != perf.EventUpdateName {
		return
	}
	i, ok := r.format.EventOfID(m.ID)
	if !ok && len(r.attrs) == 1 {
		i, ok = 0, true
	}
	if ok && i < len(r.attrs) {
		if r.updNames == nil {
			r.updNames = make(map[int]string)
		}
		r.updNames[i] = m.Name
		r.attrs[i].Name = m.Name
	}
}

// qrec is a record held in the round queue, in 24 bytes: read from the
// stream, it starts at byte start of source chunk number chunk; else (a
// record decompressed from a COMPRESSED record) its copy starts at byte
// start of the arena. Its length is its header's size. It holds no
// pointers: appending and merging qrecs costs the garbage collector
// nothing, and half the bytes of a qrec with every field spelled out
// halves what rounds move.
type qrec struct {
	time  uint64
	off   uint64 // Record.Offset, and the flags q* above qOffBits
	start uint32
	chunk uint32
}

// The flags of qrec.off, above the offset (offsets stay below 2^61).
const (
	qOffBits    = 61
	qOffMask    = 1<<qOffBits - 1
	qHasTime    = 1 << qOffBits       // Record.HasTime
	qKept       = 1 << (qOffBits + 1) // Record.Kept
	qCompressed = 1 << (qOffBits + 2) // Record.Compressed: the copy is in the arena
)

// roundQueue holds the records of the current round and delivers them
// sorted by time (stable: ties keep file order, as in perf's
// ordered_events).
//
// A round is made of runs already in time order (perf record writes each
// CPU's ring buffer in turn), so push notes where a record arrives older
// than the one before it, starting a run, and flush merges the runs
// (stably: a tie goes to the earlier run) instead of sorting.
//
// Records read from the stream stay where the source read them: the
// queue holds on to their chunks, and the source reuses no chunk numbered
// from firstChunk on. Decompressed records, whose buffer is reused, are
// copied into the arena, which only grows until the ready list is used up;
// then the copies of records still pending go to the spare arena and the
// old one becomes the spare. A copy is thus never overwritten while it is
// held, and one delivered stays valid until the next pop.
type roundQueue struct {
	arena, spare []byte
	// chunks are the source chunks of the held records: chunks[i] is
	// chunk number cbase+i (nil if none of its records is held).
	chunks  [][]byte
	cbase   uint32
	pending []qrec // the current round, in file order
	// runs are where the runs of pending after the first start: each run
	// is in time order, and its first record is older than the last of
	// the run before.
	runs      []int
	ready     []qrec // sorted, being delivered
	merged    []qrec // spare room to merge runs into
	bounds    []int  // scratch for mergeRuns
	pos       int
	held      int    // bytes of the pending records
	last      uint64 // latest time delivered
	unordered int64
	limit     int // bytes held before the older half goes out; 0: queueLimit
	// low is at most the least start of a pending record in a chunk, if
	// lowSet (a bound for a source that maps its data: one chunk).
	low    uint32
	lowSet bool
	mapped bool // the chunk is a mapping: records in it are Stable
}

// lowStart returns a bound below which no record the queue holds starts
// in its chunk, cur if it holds none there; for a source with one chunk.
func (q *roundQueue) lowStart(cur int) int {
	if q.lowSet && len(q.pending)+len(q.ready) > 0 {
		return int(q.low)
	}
	return cur
}

// firstChunk returns the number of the first source chunk whose records
// the queue holds, cur if it holds none.
func (q *roundQueue) firstChunk(cur uint32) uint32 {
	if len(q.chunks) == 0 {
		return cur
	}
	return q.cbase
}

// qrecFlags returns the flags of a qrec for a record with a time (if
// hasTime), Kept, and out of a COMPRESSED record (if comp).
func qrecFlags(hasTime, kept, comp bool) uint64 {
	var f uint64
	if hasTime {
		f |= qHasTime
	}
	if kept {
		f |= qKept
	}
	if comp {
		f |= qCompressed
	}
	return f
}

// hold returns the qrec of a record raw at offset off with time tm and
// the given flags: where it is in its chunk (at c), or for a decompressed
// record (flag qCompressed) where its copy in the arena is.
func (q *roundQueue) hold(raw []byte, off int64, tm, flags uint64, c chunkRef) qrec {
	e := qrec{time: tm, off: uint64(off)&qOffMask | flags}
	if flags&qCompressed != 0 {
		e.start = uint32(len(q.arena))
		q.arena = append(q.arena, raw...)
		return e
	}
	if len(q.chunks) == 0 {
		q.cbase = c.id
	}
	if !q.lowSet {
		q.low, q.lowSet = c.start, true
	}
	if i := int(c.id - q.cbase); i >= len(q.chunks) {
		for len(q.chunks) < i {
			q.chunks = append(q.chunks, nil)
		}
		q.chunks = append(q.chunks, c.buf)
	}
	e.chunk, e.start = c.id, c.start
	return e
}

// push queues a record of the current round with time tm (see hold); c
// locates it if it was read from the stream.
func (q *roundQueue) push(raw []byte, off int64, tm, flags uint64, c chunkRef) {
	if tm < q.last {
		q.unordered++
	}
	if n := len(q.pending); n > 0 && tm < q.pending[n-1].time {
		q.runs = append(q.runs, n)
	}
	q.pending = append(q.pending, q.hold(raw, off, tm, flags, c))
	q.held += len(raw)
	limit := q.limit
	if limit == 0 {
		limit = queueLimit
	}
	if q.held > limit && len(q.ready) == 0 {
		q.flushHalf()
	}
}

// pushReady appends a record to deliver after the flushed ones (see
// hold).
func (q *roundQueue) pushReady(raw []byte, off int64, flags uint64, c chunkRef) {
	q.ready = append(q.ready, q.hold(raw, off, 0, flags, c))
}

// sortPending puts the pending records in time order, stably: it merges
// their runs.
func (q *roundQueue) sortPending() {
	if len(q.runs) == 0 {
		return
	}
	q.bounds = append(append(append(q.bounds[:0], 0), q.runs...), len(q.pending))
	q.pending, q.merged = mergeRuns(q.pending, q.merged, q.bounds)
	q.runs = q.runs[:0]
}

// mergeRuns sorts rs stably by time, given the bounds of its runs (each
// in time order; bounds starts with 0 and ends with len(rs), and is
// overwritten): it merges neighbouring runs, pass after pass, between rs
// and buf (grown as needed). It returns the sorted records and the other
// slice, for reuse.
func mergeRuns(rs, buf []qrec, bounds []int) (sorted, spare []qrec) {
	buf = slices.Grow(buf[:0], len(rs))[:len(rs)]
	for len(bounds) > 2 {
		k := 0
		for i := 0; i+1 < len(bounds); i += 2 {
			lo, mid := bounds[i], bounds[i+1]
			hi := mid
			if i+2 < len(bounds) {
				hi = bounds[i+2]
			}
			merge2(buf[lo:hi], rs[lo:mid], rs[mid:hi])
			bounds[k] = lo
			k++
		}
		bounds[k] = len(rs)
		bounds = bounds[:k+1]
		rs, buf = buf, rs
	}
	return rs, buf
}

// merge2 merges a and b, each in time order, into dst (len(a)+len(b)
// long), stably: on a tie a's record goes first.
func merge2(dst, a, b []qrec) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j].time < a[i].time {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// flush moves the whole round to the ready list.
func (q *roundQueue) flush() {
	if len(q.pending) == 0 {
		return
	}
	q.sortPending()
	q.last = max(q.last, q.pending[len(q.pending)-1].time)
	if len(q.ready) == 0 { // the usual case: the lists trade places
		q.ready, q.pending = q.pending, q.ready[:0]
	} else {
		q.ready = append(q.ready, q.pending...)
		q.pending = q.pending[:0]
	}
	q.held = 0
}

// flushHalf delivers the older half of an oversized round.
func (q *roundQueue) flushHalf() {
	q.sortPending()
	h := len(q.pending) / 2
	if h == 0 {
		return
	}
	q.last = max(q.last, q.pending[h-1].time)
	q.ready = append(q.ready, q.pending[:h]...)
	for i := range q.pending[:h] {
		q.held -= len(q.raw(&q.pending[i]))
	}
	q.pending = append(q.pending[:0], q.pending[h:]...)
}

// pop sets rec to the next ready record and reports whether there was
// one. When the ready list is used up, the arena is emptied, keeping only
// the copies of records still pending (moved to the spare arena), and the
// chunks no pending record is in are let go.
func (q *roundQueue) pop(rec *Record) bool {
	if q.pos < len(q.ready) {
		e := &q.ready[q.pos]
		q.pos++
		kept, inChunk := e.off&qKept != 0, e.off&qCompressed == 0
		rec.set(int64(e.off&qOffMask), !inChunk, e.time, e.off&qHasTime != 0, q.raw(e), kept, kept || inChunk && q.mapped)
		return true
	}
	if len(q.ready) == 0 {
		return false
	}
	q.ready, q.pos = q.ready[:0], 0
	q.compact()
	return false
}

// raw returns the bytes of a held record: its header says how many.
func (q *roundQueue) raw(e *qrec) []byte {
	b := q.arena
	if e.off&qCompressed == 0 {
		b = q.chunks[e.chunk-q.cbase]
	}
	b = b[e.start:]
	n := int(binary.LittleEndian.Uint16(b[6:8]))
	return b[:n:n]
}

// compact keeps what the pending records need of the arena and chunks.
func (q *roundQueue) compact() {
	first := len(q.chunks) // the first chunk a pending record is in
	q.lowSet = false
	var na []byte
	if len(q.arena) > 0 {
		na = q.spare[:0]
	}
	for i := range q.pending {
		e := &q.pending[i]
		if e.off&qCompressed == 0 {
			first = min(first, int(e.chunk-q.cbase))
			if !q.lowSet || e.start < q.low {
				q.low, q.lowSet = e.start, true
			}
			continue
		}
		s := len(na)
		na = append(na, q.raw(e)...)
		e.start = uint32(s)
	}
	if len(q.arena) > 0 {
		q.spare, q.arena = q.arena[:0], na
	}
	if first > 0 {
		n := copy(q.chunks, q.chunks[first:])
		clear(q.chunks[n:])
		q.chunks = q.chunks[:n]
		q.cbase += uint32(first)
	}
}
