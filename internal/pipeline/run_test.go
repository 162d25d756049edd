package pipeline

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/hwprof/hwprof/ccmap"
)

// A test record is its kind (one byte: Route's answer), its sequence
// number (4 bytes) and padding to its size.
const (
	recSample        = 'S'
	recBarrier       = 'B'
	recBarrierSample = 'X'
	recHandled       = 'H'
)

// testSource is records in order and the error that ends them; every
// other record is stable (its bytes kept until the end), the others are
// overwritten at the next Next, as a reader's buffer is.
type testSource struct {
	recs [][]byte
	err  error
	i    int
	buf  []byte
}

func (s *testSource) Next() bool {
	if s.i > 0 && len(s.buf) > 0 {
		for j := range s.buf {
			s.buf[j] = 0xff // what a reader's next record does to its buffer
		}
	}
	if s.i >= len(s.recs) {
		return false
	}
	s.i++
	return true
}

func (s *testSource) Raw() ([]byte, bool) {
	r := s.recs[s.i-1]
	if s.i%2 == 0 {
		return r, true
	}
	s.buf = append(s.buf[:0], r...)
	return s.buf, false
}

func (s *testSource) Err() error { return s.err }

// testStages checks the ordering rules: the fold stage sees the samples
// in reading order, each prepared against the state (version: barriers
// applied) as of its reading, and Apply runs with every sample before it
// folded. Fold adds every sample to out as a one-frame stack weighted by
// its sequence number.
type testStages struct {
	out     *Folder
	version int // barriers applied: what the preparers read
	folded  int // samples folded
	read    int // samples routed
	lastSeq int
	bad     int   // rule violations (counted: t.Error is not for other goroutines)
	expect  []int // by sequence number, the version a sample is read at
	flushed bool
}

type testPrep struct {
	seq     []int
	version []int
}

func seqOf(raw []byte) int { return int(binary.LittleEndian.Uint32(raw[1:])) }

func (st *testStages) Route(raw []byte) Route {
	switch raw[0] {
	case recSample:
		st.read++
		return Sample
	case recBarrier:
		return Barrier
	case recBarrierSample:
		st.read++
		return BarrierSample
	}
	return Handled
}

