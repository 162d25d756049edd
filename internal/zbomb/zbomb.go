package zbomb

import "encoding/binary"

// BlockSize is the most one RLE block expands to (Block_Maximum_Size).
const BlockSize = 128 << 10

// FrameHeader returns a zstd frame header without a content size, with a
// window of BlockSize bytes.
func FrameHeader() []byte {
	// magic, Frame_Header_Descriptor 0 (window descriptor follows, no
	// content size, no checksum), Window_Descriptor 2^(10+7).
	return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3}
}

// FrameHeaderSize returns a zstd frame header declaring a content size of
// n bytes (8-byte field) with a window of BlockSize bytes, or with
// singleSegment the window the content size makes (no window descriptor).
func FrameHeaderSize(n uint64, singleSegment bool) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 3 << 6}
	if singleSegment {
		b[4] |= 1 << 5
	} else {
		b = append(b, 7<<3)
	}
	return binary.LittleEndian.AppendUint64(b, n)
}

// RLEBlocks appends n RLE blocks, each BlockSize copies of c; the last is
// marked last if last.
func RLEBlocks(b []byte, n int, c byte, last bool) []byte {
	for i := range n {
		h := uint32(1<<1 | BlockSize<<3) // Block_Type 1: RLE
		if last && i == n-1 {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), c)
	}
	return b
}

// Frames appends n frames of one RLE block each.
func Frames(b []byte, n int, c byte) []byte {
	for range n {
		b = append(b, FrameHeader()...)
		b = RLEBlocks(b, 1, c, true)
	}
	return b
}

// RecordByte is the byte the RLE blocks of the streams repeat: its
// expansion reads as records of 0x0808 bytes of an unknown type, which a
// reader skips by their size.
const RecordByte = 0x08

// MaxData is the most zstd data one COMPRESSED record carries.
const MaxData = 0xffff&^7 - 8

// Pipe returns a pipe-mode perf.data stream: the header, then one
// PERF_RECORD_COMPRESSED record per element of data (each at most MaxData
// bytes), in order, so that they form one zstd stream.
func Pipe(data ...[]byte) []byte {
	le := binary.LittleEndian
	b := append([]byte("PERFILE2"), 16, 0, 0, 0, 0, 0, 0, 0)
	for _, d := range data {
		if len(d) > MaxData {
			panic("zbomb: data too large for one record")
		}
		b = le.AppendUint32(b, 81) // PERF_RECORD_COMPRESSED
		b = le.AppendUint16(b, 0)
		b = le.AppendUint16(b, uint16(8+len(d)))
		b = append(b, d...)
	}
	return b
}

// A Shape is one kind of bomb, as a pipe-mode stream.
type Shape struct {
	Name   string
	Stream []byte
	// Limited says one record expands past any limit a reader may set
	// (16 MiB or more): a reader must stop it. Else every record is
	// small and only the whole stream is large.
	Limited bool
}

// Shapes returns the bombs: one COMPRESSED record of RLE blocks (2 GiB),
// one of many one-block frames (900 MiB), frames declaring a content size
// of 1 TiB (single segment: a window that size; and with a small window
// and RLE blocks), and an endless stream: records of 8 MiB each, one frame
// that never ends, total 8 MiB times records.
func Shapes(records int) []Shape {
	rle := RLEBlocks(FrameHeader(), (MaxData-6)/4, RecordByte, false)
	frames := Frames(nil, MaxData/10, RecordByte)
	single := RLEBlocks(FrameHeaderSize(1<<40, true), 1000, RecordByte, false)
	size := RLEBlocks(FrameHeaderSize(1<<40, false), (MaxData-14)/4, RecordByte, false)
	endless := [][]byte{RLEBlocks(FrameHeader(), 64, RecordByte, false)}
	for range records - 1 {
		endless = append(endless, RLEBlocks(nil, 64, RecordByte, false))
	}
	return []Shape{
		{"rle-blocks", Pipe(rle), true},
		{"many-frames", Pipe(frames), true},
		{"content-size-window", Pipe(single), true},
		{"content-size", Pipe(size), true},
		{"endless", Pipe(endless...), false},
	}
}
