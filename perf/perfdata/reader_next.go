package perfdata

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

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
	for {
		if rec, ok := r.queue.pop(); ok {
			r.cur = rec
			return true
		}
		if r.done {
			r.cur = Record{}
			return false
		}
		raw, off, comp, err := r.src.next()
		if err != nil {
			r.finish(err)
			continue
		}
		rec := Record{Offset: off, Compressed: comp, Raw: raw}
		if r.process(&rec) {
			r.cur = rec
			return true
		}
	}
}

// finish ends reading: the held records are delivered, then Next stops.
func (r *Reader) finish(err error) {
	r.done = true
	r.queue.flush()
	var tr *errTrailing
	switch {
	case err == io.EOF:
	case errors.As(err, &tr):
		r.warn(tr.Error())
	default:
		r.err = fmt.Errorf("perfdata: %w", err)
	}
	if n := r.src.pendingDecompressed(); n > 0 && r.err == nil {
		r.warn(fmt.Sprintf("%d bytes of a record left over at the end of the COMPRESSED record at offset %#x: ignored", n, r.src.zoff))
	}
}

// process counts a record, applies what it says about the recording, and
// either queues it for its round (false) or says to deliver it now (true).
func (r *Reader) process(rec *Record) bool {
	t := rec.Type()
	if int(t) < len(r.counts) {
		r.counts[t]++
	} else {
		if r.other == nil {
			r.other = make(map[perf.RecordType]int64)
		}
		r.other[t]++
	}
	r.total++
	if t >= perf.RecordHeaderAttr {
		return r.processUser(rec, t)
	}
	if !knownType(t) {
		return true
	}
	tm, ok := r.format.Time(rec.Raw)
	rec.Time, rec.HasTime = tm, ok
	if !ok {
		if _, err := r.format.EventOf(rec.Raw); err != nil && r.format.Len() > 0 {
			r.badEvent++
			if r.badEvent == 1 {
				r.warn(fmt.Sprintf("record at offset %#x: %v (more such records are counted in the stats)", rec.Offset, err))
			}
		}
	}
	if r.unordered || !ok || tm == 0 {
		return true
	}
	r.queue.push(rec)
	return false
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
		r.queue.pushReady(rec)
		return false
	case perf.RecordHeaderAttr, perf.RecordEventUpdate,
		perf.RecordHeaderFeature, perf.RecordHeaderEventType,
		perf.RecordHeaderTracing, perf.RecordAuxtrace, perf.RecordHeaderBuildID,
		perf.RecordCompressed, perf.RecordCompressed2:
	default:
		return true
	}
	d, err := r.format.Decode(rec.Raw)
	if err != nil {
		r.warn(fmt.Sprintf("record at offset %#x: %v: ignored", rec.Offset, err))
		return true
	}
	switch m := d.(type) {
	case *perf.HeaderAttr:
		if err := r.addAttr(m.Attr, m.IDs); err != nil {
			r.warn(fmt.Sprintf("ATTR record at offset %#x: %v: ignored", rec.Offset, err))
		}
		r.nameEvents()
	case *perf.EventUpdate:
		r.eventUpdate(m)
	case *perf.HeaderFeature:
		r.applyFeature(Feature(min(m.FeatID, FeatBits)), m.Data, rec.Offset)
		if m.FeatID == uint64(FeatEventDesc) {
			r.nameEvents()
		}
	case *perf.HeaderBuildID:
		r.feats.BuildIDs = append(r.feats.BuildIDs, BuildID{PID: m.PID, Misc: m.Misc &^ miscBuildIDSize,
			ID: bytes.Clone(m.BuildID), Path: m.Filename})
	case *perf.HeaderEventType:
		r.feats.EventTypes = append(r.feats.EventTypes, EventTypeName{ID: m.EventID, Name: m.Name})
	case *perf.HeaderTracingData:
		r.payload(rec, uint64(m.Size+7)&^7)
	case *perf.Auxtrace:
		r.payload(rec, m.Size)
	case *perf.Compressed:
		if err := r.src.decompress(m.Data, rec.Offset); err != nil {
			r.warn(err.Error() + ": its records are lost")
		}
	}
	return true
}