func (st *testStages) Apply(raw []byte) {
	if st.folded != st.read-b2i(raw[0] == recBarrierSample) {
		st.bad++
	}
	st.version++
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (st *testStages) Preparer() func(*Batch[testPrep]) {
	return func(b *Batch[testPrep]) {
		b.Prep.seq, b.Prep.version = b.Prep.seq[:0], b.Prep.version[:0]
		for _, raw := range b.Records {
			b.Prep.seq = append(b.Prep.seq, seqOf(raw))
			b.Prep.version = append(b.Prep.version, st.version)
		}
	}
}

func (st *testStages) Fold(b *Batch[testPrep]) {
	for i := range b.Records {
		seq := b.Prep.seq[i]
		if seq <= st.lastSeq || b.Prep.version[i] != st.expect[seq] {
			st.bad++
		}
		st.lastSeq = seq
		st.folded++
		st.out.Add([]ccmap.Frame{{Func: ccmap.FuncID(seq % 97)}}, uint64(seq))
	}
}

func (st *testStages) Flush() {
	st.flushed = true
	st.out.AddEdge(nil, ccmap.CallSite{Caller: 1, Addr: 2}, 3, 1)
}

// testRecords makes n records of random kinds and sizes, a few of them
// larger than a batch's byte limit allows many of (64 KiB).
func testRecords(r *rand.Rand, n int) [][]byte {
	recs := make([][]byte, n)
	kinds := []byte{recSample, recSample, recSample, recSample, recSample, recSample, recBarrier, recBarrierSample, recHandled}
	for i := range recs {
		size := 8 + r.IntN(64)
		if r.IntN(100) == 0 {
			size = 60 << 10
		}
		rec := make([]byte, size)
		rec[0] = kinds[r.IntN(len(kinds))]
		binary.LittleEndian.PutUint32(rec[1:], uint32(i+1))
		recs[i] = rec
	}
	return recs
}

// versions returns, by sequence number, the barriers applied before each
// sample of recs is prepared.
func versions(recs [][]byte) []int {
	v := make([]int, len(recs)+1)
	n := 0
	for _, rec := range recs {
		switch rec[0] {
		case recBarrier:
			n++
		case recBarrierSample:
			n++
			v[seqOf(rec)] = n
		case recSample:
			v[seqOf(rec)] = n
		}
	}
	return v
}

// wantMap folds the samples of recs as testStages does, on one goroutine.
func wantMap(recs [][]byte) *ccmap.Map {
	m := ccmap.New()
	for _, rec := range recs {
		if rec[0] == recSample || rec[0] == recBarrierSample {
			seq := seqOf(rec)
			m.AddStack([]ccmap.Frame{{Func: ccmap.FuncID(seq % 97)}}, uint64(seq))
		}
	}
	m.AddEdge(ccmap.CallSite{Caller: 1, Addr: 2}, 3, 1)
	return m
}

// TestRunOrder runs records through Run with 1, 2 and 4 preparers and
// inline: the fold stage sees every sample once, in reading order, each
// prepared as of its reading; Apply sees every sample before it folded;
// the merged map is the direct fold's; the source's error is returned;
// no goroutine outlives Run.
func TestRunOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	recs := testRecords(r, 20000)
	errEnd := errors.New("truncated")
	for _, o := range []Options{{Preparers: 1}, {Preparers: 2}, {Preparers: 4}, {Inline: true}} {
		t.Run(fmt.Sprintf("preparers=%d,inline=%v", o.Preparers, o.Inline), func(t *testing.T) {
			before := runtime.NumGoroutine()
			out := NewFolder(FoldOptions{Workers: 2})
			st := &testStages{out: out, expect: versions(recs)}
			m, err := Run(&testSource{recs: recs, err: errEnd}, st, out, o)
			if err != errEnd {
				t.Errorf("Run returned %v, want the source's error", err)
			}
			if st.bad > 0 {
				t.Errorf("%d ordering rule violations", st.bad)
			}
			if st.folded != st.read || !st.flushed {
				t.Errorf("%d samples folded of %d read; flushed %v", st.folded, st.read, st.flushed)
			}
			if !ccmap.Equal(m, wantMap(recs)) {
				t.Error("merged map differs from the direct fold")
			}
			deadline := time.Now().Add(5 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				t.Errorf("%d goroutines after Run, %d before", n, before)
			}
		})
	}
}

// TestSharded: every job runs once, in the shard of the goroutine that
// ran it; end sees each shard once, after its jobs.
func TestSharded(t *testing.T) {
	type shard struct {
		jobs  []int
		ended bool
		late  bool // a job after end
	}
	for _, c := range []struct{ n, par int }{{0, 4}, {1, 4}, {7, 3}, {100, 2}, {5, 0}} {
		shards := Sharded(c.n, c.par, func() *shard { return &shard{} },
			func(s *shard, i int) {
				s.late = s.late || s.ended
				s.jobs = append(s.jobs, i)
			},
			func(s *shard) { s.ended = true })
		if want := min(max(c.par, 1), c.n); len(shards) != want {
			t.Errorf("n=%d par=%d: %d shards, want %d", c.n, c.par, len(shards), want)
		}
		seen := make([]int, c.n)
		for _, s := range shards {
			if !s.ended || s.late {
				t.Errorf("n=%d par=%d: shard ended %v, a job after its end %v", c.n, c.par, s.ended, s.late)
			}
			for _, j := range s.jobs {
				seen[j]++
			}
		}
		for j, k := range seen {
			if k != 1 {
				t.Errorf("n=%d par=%d: job %d ran %d times", c.n, c.par, j, k)
			}
		}
	}
	var ran [10]int
	Each(len(ran), 3, func(i int) { ran[i]++ })
	for i, k := range ran {
		if k != 1 {
			t.Errorf("Each: job %d ran %d times", i, k)
		}
	}
}

func TestRouteString(t *testing.T) {
	for r, want := range map[Route]string{Handled: "handled", Sample: "sample", Barrier: "barrier", BarrierSample: "barrier+sample", 9: "Route(9)"} {
		if got := r.String(); got != want {
			t.Errorf("Route %d is %q, want %q", uint8(r), got, want)
		}
	}
}
