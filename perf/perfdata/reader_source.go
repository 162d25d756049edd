package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// readChunk is how much the source reads into a new chunk; records are
// at most 64 KiB, so a chunk always holds a whole one. Small chunks keep
// the few in use (those of the round being held) small, and a kept record
// pins little; reads of 128 KiB cost no more per byte than bigger ones.
const readChunk = 128 << 10

// minRead is the least room worth a read into the current chunk; with
// less, the source starts a new chunk.
const minRead = 4096

// What one COMPRESSED record may expand to. perf record compresses one
// read of a ring buffer, at most mmap_len bytes, into one or more
// COMPRESSED records, and perf's reader decompresses each record into a
// buffer of mmap_len bytes (HEADER_COMPRESSED's mmap_len) plus the partial
// record left over from the previous one
// (perf_session__process_compressed_event in tools/perf/util/session.c;
// zstd_decompress_stream in tools/perf/util/zstd.c stops when it is
// full). The Reader does the same, with mmap_len capped at
// maxDecompressed and defaultDecompressed when the recording does not say:
// a record that expands to more is a decompression bomb, not perf's output.
const (
	maxDecompressed     = 64 << 20
	defaultDecompressed = 16 << 20
)

// decompressLimit is the most one COMPRESSED record may expand to in a
// recording whose HEADER_COMPRESSED gives mmapLen (0: not known).
func decompressLimit(mmapLen uint32) int {
	if mmapLen == 0 {
		return defaultDecompressed
	}
	return int(min(mmapLen, maxDecompressed))
}

// ErrDecompressedTooLarge is matched by the error for a COMPRESSED record
// that expands to more than the recording allows.
var ErrDecompressedTooLarge = errors.New("decompressed data too large")

// source cuts a byte stream into records: the data section of a file, or
// a pipe. It also holds the records that come out of COMPRESSED records,
// which it returns before reading on.
//
// The stream is read into chunks, and records are sub-slices of them: a
// chunk is never written again where it has been handed out. When a chunk
// runs out of room, the unread tail (part of a record) is copied into
// another chunk: a fresh one with keep (the old ones are left to the
// garbage collector, so records may be kept for good), else one retired
// before whose records the Reader no longer needs (numbered before free).
// Records thus stay in place while the round queue holds them, without
// copies. Decompressed records live in a buffer that is reused (z).
type source struct {
	rd   io.Reader
	buf  []byte // the current chunk; buf[:r] has been handed out
	r, w int    // unread bytes are buf[r:w]
	off  int64  // stream offset of buf[r]
	end  int64  // offset where records end (the data section's end); -1: at EOF
	left int64  // bytes rd still holds, if known; -1 if not
	eof  bool
	skip uint64 // payload bytes to drop before the next record (AUXTRACE, TRACING_DATA)
	// cut is where the header's data section ends in a file cut short
	// (0 if not): past it, records are recovered up to the end of the
	// file, and a record that cannot be framed ends them (errCutTail).
	cut int64

	// chunk numbers the chunks; recStart is where the last record that
	// next returned from the stream starts in buf.
	chunk    uint32
	recStart int
	// chunkSize is how much a new chunk reads (0: readChunk).
	chunkSize int
	keep      bool       // never reuse a chunk
	free      uint32     // chunks numbered before it may be reused (set by the Reader)
	retired   []chunkRef // chunks before the current one, oldest first (not with keep)

	scratch []byte // where payloads are read to be dropped

	z, zspare []byte // decompressed records not yet returned, z[zr:]
	zr        int
	zoff      int64 // offset of the COMPRESSED record they came from
	zs        *zstream
	// zstop: a COMPRESSED record expanded past its limit; later ones are
	// not decompressed (their stream is lost), only counted in zskipped.
	zstop    bool
	zskipped int64

	mp dataMap // a file-mode data section read through a mapping (reader_mmap.go)
}

// init sets the source to read records from rd, which starts at stream
// offset off; records end at end (-1: at EOF). size is how many bytes rd
// holds, if known (-1 if not), to size the chunks.
func (s *source) init(rd io.Reader, off, end, size int64) {
	s.rd, s.off, s.end = rd, off, end
	s.left = -1
	if size >= 0 {
		s.left = size
	}
}

