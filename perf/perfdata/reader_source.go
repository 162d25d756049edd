package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// readChunk is how much the source reads at a time; records are at most
// 64 KiB, so a chunk always holds a whole one once filled.
const readChunk = 1 << 20

// maxDecompressed bounds what one COMPRESSED record may expand to (perf
// record compresses one mmap read, at most its mmap_len, into a record).
const maxDecompressed = 64 << 20

// source cuts a byte stream into records: the data section of a file, or
// a pipe. It also holds the records that come out of COMPRESSED records,
// which it returns before reading on.
type source struct {
	rd   io.Reader
	buf  []byte
	r, w int   // unread bytes are buf[r:w]
	off  int64 // stream offset of buf[r]
	end  int64 // offset where records end (the data section's end); -1: at EOF
	eof  bool
	skip uint64 // payload bytes to drop before the next record (AUXTRACE, TRACING_DATA)

	z, zspare []byte // decompressed records not yet returned, z[zr:]
	zr        int
	zoff      int64 // offset of the COMPRESSED record they came from
	zdec      *zstd.Decoder
}

func (s *source) init(rd io.Reader, off, end int64) {
	s.rd, s.off, s.end = rd, off, end
	s.buf = make([]byte, readChunk+1<<16)
}

func (s *source) close() {
	if s.zdec != nil {
		s.zdec.Close()
		s.zdec = nil
	}
}

// errTrailing reports bytes after the last record that are too few for a
// header: a warning, not an error, in a stream.
type errTrailing struct {
	off int64
	n   int
}

func (e *errTrailing) Error() string {
	return fmt.Sprintf("%d bytes at offset %#x after the last record are too few for a record header: ignored", e.n, e.off)
}

// fill reads until at least n bytes are buffered or the input ends; it
// reports whether n bytes are there.
func (s *source) fill(n int) (bool, error) {
	for s.w-s.r < n {
		if s.eof {
			return false, nil
		}
		if s.r > 0 && (len(s.buf)-s.w < readChunk/2 || s.r == s.w) {
			s.w = copy(s.buf, s.buf[s.r:s.w])
			s.r = 0
		}
		if len(s.buf)-s.w < n {
			nb := make([]byte, max(2*len(s.buf), n+readChunk))
			s.w = copy(nb, s.buf[s.r:s.w])
			s.r = 0
			s.buf = nb
		}
		m, err := s.rd.Read(s.buf[s.w:])
		s.w += m
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			return false, fmt.Errorf("read at offset %#x: %w", s.off+int64(s.w-s.r), err)
		}
	}
	return true, nil
}

// dropPayload discards s.skip bytes of payload that follow a record.
func (s *source) dropPayload() error {
	if s.end >= 0 && s.skip > uint64(s.end-s.off) {
		return fmt.Errorf("payload of %d bytes at offset %#x runs past the end of the data section at %#x", s.skip, s.off, s.end)
	}
	for s.skip > 0 {
		if s.r == s.w {
			if ok, err := s.fill(1); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("payload ends at offset %#x, %d bytes short: %w", s.off, s.skip, ErrTruncated)
			}
		}
		n := min(uint64(s.w-s.r), s.skip)
		s.r += int(n)
		s.off += int64(n)
		s.skip -= n
	}
	return nil
}

// next returns the next record, its offset, and whether it came out of a
// COMPRESSED record. It returns io.EOF at the end, *errTrailing for a few
// stray bytes at the end of a stream, and an error naming the offset for
// a record that cannot be framed.
func (s *source) next() ([]byte, int64, bool, error) {
	if rec, ok, err := s.nextDecompressed(); ok || err != nil {
		return rec, s.zoff, true, err
	}
	if err := s.dropPayload(); err != nil {
		return nil, s.off, false, err
	}
	if s.end >= 0 && s.off >= s.end {
		return nil, s.off, false, io.EOF
	}
	ok, err := s.fill(8)
	if err != nil {
		return nil, s.off, false, err
	}
	if !ok {
		n := s.w - s.r
		switch {
		case s.end >= 0:
			return nil, s.off, false, fmt.Errorf("file ends at offset %#x, the data section at %#x: %w", s.off+int64(n), s.end, ErrTruncated)
		case n == 0:
			return nil, s.off, false, io.EOF
		}
		return nil, s.off, false, &errTrailing{s.off, n}
	}
	h := s.buf[s.r : s.r+8]
	typ := binary.LittleEndian.Uint32(h)
	size := int(binary.LittleEndian.Uint16(h[6:]))
	if size < 8 {
		return nil, s.off, false, fmt.Errorf("record at offset %#x (type %d): size %d is smaller than its 8-byte header", s.off, typ, size)
	}
	if s.end >= 0 && s.off+int64(size) > s.end {
		return nil, s.off, false, fmt.Errorf("record at offset %#x (type %d, %d bytes) runs past the end of the data section at %#x", s.off, typ, size, s.end)
	}
	if ok, err := s.fill(size); err != nil {
		return nil, s.off, false, err
	} else if !ok {
		return nil, s.off, false, fmt.Errorf("record at offset %#x (type %d) needs %d bytes, the input ends after %d: %w", s.off, typ, size, s.w-s.r, ErrTruncated)
	}
	rec := s.buf[s.r : s.r+size : s.r+size]
	off := s.off
	s.r += size
	s.off += int64(size)
	return rec, off, false, nil
}

// nextDecompressed returns the next whole record of the decompressed
// buffer, if there is one; a partial record stays for the next COMPRESSED
// record, as in perf.
func (s *source) nextDecompressed() ([]byte, bool, error) {
	rest := s.z[s.zr:]
	if len(rest) < 8 {
		return nil, false, nil
	}
	size := int(binary.LittleEndian.Uint16(rest[6:]))
	if size < 8 {
		typ := binary.LittleEndian.Uint32(rest)
		s.z, s.zr = s.z[:0], 0
		return nil, false, fmt.Errorf("record in the COMPRESSED record at offset %#x (type %d): size %d is smaller than its 8-byte header", s.zoff, typ, size)
	}
	if size > len(rest) {
		return nil, false, nil
	}
	s.zr += size
	return rest[:size:size], true, nil
}

// decompress expands the zstd data of a COMPRESSED record at off after
// what is left of the previous one.
func (s *source) decompress(data []byte, off int64) error {
	if s.zdec == nil {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressed))
		if err != nil {
			return err
		}
		s.zdec = d
	}
	left := s.z[s.zr:]
	nz := append(s.zspare[:0], left...)
	out, err := s.zdec.DecodeAll(data, nz)
	if err != nil {
		return fmt.Errorf("COMPRESSED record at offset %#x: zstd: %w", off, err)
	}
	if len(out)-len(left) > maxDecompressed {
		return errors.New("decompressed data too large")
	}
	s.zspare = s.z[:0]
	s.z, s.zr, s.zoff = out, 0, off
	return nil
}

// pendingDecompressed returns the bytes of a partial record left over
// from the last COMPRESSED record.
func (s *source) pendingDecompressed() int { return len(s.z) - s.zr }