// payload arranges for the n bytes that follow rec in the stream to be
// skipped.
func (r *Reader) payload(rec *Record, n uint64) {
	if rec.Compressed {
		r.warn(fmt.Sprintf("%v record with a payload inside a COMPRESSED record at offset %#x: payload not skipped", rec.Type(), rec.Offset))
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
		r.nameEvents()
	}
}

// qrec is a record held in the round queue; its bytes are in the arena.
type qrec struct {
	time       uint64
	seq        uint64 // order of arrival: ties in time keep it
	off        int64
	start, n   int
	compressed bool
	hasTime    bool
}

// roundQueue holds the records of the current round and delivers them
// sorted by time (stable: ties keep file order, as in perf's
// ordered_events).
type roundQueue struct {
	arena, spare []byte
	pending      []qrec // the current round, in file order
	ready        []qrec // sorted, being delivered
	pos          int
	last         uint64 // latest time delivered
	seq          uint64 // records pushed so far
	unordered    int64
	limit        int // bytes held before the older half goes out; 0: queueLimit
}

func (q *roundQueue) push(rec *Record) {
	if rec.Time < q.last {
		q.unordered++
	}
	q.seq++
	q.pending = append(q.pending, qrec{time: rec.Time, seq: q.seq, off: rec.Offset, start: len(q.arena), n: len(rec.Raw), compressed: rec.Compressed, hasTime: true})
	q.arena = append(q.arena, rec.Raw...)
	limit := q.limit
	if limit == 0 {
		limit = queueLimit
	}
	if len(q.arena) > limit && len(q.ready) == 0 {
		q.flushHalf()
	}
}

// pushReady appends a record to deliver after the flushed ones.
func (q *roundQueue) pushReady(rec *Record) {
	q.ready = append(q.ready, qrec{time: rec.Time, off: rec.Offset, start: len(q.arena), n: len(rec.Raw), compressed: rec.Compressed, hasTime: rec.HasTime})
	q.arena = append(q.arena, rec.Raw...)
}

// byTime orders by time, then by arrival: a stable sort by time.
func byTime(a, b qrec) int {
	if c := cmp.Compare(a.time, b.time); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

func (q *roundQueue) sortPending() {
	if !slices.IsSortedFunc(q.pending, byTime) {
		slices.SortFunc(q.pending, byTime)
	}
}

// flush moves the whole round to the ready list.
func (q *roundQueue) flush() {
	if len(q.pending) == 0 {
		return
	}
	q.sortPending()
	q.last = max(q.last, q.pending[len(q.pending)-1].time)
	q.ready = append(q.ready, q.pending...)
	q.pending = q.pending[:0]
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
	q.pending = append(q.pending[:0], q.pending[h:]...)
}

// pop returns the next ready record. When the ready list is used up, the
// arena is emptied, keeping only the records still pending (moved to the
// front when they share it with delivered ones).
func (q *roundQueue) pop() (Record, bool) {
	if q.pos < len(q.ready) {
		e := q.ready[q.pos]
		q.pos++
		return Record{Offset: e.off, Compressed: e.compressed, Time: e.time, HasTime: e.hasTime,
			Raw: q.arena[e.start : e.start+e.n : e.start+e.n]}, true
	}
	if len(q.ready) == 0 {
		return Record{}, false
	}
	q.ready, q.pos = q.ready[:0], 0
	if len(q.pending) == 0 {
		q.arena = q.arena[:0]
		return Record{}, false
	}
	na := q.spare[:0]
	for i := range q.pending {
		e := &q.pending[i]
		s := len(na)
		na = append(na, q.arena[e.start:e.start+e.n]...)
		e.start = s
	}
	q.spare, q.arena = q.arena[:0], na
	return Record{}, false
}