// newChunk moves the unread bytes to another chunk with room for at least
// n bytes from its start: the chunk size more bytes, or what is left of rd
// when that is known and less, or n for a bigger record.
func (s *source) newChunk(n int) {
	tail := s.w - s.r
	more := int64(readChunk)
	if s.chunkSize > 0 {
		more = int64(s.chunkSize)
	}
	if s.left >= 0 {
		more = min(more, s.left)
	}
	size := max(n, tail+int(more))
	var nb []byte
	if !s.keep {
		for len(s.retired) > 0 && int32(s.retired[0].id-s.free) < 0 {
			c := s.retired[0].buf
			k := copy(s.retired, s.retired[1:])
			s.retired[k] = chunkRef{}
			s.retired = s.retired[:k]
			if len(c) >= size {
				nb = c
				break
			}
		}
		if s.buf != nil {
			s.retired = append(s.retired, chunkRef{buf: s.buf, id: s.chunk})
		}
	}
	if nb == nil {
		nb = make([]byte, size)
	}
	copy(nb, s.buf[s.r:s.w])
	s.buf, s.r, s.w = nb, 0, tail
	s.chunk++
}

func (s *source) close() {
	if s.zs != nil {
		s.zs.close()
		s.zs = nil
	}
	s.unmap()
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
// reports whether n bytes are there. It reads into the current chunk
// after the bytes handed out, or into a new chunk when that one has too
// little room left.
func (s *source) fill(n int) (bool, error) {
	for s.w-s.r < n {
		if s.eof {
			return false, nil
		}
		room := len(s.buf) - s.w
		if len(s.buf)-s.r < n || room < minRead && (s.left < 0 || s.left > int64(room)) {
			s.newChunk(n)
		}
		m, err := s.rd.Read(s.buf[s.w:])
		s.w += m
		if s.left >= 0 {
			s.left = max(s.left-int64(m), 0)
		}
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			return false, fmt.Errorf("read at offset %#x: %w", s.off+int64(s.w-s.r), err)
		}
	}
	return true, nil
}

// dropPayload discards s.skip bytes of payload that follow a record. What
// is not buffered yet is read into a scratch buffer, not into chunks.
func (s *source) dropPayload() error {
	if s.end >= 0 && s.skip > uint64(s.end-s.off) {
		return fmt.Errorf("payload of %d bytes at offset %#x runs past the end of the data section at %#x", s.skip, s.off, s.end)
	}
	for s.skip > 0 {
		if s.r == s.w {
			if s.eof {
				return fmt.Errorf("payload ends at offset %#x, %d bytes short: %w", s.off, s.skip, ErrTruncated)
			}
			if s.scratch == nil {
				s.scratch = make([]byte, 1<<16)
			}
			m, err := s.rd.Read(s.scratch[:min(uint64(len(s.scratch)), s.skip)])
			if s.left >= 0 {
				s.left = max(s.left-int64(m), 0)
			}
			s.off += int64(m)
			s.skip -= uint64(m)
			if err == io.EOF {
				s.eof = true
			} else if err != nil {
				return fmt.Errorf("read at offset %#x: %w", s.off, err)
			}
			continue
		}
		n := min(uint64(s.w-s.r), s.skip)
		s.r += int(n)
		s.off += int64(n)
		s.skip -= n
	}
	return nil
}

// errCutTail ends the records recovered from a file cut short: the last
// one was cut by the writer's death (or what follows is not records).
type errCutTail struct {
	off, n int64 // where the bytes that are not a record start, how many
	err    error
}

func (e *errCutTail) Error() string {
	return fmt.Sprintf("the recording was cut short: the last %d bytes, at offset %#x, are not a whole record (%v): the records end before them", e.n, e.off, e.err)
}

func (e *errCutTail) Unwrap() error { return e.err }

// next returns the next record, its offset, and whether it came out of a
// COMPRESSED record. It returns io.EOF at the end, *errTrailing for a few
// stray bytes at the end of a stream, *errCutTail for a record that cannot
// be framed past the data section of a file cut short, and an error naming
// the offset for a record that cannot be framed.
func (s *source) next() ([]byte, int64, bool, error) {
	rec, off, comp, err := s.nextRecord()
	if err != nil && err != io.EOF && !comp && s.cut > 0 && off >= s.cut {
		err = &errCutTail{off, s.end - off, err}
	}
	return rec, off, comp, err
}

