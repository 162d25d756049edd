package ring

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"unsafe"
)

// fakeRing is the memory of one ring (metadata page + data area) with a
// producer that writes records the way the kernel does
// (__perf_output_begin and perf_output_put_handle in
// kernel/events/ring_buffer.c): check room against data_tail, copy the
// record in, wrapping at the end, then publish data_head.
type fakeRing struct {
	meta []byte
	data []byte
	seq  uint64 // next sequence number written into a record body
}

// newFake allocates a ring with dataSize bytes (a power of 2); meta is
// backed by []uint64 so its words are aligned as in a real mmap.
func newFake(t testing.TB, dataSize int) *fakeRing {
	t.Helper()
	words := make([]uint64, 4096/8)
	meta := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 4096)
	binary.LittleEndian.PutUint64(meta[offDataOffset:], 4096)
	binary.LittleEndian.PutUint64(meta[offDataSize:], uint64(dataSize))
	return &fakeRing{meta: meta, data: make([]byte, dataSize)}
}

func (f *fakeRing) ring(t testing.TB) *Ring {
	t.Helper()
	r, err := New(f.meta, f.data)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func (f *fakeRing) head() uint64 { return atomic.LoadUint64(word(f.meta, offDataHead)) }
func (f *fakeRing) tail() uint64 { return atomic.LoadUint64(word(f.meta, offDataTail)) }

// setPos puts an empty ring at position pos (both head and tail), to
// place the next record anywhere relative to the end of the data area.
func (f *fakeRing) setPos(pos uint64) {
	atomic.StoreUint64(word(f.meta, offDataTail), pos)
	atomic.StoreUint64(word(f.meta, offDataHead), pos)
}

// room is the kernel's CIRC_SPACE(head, tail, size): it never lets head
// reach tail + size, so one byte (in practice one 8-byte slot) stays free.
func (f *fakeRing) room() uint64 {
	return (f.tail() - f.head() - 1) & uint64(len(f.data)-1)
}

// record builds a record of size bytes (size >= 8; if size >= 16 the body
// starts with the sequence number and the rest is a pattern derived from
// it).
func record(typ uint32, seq uint64, size int) []byte {
	b := make([]byte, size)
	binary.LittleEndian.PutUint32(b[0:], typ)
	binary.LittleEndian.PutUint16(b[4:], uint16(seq))
	binary.LittleEndian.PutUint16(b[6:], uint16(size))
	if size >= 16 {
		binary.LittleEndian.PutUint64(b[8:], seq)
	}
	for i := 16; i < size; i++ {
		b[i] = byte(seq*31 + uint64(i)*7)
	}
	return b
}

// checkRecord reports whether rec is the record built by record for its
// sequence number, returning that number.
func checkRecord(rec []byte) (uint64, bool) {
	if len(rec) < 16 {
		return 0, false
	}
	seq := binary.LittleEndian.Uint64(rec[8:])
	want := record(binary.LittleEndian.Uint32(rec), seq, len(rec))
	return seq, string(want) == string(rec)
}

// write copies raw bytes at the head position, wrapping, without
// publishing them.
func (f *fakeRing) write(b []byte) {
	off := f.head() & uint64(len(f.data)-1)
	n := copy(f.data[off:], b)
	copy(f.data, b[n:])
}

// publish moves data_head forward by n bytes (store-release, as the
// kernel's smp_wmb + WRITE_ONCE).
func (f *fakeRing) publish(n uint64) {
	atomic.StoreUint64(word(f.meta, offDataHead), f.head()+n)
}

// produce writes one record of size bytes (type SAMPLE) with the next
// sequence number if there is room, as the kernel does; it reports
// whether it did.
func (f *fakeRing) produce(size int) bool {
	if uint64(size) > f.room() {
		return false
	}
	f.write(record(9, f.seq, size))
	f.seq++
	f.publish(uint64(size))
	return true
}

// produceBytes writes the prepared record b if there is room, without
// allocating (for benchmarks).
func (f *fakeRing) produceBytes(b []byte) bool {
	if uint64(len(b)) > f.room() {
		return false
	}
	f.write(b)
	f.publish(uint64(len(b)))
	return true
}

// produceRaw writes b as a record and publishes len(b) bytes, with no
// room check: for crafting corrupt rings.
func (f *fakeRing) produceRaw(b []byte) {
	f.write(b)
	f.publish(uint64(len(b)))
}

// collect reads the ring once, returning copies of the records.
func collect(t testing.TB, r *Ring) ([][]byte, int, error) {
	t.Helper()
	var recs [][]byte
	n, bytes, err := r.Read(func(rec []byte) error {
		recs = append(recs, append([]byte(nil), rec...))
		return nil
	})
	if n != len(recs) {
		t.Errorf("Read returned %d records, fn saw %d", n, len(recs))
	}
	return recs, bytes, err
}
