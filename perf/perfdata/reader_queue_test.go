package perfdata

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// randomRound returns n records in arrival order (off numbers them) made
// of runs in time order as perf record writes them, one per CPU, with
// times drawn from a range of span values (a small span: many ties,
// within runs and across them); a run of length 1 to maxRun.
func randomRound(rng *rand.Rand, n, maxRun int, span uint64) []qrec {
	var rs []qrec
	for len(rs) < n {
		run := 1 + rng.IntN(maxRun)
		times := make([]uint64, min(run, n-len(rs)))
		for i := range times {
			times[i] = rng.Uint64N(span)
		}
		slices.Sort(times)
		for _, t := range times {
			rs = append(rs, qrec{time: t, off: uint64(len(rs))})
		}
	}
	return rs
}

// runStarts returns where push would note runs in rs.
func runStarts(rs []qrec) []int {
	var runs []int
	for i := 1; i < len(rs); i++ {
		if rs[i].time < rs[i-1].time {
			runs = append(runs, i)
		}
	}
	return runs
}

// Merging the runs of a round puts it in the order of a stable sort by
// time: ties keep the order of arrival.
func TestMergeRunsIsStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var buf []qrec
	for k := range 2000 {
		n := rng.IntN(300)
		maxRun := 1 + rng.IntN(100)
		span := []uint64{1, 3, 50, 1 << 40}[k%4]
		rs := randomRound(rng, n, maxRun, span)
		want := slices.Clone(rs)
		slices.SortStableFunc(want, func(a, b qrec) int { return cmp.Compare(a.time, b.time) })
		bounds := append(append([]int{0}, runStarts(rs)...), len(rs))
		got, spare := mergeRuns(rs, buf, bounds)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d (%d records, %d runs, times < %d): merged order differs from the stable sort", k, n, len(bounds)-1, span)
		}
		buf = spare
	}
}

// The queue delivers a round, pushed record by record and flushed, in
// stable time order, and counts the records older than ones delivered.
func TestQueueDeliversRunsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	chunk := make([]byte, 0, 1<<16)
	var id uint32 // the chunk's number, as the source numbers them
	var q roundQueue
	var last uint64
	for round := range 200 {
		rs := randomRound(rng, rng.IntN(400), 1+rng.IntN(64), []uint64{2, 1000, 1 << 30}[round%3])
		var unordered int64
		before := q.unordered
		for _, e := range rs {
			if e.time < last {
				unordered++
			}
			start := len(chunk)
			if start+16 > cap(chunk) {
				chunk, start = make([]byte, 0, 1<<16), 0
				id++
			}
			raw := record(perf.RecordSample, 0, le.AppendUint64(nil, e.time))
			chunk = append(chunk, raw...)
			q.push(chunk[start:], int64(e.off), e.time, qHasTime, chunkRef{buf: chunk[:cap(chunk)], id: id, start: uint32(start)})
		}
		q.flush()
		want := slices.Clone(rs)
		slices.SortStableFunc(want, func(a, b qrec) int { return cmp.Compare(a.time, b.time) })
		var rec Record
		for i, w := range want {
			if !q.pop(&rec) {
				t.Fatalf("round %d: %d records delivered, want %d", round, i, len(want))
			}
			if rec.Offset != int64(w.off) || rec.Time != w.time || !rec.HasTime || le.Uint64(rec.Raw[8:]) != w.time {
				t.Fatalf("round %d, delivery %d: record %d at time %d, want record %d at time %d", round, i, rec.Offset, rec.Time, w.off, w.time)
			}
			last = max(last, rec.Time)
		}
		if q.pop(&rec) {
			t.Fatalf("round %d: more records than pushed", round)
		}
		if got := q.unordered - before; got != unordered {
			t.Fatalf("round %d: %d records counted out of order, want %d", round, got, unordered)
		}
	}
}

// Two CPUs' runs with a tie across them: the first CPU's record goes
// first.
func TestMergeRunsTie(t *testing.T) {
	rs := []qrec{{time: 1, off: 0}, {time: 5, off: 1}, {time: 2, off: 2}, {time: 5, off: 3}, {time: 9, off: 4}}
	got, _ := mergeRuns(rs, nil, []int{0, 2, 5})
	var order []uint64
	for _, e := range got {
		order = append(order, e.off)
	}
	if fmt.Sprint(order) != "[0 2 1 3 4]" {
		t.Errorf("order %v, want [0 2 1 3 4]", order)
	}
}

