package pipeline

import "sync"

// A Batch is sample records in reading order: Records[i] is a copy in
// the batch's own buffer (which never grows past its first capacity, so
// the copies stay put) or the source's bytes when they are stable. Prep
// is the stages' state of the batch (what the preparers found of each
// record), kept with the batch when it is reused.
type Batch[T any] struct {
	Records [][]byte
	Prep    T
	buf     []byte
	n       int // bytes of all records
	ready   chan struct{}
}

// A batch is handed over once it holds batchRecords records or
// batchBytes bytes; its copies have room for batchCap bytes, as a record
// has at most 64 KiB.
const (
	batchRecords = 1024
	batchBytes   = 256 << 10
	batchCap     = batchBytes + 64<<10
)

func newBatch[T any]() *Batch[T] { return &Batch[T]{ready: make(chan struct{}, 1)} }

// A stream takes sample records from the read stage in batches, hands
// each batch both to the pool of preparers and, in order, to the one
// folding goroutine, which waits for each batch to be prepared and folds
// it. At most max batches are in flight (back-pressure: add waits).
type stream[T any] struct {
	st       Stages[T]
	cur      *Batch[T]
	free     []*Batch[T]
	prep     chan *Batch[T] // to the preparers
	order    chan *Batch[T] // to the folding goroutine, in reading order
	done     chan *Batch[T] // folded
	inflight int
	// batches in flight at most: the preparers' and ten more, so that a
	// goroutine that falls behind for a while (descheduled: the reader,
	// the preparers and the folder share the CPUs) does not stall the
	// others (n+2 left the 2-CPU machine idle: report on 820k exact
	// samples took ~70 ms instead of ~59)
	max   int
	ended sync.WaitGroup
	// inline: every record prepared and folded as it is added, by
	// inlinePrep on the caller's goroutine
	inline     bool
	inlinePrep func(*Batch[T])
}

// startStream starts n preparers and the folding goroutine (none when
// inline).
func startStream[T any](st Stages[T], n int, inline bool) *stream[T] {
	s := &stream[T]{st: st, cur: newBatch[T](), max: n + 10, inline: inline}
	if inline {
		s.inlinePrep = st.Preparer()
		return s
	}
	s.prep = make(chan *Batch[T], s.max)
	s.order = make(chan *Batch[T], s.max)
	s.done = make(chan *Batch[T], s.max)
	s.ended.Add(n + 1)
	for range n {
		go s.runPrepare(st.Preparer())
	}
	go s.runFold()
	return s
}

// add queues a sample record: itself if stable, else a copy.
func (s *stream[T]) add(raw []byte, stable bool) {
	b := s.cur
	if s.inline {
		b.Records = append(b.Records[:0], raw)
		s.inlinePrep(b)
		s.st.Fold(b)
		b.Records[0] = nil
		return
	}
	if !stable {
		if b.buf == nil {
			b.buf = make([]byte, 0, batchCap)
		}
		if len(b.buf)+len(raw) > cap(b.buf) { // not for records of up to 64 KiB
			s.send()
			s.add(raw, stable)
			return
		}
		n := len(b.buf)
		b.buf = append(b.buf, raw...)
		raw = b.buf[n:len(b.buf):len(b.buf)]
	}
	b.Records = append(b.Records, raw)
	b.n += len(raw)
	if len(b.Records) >= batchRecords || b.n >= batchBytes {
		s.send()
	}
}

// send hands the current batch over, waiting while max are in flight.
func (s *stream[T]) send() {
	if len(s.cur.Records) == 0 {
		return
	}
	for s.inflight >= s.max {
		s.free = append(s.free, <-s.done)
		s.inflight--
	}
	s.prep <- s.cur
	s.order <- s.cur
	s.inflight++
	if n := len(s.free); n > 0 {
		s.cur, s.free = s.free[n-1], s.free[:n-1]
	} else {
		s.cur = newBatch[T]()
	}
}

// drain hands the current batch over and returns when all are folded.
func (s *stream[T]) drain() {
	if s.inline {
		return
	}
	s.send()
	for s.inflight > 0 {
		s.free = append(s.free, <-s.done)
		s.inflight--
	}
}

// stop ends the goroutines after the batches handed over are folded.
func (s *stream[T]) stop() {
	if s.inline {
		return
	}
	s.drain()
	close(s.prep)
	close(s.order)
	s.ended.Wait()
}

// runPrepare prepares batches with one preparer (its scratch its own).
func (s *stream[T]) runPrepare(prepare func(*Batch[T])) {
	defer s.ended.Done()
	for b := range s.prep {
		prepare(b)
		b.ready <- struct{}{}
	}
}

// runFold folds the batches in their order, each once prepared.
func (s *stream[T]) runFold() {
	defer s.ended.Done()
	for b := range s.order {
		<-b.ready
		s.st.Fold(b)
		clear(b.Records) // let go of the records
		b.buf, b.Records, b.n = b.buf[:0], b.Records[:0], 0
		s.done <- b
	}
}
