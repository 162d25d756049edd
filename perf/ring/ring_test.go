package ring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

func TestReadEmpty(t *testing.T) {
	f := newFake(t, 4096)
	r := f.ring(t)
	recs, bytes, err := collect(t, r)
	if err != nil || len(recs) != 0 || bytes != 0 {
		t.Fatalf("empty ring: %d records, %d bytes, err %v", len(recs), bytes, err)
	}
	if p := r.Pending(); p != 0 {
		t.Errorf("Pending = %d, want 0", p)
	}
}

func TestReadOne(t *testing.T) {
	f := newFake(t, 4096)
	r := f.ring(t)
	f.produce(40)
	if p := r.Pending(); p != 40 {
		t.Errorf("Pending = %d, want 40", p)
	}
	recs, bytes, err := collect(t, r)
	if err != nil || len(recs) != 1 || bytes != 40 {
		t.Fatalf("one record: %d records, %d bytes, err %v", len(recs), bytes, err)
	}
	if seq, ok := checkRecord(recs[0]); !ok || seq != 0 {
		t.Errorf("record = %x, seq %d intact %v", recs[0], seq, ok)
	}
	if f.tail() != 40 || r.Pending() != 0 {
		t.Errorf("tail = %d pending %d, want 40 and 0", f.tail(), r.Pending())
	}
	recs, _, err = collect(t, r)
	if err != nil || len(recs) != 0 {
		t.Errorf("second Read: %d records, err %v", len(recs), err)
	}
}

func TestReadMany(t *testing.T) {
	f := newFake(t, 8192)
	r := f.ring(t)
	sizes := []int{8, 16, 24, 48, 104, 1024, 16, 8, 520}
	total := 0
	for _, s := range sizes {
		if !f.produce(s) {
			t.Fatalf("no room for %d", s)
		}
		total += s
	}
	recs, bytes, err := collect(t, r)
	if err != nil || len(recs) != len(sizes) || bytes != total {
		t.Fatalf("got %d records %d bytes err %v, want %d records %d bytes", len(recs), bytes, err, len(sizes), total)
	}
	for i, rec := range recs {
		if len(rec) != sizes[i] {
			t.Errorf("record %d: %d bytes, want %d", i, len(rec), sizes[i])
		}
		if sizes[i] >= 16 {
			if seq, ok := checkRecord(rec); !ok || seq != uint64(i) {
				t.Errorf("record %d: seq %d intact %v", i, seq, ok)
			}
		}
	}
	if f.tail() != uint64(total) {
		t.Errorf("tail = %d, want %d", f.tail(), total)
	}
}

// TestReadWrap places a record so that it crosses the end of the data
// area at every interesting point.
func TestReadWrap(t *testing.T) {
	const size = 256
	tests := []struct {
		name   string
		start  uint64 // ring position of the record
		recLen int
	}{
		{"ends exactly at the end", size - 48, 48},
		{"body split", size - 24, 48},
		{"body split after header", size - 8, 48},
		{"header split 1+7", size - 1, 48},
		{"header split 4+4", size - 4, 48},
		{"header split 7+1", size - 7, 48},
		{"starts at 0 after a lap", 3 * size, 48},
		{"second lap body split", 5*size - 40, 64},
		{"whole ring but one slot", size - 8, size - 8},
		{"unaligned 8-byte record split", size - 3, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, size)
			for i := range f.data {
				f.data[i] = 0xee // stale bytes must not leak into records
			}
			f.setPos(tc.start)
			r := f.ring(t)
			f.seq = 77
			if !f.produce(tc.recLen) {
				t.Fatal("no room")
			}
			var got []byte
			var inScratch bool
			n, bytes, err := r.Read(func(rec []byte) error {
				got = append([]byte(nil), rec...)
				inScratch = !within(rec, f.data)
				return nil
			})
			if err != nil || n != 1 || bytes != tc.recLen {
				t.Fatalf("Read: %d records %d bytes err %v", n, bytes, err)
			}
			want := record(9, 77, tc.recLen)
			if string(got) != string(want) {
				t.Errorf("record\n got %x\nwant %x", got, want)
			}
			wraps := tc.start%size+uint64(tc.recLen) > size
			if inScratch != wraps {
				t.Errorf("copied to scratch = %v, want %v (zero-copy unless it wraps)", inScratch, wraps)
			}
			if f.tail() != tc.start+uint64(tc.recLen) {
				t.Errorf("tail = %d, want %d", f.tail(), tc.start+uint64(tc.recLen))
			}
		})
	}
}

