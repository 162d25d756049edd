package perfdata

import (
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
