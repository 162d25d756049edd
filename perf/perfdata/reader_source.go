package perfdata

import (
	"encoding/binary"
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
	zs        *zstream
}

// init sets the source to read records from rd, which starts at stream
// offset off; records end at end (-1: at EOF). size is how many bytes rd
// holds, if known (-1 if not), to size the buffer.
func (s *source) init(rd io.Reader, off, end, size int64) {
	s.rd, s.off, s.end = rd, off, end
	n := int64(readChunk)
	if size >= 0 {
		n = min(n, max(size, 4096))
	}
	s.buf = make([]byte, n+1<<16)
}

func (s *source) close() {
	if s.zs != nil {
		s.zs.close()
		s.zs = nil
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

// decompress takes the zstd data of a COMPRESSED record at off and
// appends what it expands to after what is left of the previous records
// (a record may span two COMPRESSED records, as in perf). perf compresses
// one stream, flushed at each record but not ended, so one frame spans
// many records: the data goes through one streaming decoder.
func (s *source) decompress(data []byte, off int64) error {
	if s.zs == nil {
		zs, err := newZStream()
		if err != nil {
			return err
		}
		s.zs = zs
	}
	left := s.z[s.zr:]
	out := append(s.zspare[:0], left...)
	out, err := s.zs.feed(data, out)
	s.zspare = s.z[:0]
	s.z, s.zr, s.zoff = out, 0, off
	if err != nil {
		s.zs.close()
		s.zs = nil
		return fmt.Errorf("COMPRESSED record at offset %#x: zstd: %w", off, err)
	}
	if len(out) > maxDecompressed {
		return fmt.Errorf("COMPRESSED record at offset %#x: more than %d bytes of records pending", off, maxDecompressed)
	}
	return nil
}

// zstream runs a streaming zstd decoder that is fed one COMPRESSED
// record at a time. The decoder pulls its input from an io.Reader, so it
// runs on its own goroutine, in lockstep with the Reader: feed hands over
// the data and waits until the decoder has produced everything it can and
// asks for more. It is the only goroutine of the package; close ends it.
type zstream struct {
	dec  *zstd.Decoder
	in   chan []byte   // data for the decoder's input
	need chan struct{} // the decoder asks for input: its output is complete
	done chan error    // the decoder stopped
	cur  []byte        // input not yet read by the decoder
	out  []byte        // output, appended by the decoder's goroutine between handshakes
	err  error         // the decoder stopped with it
	// waiting: the decoder has asked for input and waits on in.
	waiting bool
}

func newZStream() (*zstream, error) {
	zs := &zstream{in: make(chan []byte), need: make(chan struct{}, 1), done: make(chan error, 1)}
	dec, err := zstd.NewReader(zs, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressed))
	if err != nil {
		return nil, err
	}
	zs.dec = dec
	go zs.run()
	return zs, nil
}

// Read feeds the decoder: when the data handed over is used up it says so
// and waits for the next record's.
func (zs *zstream) Read(p []byte) (int, error) {
	for len(zs.cur) == 0 {
		zs.need <- struct{}{}
		b, ok := <-zs.in
		if !ok {
			return 0, io.EOF
		}
		zs.cur = b
	}
	n := copy(p, zs.cur)
	zs.cur = zs.cur[n:]
	return n, nil
}

func (zs *zstream) run() {
	buf := make([]byte, 1<<16)
	for {
		n, err := zs.dec.Read(buf)
		zs.out = append(zs.out, buf[:n]...)
		if err != nil {
			zs.done <- err
			return
		}
	}
}

// feed gives the decoder data and returns out with everything decoded
// from it appended. data is read before feed returns.
func (zs *zstream) feed(data, out []byte) ([]byte, error) {
	if zs.err != nil {
		return out, zs.err
	}
	if !zs.waiting {
		select {
		case <-zs.need:
		case err := <-zs.done:
			zs.err = err
			return out, err
		}
		zs.waiting = true
	}
	zs.out = out
	zs.in <- data
	zs.waiting = false
	select {
	case <-zs.need:
		zs.waiting = true
	case err := <-zs.done:
		zs.err = err
	}
	return zs.out, zs.err
}

// close ends the decoder and its goroutine.
func (zs *zstream) close() {
	close(zs.in)
	if zs.err == nil {
		<-zs.done
	}
	zs.dec.Close()
}

// pendingDecompressed returns the bytes of a partial record left over
// from the last COMPRESSED record.
func (s *source) pendingDecompressed() int { return len(s.z) - s.zr }