func (s *source) nextRecord() ([]byte, int64, bool, error) {
	if len(s.z)-s.zr >= 8 {
		if rec, ok, err := s.nextDecompressed(); ok || err != nil {
			return rec, s.zoff, true, err
		}
	}
	// The usual case, first: a whole record is buffered (or mapped), with
	// no payload to drop before it, and it ends in the data section.
	if s.skip == 0 && s.mp.f == nil {
		if rest := s.buf[s.r:s.w]; len(rest) >= 8 {
			size := int(binary.LittleEndian.Uint16(rest[6:8]))
			if size >= 8 && size <= len(rest) && (s.end < 0 || s.off+int64(size) <= s.end) {
				off := s.off
				s.recStart = s.r
				s.r += size
				s.off += int64(size)
				return rest[:size:size], off, false, nil
			}
		}
	}
	if s.mp.f != nil {
		s.tryMap()
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
	s.recStart = s.r
	s.r += size
	s.off += int64(size)
	return rec, off, false, nil
}

// chunkRef locates a record in a source chunk.
type chunkRef struct {
	buf   []byte // the chunk
	id    uint32 // its number
	start uint32 // where the record starts in it
}

// lastRef locates the last record that next returned from the stream
// (not from a COMPRESSED record).
func (s *source) lastRef() chunkRef {
	return chunkRef{buf: s.buf, id: s.chunk, start: uint32(s.recStart)}
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
// many records: the data goes through one streaming decoder. The record
// may expand to at most limit bytes; past that, decoding stops there
// (memory stays bounded whatever the data), the records it held are lost,
// and so are those of every later COMPRESSED record.
func (s *source) decompress(data []byte, off int64, limit int) error {
	if s.zstop {
		s.zskipped++
		return nil
	}
	if s.zs == nil {
		zs, err := newZStream()
		if err != nil {
			return err
		}
		s.zs = zs
	}
	left := s.z[s.zr:]
	out := append(s.zspare[:0], left...)
	out, err := s.zs.feed(data, out, len(left)+limit)
	s.zspare = s.z[:0]
	s.z, s.zr, s.zoff = out, 0, off
	if errors.Is(err, ErrDecompressedTooLarge) {
		s.zs.close()
		s.zs, s.zstop = nil, true
		s.z, s.zspare = nil, nil // the bomb's output is not kept
		return fmt.Errorf("COMPRESSED record at offset %#x expands to more than %d bytes, the most one record of this recording may hold (%w): its records and those of every later COMPRESSED record are lost", off, limit, err)
	}
	if err != nil {
		s.zs.close()
		s.zs = nil
		return fmt.Errorf("COMPRESSED record at offset %#x: zstd: %w", off, err)
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
	max  int           // the most bytes out may hold (set by feed before each handover)
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

// run decodes until the decoder fails, or its output would pass zs.max
// (ErrDecompressedTooLarge): it never holds more than that, so a bomb
// costs no more memory than a record may.
func (zs *zstream) run() {
	buf := make([]byte, 1<<16)
	for {
		n, err := zs.dec.Read(buf)
		if len(zs.out)+n > zs.max {
			zs.done <- ErrDecompressedTooLarge
			return
		}
		zs.out = appendBounded(zs.out, buf[:n], zs.max)
		if err != nil {
			zs.done <- err
			return
		}
	}
}

// appendBounded appends b to out, growing it (by doubling) to limit
// bytes of capacity at most; len(out)+len(b) must not pass limit.
func appendBounded(out, b []byte, limit int) []byte {
	if cap(out)-len(out) < len(b) {
		nc := min(2*cap(out)+len(b), limit)
		out = append(make([]byte, 0, nc), out...)
	}
	return append(out, b...)
}

// feed gives the decoder data and returns out with everything decoded
// from it appended, limit bytes at most (else ErrDecompressedTooLarge). data
// is read before feed returns.
func (zs *zstream) feed(data, out []byte, limit int) ([]byte, error) {
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
	zs.out, zs.max = out, limit
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