// within reports whether b points into mem.
func within(b, mem []byte) bool {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	return p >= lo && p < lo+uintptr(len(mem))
}

// TestReadCorrupt covers rings the kernel would never publish: the reader
// must stop with an error naming the offset, skip to head, and not spin.
func TestReadCorrupt(t *testing.T) {
	hdr := func(size uint16) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, 9)
		binary.LittleEndian.PutUint16(b[6:], size)
		return b
	}
	tests := []struct {
		name     string
		pos      uint64 // where the ring starts
		build    func(f *fakeRing)
		wantRecs int    // good records delivered before the bad one
		wantOff  uint64 // CorruptError.Offset
		wantSize uint16
	}{
		{"zero size", 0, func(f *fakeRing) { f.produceRaw(hdr(0)) }, 0, 0, 0},
		{"size below header", 0, func(f *fakeRing) { f.produceRaw(hdr(4)) }, 0, 0, 4},
		{"zero size after good records", 100, func(f *fakeRing) {
			f.produce(32)
			f.produce(24)
			f.produceRaw(append(hdr(0), make([]byte, 16)...))
		}, 2, 156, 0},
		{"head inside a record body", 0, func(f *fakeRing) {
			f.produce(16)
			f.write(record(9, 1, 64))
			f.publish(40) // the kernel publishes whole records; pretend it did not
		}, 1, 16, 64},
		{"head inside a header", 0, func(f *fakeRing) {
			f.produce(16)
			f.write(record(9, 1, 64))
			f.publish(5)
		}, 1, 16, 0},
		{"size beyond head", 1000, func(f *fakeRing) {
			f.produceRaw(hdr(200))
		}, 0, 1000, 200},
		{"size beyond head, header split", 1021, func(f *fakeRing) {
			f.produceRaw(append(hdr(400), make([]byte, 8)...))
		}, 0, 1021, 400},
		{"head more than a ring ahead", 0, func(f *fakeRing) {
			f.publish(1024 + 8)
		}, 0, 0, 0},
		{"head behind tail", 64, func(f *fakeRing) {
			atomic.StoreUint64(word(f.meta, offDataHead), 32)
		}, 0, 64, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, 1024)
			f.setPos(tc.pos)
			r := f.ring(t)
			tc.build(f)
			head := f.head()
			recs, _, err := collect(t, r)
			if len(recs) != tc.wantRecs {
				t.Errorf("delivered %d records before the bad one, want %d", len(recs), tc.wantRecs)
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want a *CorruptError", err)
			}
			if ce.Offset != tc.wantOff || ce.Size != tc.wantSize {
				t.Errorf("error at offset %d size %d, want offset %d size %d (%v)", ce.Offset, ce.Size, tc.wantOff, tc.wantSize, err)
			}
			if f.tail() != head {
				t.Errorf("tail = %d, want it moved to head %d", f.tail(), head)
			}
			recs, _, err = collect(t, r)
			if err != nil || len(recs) != 0 {
				t.Errorf("Read after the error: %d records, err %v; want an empty ring", len(recs), err)
			}
			// The ring is usable again.
			f.seq = 500
			f.produce(24)
			recs, _, err = collect(t, r)
			if err != nil || len(recs) != 1 {
				t.Fatalf("Read after recovery: %d records, err %v", len(recs), err)
			}
			if seq, ok := checkRecord(recs[0]); !ok || seq != 500 {
				t.Errorf("record after recovery: seq %d intact %v", seq, ok)
			}
		})
	}
}

