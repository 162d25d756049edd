package ring

import (
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzRead fills a 256-byte data area with arbitrary bytes and publishes
// span bytes after tail. Whatever the bytes, Read must not panic, must
// end with data_tail at data_head, must hand over only records whose
// length matches their header, and must account for every byte: given
// to fn, or skipped and reported in a CorruptError.
func FuzzRead(f *testing.F) {
	rec := func(sizes ...uint16) []byte {
		var b []byte
		for _, s := range sizes {
			r := make([]byte, max(s, headerSize))
			binary.LittleEndian.PutUint32(r, 9)
			binary.LittleEndian.PutUint16(r[6:], s)
			b = append(b, r...)
		}
		return b
	}
	f.Add(rec(16, 24, 8), uint64(0), uint16(48))
	f.Add(rec(16, 24, 8), uint64(250), uint16(48))
	f.Add(rec(0), uint64(3), uint16(8))
	f.Add(rec(64, 64, 64, 64), uint64(1<<63), uint16(256))
	f.Add([]byte{}, uint64(7), uint16(300))
	f.Fuzz(func(t *testing.T, data []byte, tail uint64, span uint16) {
		g := newFake(t, 256)
		copy(g.data, data)
		g.setPos(tail)
		g.publish(uint64(span))
		r := g.ring(t)
		n, bytes, err := r.Read(func(rec []byte) error {
			if len(rec) < headerSize || int(binary.LittleEndian.Uint16(rec[6:])) != len(rec) {
				t.Fatalf("record of %d bytes with header size %d", len(rec), binary.LittleEndian.Uint16(rec[6:]))
			}
			return nil
		})
		if g.tail() != g.head() {
			t.Fatalf("tail %d != head %d after Read", g.tail(), g.head())
		}
		if n < 0 || bytes < 0 || n*headerSize > bytes {
			t.Fatalf("n %d bytes %d", n, bytes)
		}
		var ce *CorruptError
		switch {
		case err == nil:
			if bytes != int(span) {
				t.Fatalf("no error but %d of %d bytes delivered", bytes, span)
			}
		case errors.As(err, &ce):
			if uint64(bytes)+ce.Skipped != uint64(span) {
				t.Fatalf("delivered %d + skipped %d != published %d", bytes, ce.Skipped, span)
			}
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}