// refQueue is the order the round queue must deliver in, spelled out as
// perf's ordered_events does it: a round's records sorted stably by time
// when it ends, the older half of an oversized round first.
type refQueue struct {
	pending, ready []delivery
	held, limit    int
}

func (q *refQueue) push(d delivery) {
	q.pending = append(q.pending, d)
	q.held += len(d.raw)
	if q.held > q.limit && len(q.ready) == 0 {
		q.sort()
		h := len(q.pending) / 2
		q.ready = append(q.ready, q.pending[:h]...)
		for _, d := range q.pending[:h] {
			q.held -= len(d.raw)
		}
		q.pending = append([]delivery(nil), q.pending[h:]...)
	}
}

func (q *refQueue) sort() {
	slices.SortStableFunc(q.pending, func(a, b delivery) int { return cmp.Compare(a.time, b.time) })
}

func (q *refQueue) flush(marker delivery) {
	q.sort()
	q.ready = append(append(q.ready, q.pending...), marker)
	q.pending, q.held = nil, 0
}

// The queue, driven as Next drives it (every ready record delivered
// before the next is read), delivers what the reference does: records
// read from chunks and decompressed ones (copied to the arena, their
// buffer overwritten after each push) mixed, times in CPU runs with ties,
// rounds that end at a marker and rounds past the limit that go out by
// halves; every record with its bytes, offset, time and flags.
func TestQueueMatchesReference(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 9))
		limit := []int{1 << 10, 4 << 10, 64 << 10}[seed%3]
		q := roundQueue{limit: limit}
		ref := refQueue{limit: limit}
		var chunk []byte
		var id uint32
		zbuf := make([]byte, 256) // the reused decompression buffer
		var got, want []delivery
		var rec Record
		popAll := func() {
			for q.pop(&rec) {
				got = append(got, delivery{rec.Offset, rec.Time, rec.HasTime, rec.Compressed, rec.Type(), bytes.Clone(rec.Raw)})
				if rec.Kept || rec.Stable {
					t.Fatalf("seed %d: record at %d: Kept %v, Stable %v from an unmapped source without keep", seed, rec.Offset, rec.Kept, rec.Stable)
				}
			}
			want = append(want, ref.ready...)
			ref.ready = ref.ready[:0]
		}
		var off int64
		tm := uint64(1000)
		for range 3000 {
			popAll()
			off += 8
			// inChunk places raw in the current chunk, as the source reads.
			inChunk := func(raw []byte) ([]byte, chunkRef) {
				if len(chunk)+len(raw) > cap(chunk) {
					chunk = make([]byte, 0, 2048)
					id++
				}
				start := len(chunk)
				chunk = append(chunk, raw...)
				return chunk[start:], chunkRef{buf: chunk[:cap(chunk)], id: id, start: uint32(start)}
			}
			if rng.IntN(200) == 0 {
				marker, c := inChunk(finishedRound[:])
				q.flush()
				q.pushReady(marker, off, 0, c)
				ref.flush(delivery{off: off, typ: perf.RecordFinishedRound, raw: marker})
				continue
			}
			if rng.IntN(30) == 0 { // another CPU's run starts
				tm -= min(tm-1, uint64(rng.IntN(500)))
			}
			if rng.IntN(4) != 0 {
				tm += uint64(rng.IntN(20))
			}
			raw := record(perf.RecordSample, 0, bytes.Repeat(le.AppendUint64(nil, tm), 1+rng.IntN(8)))
			d := delivery{off: off, time: tm, hasTime: true, typ: perf.RecordSample, raw: raw}
			if rng.IntN(3) == 0 {
				d.compressed = true
				n := copy(zbuf, raw)
				q.push(zbuf[:n], off, tm, qHasTime|qCompressed, chunkRef{})
				clear(zbuf)
			} else {
				b, c := inChunk(raw)
				q.push(b, off, tm, qHasTime, c)
			}
			ref.push(d)
		}
		q.flush()
		ref.flush(delivery{})
		ref.ready = ref.ready[:len(ref.ready)-1]
		popAll()
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d records delivered, want %d", seed, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.off != w.off || g.time != w.time || g.hasTime != w.hasTime || g.compressed != w.compressed || !bytes.Equal(g.raw, w.raw) {
				t.Fatalf("seed %d (limit %d), delivery %d: got %+v, want %+v", seed, limit, i, g, w)
			}
		}
	}
}