func TestCorruptErrorMessage(t *testing.T) {
	f := newFake(t, 1024)
	r := f.ring(t)
	f.produceRaw(make([]byte, 8))
	_, _, err := r.Read(func([]byte) error { return nil })
	want := "ring read: corrupt record at data offset 0 (position 0): type 0 size 0 with 8 bytes published; skipped 8 bytes"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestReadCallbackError(t *testing.T) {
	f := newFake(t, 1024)
	r := f.ring(t)
	for range 5 {
		f.produce(32)
	}
	stop := errors.New("stop")
	var seen []uint64
	n, bytes, err := r.Read(func(rec []byte) error {
		seq, _ := checkRecord(rec)
		seen = append(seen, seq)
		if seq == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 || bytes != 96 {
		t.Fatalf("Read = %d, %d, %v; want 3, 96, stop", n, bytes, err)
	}
	if f.tail() != 96 {
		t.Errorf("tail = %d, want 96 (past the record whose fn failed)", f.tail())
	}
	recs, _, err := collect(t, r)
	if err != nil || len(recs) != 2 {
		t.Fatalf("resume: %d records err %v", len(recs), err)
	}
	if seq, _ := checkRecord(recs[0]); seq != 3 {
		t.Errorf("resumed at seq %d, want 3", seq)
	}
}

// TestReadFull fills the ring until the producer refuses, as the kernel
// would (it keeps one slot free), drains it, and fills it again across
// the end.
func TestReadFull(t *testing.T) {
	f := newFake(t, 512)
	r := f.ring(t)
	for lap := range 4 {
		n := 0
		for f.produce(24) {
			n++
		}
		if r.Pending() > 512 || 512-r.Pending() >= 24+1 {
			t.Fatalf("lap %d: pending %d after %d records; the ring is not full", lap, r.Pending(), n)
		}
		recs, bytes, err := collect(t, r)
		if err != nil || len(recs) != n || bytes != 24*n {
			t.Fatalf("lap %d: read %d records %d bytes err %v, want %d", lap, len(recs), bytes, err, n)
		}
		for _, rec := range recs {
			if _, ok := checkRecord(rec); !ok {
				t.Fatalf("lap %d: damaged record %x", lap, rec)
			}
		}
	}
	// A completely full ring (head = tail + size), which the kernel avoids
	// but which is consistent, is read whole.
	g := newFake(t, 256)
	g.setPos(100)
	rg := g.ring(t)
	for range 4 {
		g.write(record(9, g.seq, 64))
		g.seq++
		g.publish(64)
	}
	recs, bytes, err := collect(t, rg)
	if err != nil || len(recs) != 4 || bytes != 256 {
		t.Fatalf("exactly full ring: %d records %d bytes err %v", len(recs), bytes, err)
	}
}

// TestReadInterleavings is a property test: any interleaving of producer
// writes and consumer reads delivers every record exactly once, in order,
// byte for byte, with aligned and unaligned sizes.
func TestReadInterleavings(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { interleave(t, seed) })
	}
}

func interleave(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	dataSize := 1 << (6 + rng.IntN(6)) // 64 B .. 2 KiB
	aligned := rng.IntN(2) == 0
	f := newFake(t, dataSize)
	start := rng.Uint64N(1 << 40)
	if aligned {
		start &^= 7
	}
	f.setPos(start)
	r := f.ring(t)
	stop := errors.New("stop")
	var want uint64 // next expected sequence number
	for step := 0; step < 400; step++ {
		for k := rng.IntN(6); k > 0; k-- {
			size := 16 + rng.IntN(dataSize/2)
			if aligned {
				size &^= 7
			}
			f.produce(size) // may not fit: then the reader must make room
		}
		failAt := -1
		if rng.IntN(8) == 0 {
			failAt = rng.IntN(4)
		}
		i := 0
		n, bytes, err := r.Read(func(rec []byte) error {
			seq, ok := checkRecord(rec)
			if !ok {
				t.Fatalf("step %d: damaged record seq %d: %x", step, seq, rec)
			}
			if seq != want {
				t.Fatalf("step %d: got seq %d, want %d", step, seq, want)
			}
			want++
			if i == failAt {
				return stop
			}
			i++
			return nil
		})
		if err != nil && err != stop {
			t.Fatalf("step %d: %v", step, err)
		}
		if n < 0 || bytes < 0 || (err == nil && r.Pending() != 0) {
			t.Fatalf("step %d: n %d bytes %d pending %d", step, n, bytes, r.Pending())
		}
	}
	for r.Pending() != 0 {
		if _, _, err := r.Read(func(rec []byte) error {
			if seq, ok := checkRecord(rec); !ok || seq != want {
				t.Fatalf("drain: seq %d intact %v, want %d", seq, ok, want)
			}
			want++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if want != f.seq {
		t.Fatalf("delivered %d records, produced %d", want, f.seq)
	}
}

// TestReadConcurrent runs the producer and the consumer at the same time,
// as the kernel and a reader do; with -race it also checks that the
// atomics order the plain reads and writes of the data area.
func TestReadConcurrent(t *testing.T) {
	f := newFake(t, 4096)
	r := f.ring(t)
	const total = 20000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for f.seq < total {
			if !f.produce(16 + rng.IntN(40)*8) {
				for f.room() < 512 {
					// The kernel would drop and count LOST; the test waits.
				}
			}
		}
	}()
	var want uint64
	for want < total {
		_, _, err := r.Read(func(rec []byte) error {
			if seq, ok := checkRecord(rec); !ok || seq != want {
				return fmt.Errorf("seq %d intact %v, want %d", seq, ok, want)
			}
			want++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}

func TestNewErrors(t *testing.T) {
	words := make([]uint64, 512)
	meta := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 4096)
	tests := []struct {
		name string
		meta []byte
		data []byte
	}{
		{"short metadata page", meta[:1000], make([]byte, 64)},
		{"misaligned metadata page", meta[1:], make([]byte, 64)},
		{"empty data", meta, nil},
		{"data not a power of 2", meta, make([]byte, 96)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.meta, tc.data); err == nil {
				t.Error("New succeeded")
			}
		})
	}
	binary.LittleEndian.PutUint64(meta[offDataSize:], 128)
	if _, err := New(meta, make([]byte, 64)); err == nil {
		t.Error("New accepted a data area that disagrees with data_size")
	}
	r, err := New(meta, make([]byte, 128))
	if err != nil {
		t.Fatal(err)
	}
	if r.fd != -1 || r.Close() != nil || len(r.data) != 128 {
		t.Errorf("fd %d, data area %d bytes: want -1, 128 and a no-op Close", r.fd, len(r.data))
	}
	if _, _, err := r.Read(func([]byte) error { return nil }); err != nil {
		t.Errorf("Read after a no-op Close: %v", err)
	}
}

func TestReadZeroAllocs(t *testing.T) {
	f := newFake(t, 4096)
	r := f.ring(t)
	fn := func(rec []byte) error { return nil }
	rec := record(9, 1, 88)
	run := func() {
		for f.produceBytes(rec) {
		}
		r.Read(fn)
	}
	run() // first wrap allocates the scratch buffer
	run()
	if a := testing.AllocsPerRun(100, run); a != 0 {
		t.Errorf("%v allocations per Read in steady state, want 0", a)
	}
}

// BenchmarkRead measures Read per record in steady state; records of 88
// bytes in a 64 KiB ring wrap now and then, exercising the scratch path.
func BenchmarkRead(b *testing.B) {
	f := newFake(b, 64<<10)
	r := f.ring(b)
	var sum int
	fn := func(rec []byte) error { sum += int(rec[8]); return nil }
	const size = 88
	rec := record(9, 1, size)
	perRead := (64 << 10) / size / 2
	b.ReportAllocs()
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; {
		b.StopTimer()
		n := min(perRead, b.N-i)
		for range n {
			f.produceBytes(rec)
		}
		b.StartTimer()
		got, _, err := r.Read(fn)
		if err != nil || got != n {
			b.Fatalf("Read = %d, %v; want %d", got, err, n)
		}
		i += n
	}
}

// TestReadPos checks that each record's position is the stream offset at
// which it starts, that positions keep growing across wrap-around, and
// that Head is where the next record will start.
func TestReadPos(t *testing.T) {
	f := newFake(t, 4096)
	r := f.ring(t)
	var want, got []uint64
	var next uint64
	for round := 0; round < 5; round++ { // 5 × 1872 bytes: wraps the 4 KiB area
		for _, s := range []int{24, 1024, 320, 504} {
			if !f.produce(s) {
				t.Fatalf("round %d: no room for %d", round, s)
			}
			want = append(want, next)
			next += uint64(s)
		}
		if h := r.Head(); h != next {
			t.Fatalf("round %d: Head = %d, want %d", round, h, next)
		}
		if _, _, err := r.ReadPos(func(pos uint64, rec []byte) error {
			got = append(got, pos)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("positions %v, want %v", got, want)
	}
}
