package perfdata

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// OpenGrowing opens a file-mode recording that its writer is still
// writing, to read it as it grows. hwprof record (Writer) brings the
// header's data size up to date at every checkpoint, after the records it
// covers: Next delivers the records the header covered when it was last
// read, then returns false with Paused true and Err nil. The records of
// the round in progress stay held, in order, for later. Grow reads the
// header again and lets Next go on from where it stopped: each record is
// read once, and the Reader keeps no more than a round of them, however
// long the recording. Once the writer has finished the file (its header
// has its feature sections), Grow reads them and Next ends as it does for
// a whole file.
//
// A file that is finished already is read as Open reads it, without a
// mapping. A pipe-mode file is refused: it has no data size to go by.
func OpenGrowing(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("perfdata: %w", err) // "open PATH: ..."
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("perfdata: open: %w", err)
	}
	r, err := newReader(f, st.Size(), true)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("perfdata: open %s: %w", path, err)
	}
	r.file, r.ra = f, f
	return r, nil
}

// Paused reports whether Next stopped at the end of the records the
// header of a file still written covered (OpenGrowing): Grow goes on.
func (r *Reader) Paused() bool { return r.paused && !r.done }

// Growing reports whether the file is still written as far as the Reader
// knows (OpenGrowing, and no Grow has seen it finished).
func (r *Reader) Growing() bool { return r.growing }

// Grow reads the header of a file opened by OpenGrowing again and extends
// the records Next delivers to the end of its data section now. When the
// header says that the writer finished the file, the feature sections are
// read, and Next ends at the last record. With last set the file is taken
// as it is, finished or not: the records past the header's data size (a
// writer that died) are read up to the end of the file, as Open reads a
// file cut short. It returns whether the file is finished (always true
// after last, and for a Reader not opened by OpenGrowing).
func (r *Reader) Grow(last bool) (finished bool, err error) {
	if !r.growing || r.closed {
		return true, nil
	}
	var b [fileHeaderSize]byte
	if _, err := r.ra.ReadAt(b[:r.hdr.Size], 0); err != nil {
		return false, fmt.Errorf("perfdata: read header again: %w", err)
	}
	st, err := r.file.Stat()
	if err != nil {
		return false, fmt.Errorf("perfdata: %w", err)
	}
	size := st.Size()
	le := binary.LittleEndian
	data := Section{le.Uint64(b[40:]), le.Uint64(b[48:])}
	var feats [FeatBits / 64]uint64
	if r.hdr.Size == fileHeaderSize {
		for i := range feats {
			feats[i] = le.Uint64(b[72+8*i:])
		}
	}
	s := &r.src
	if data.Offset != r.hdr.Data.Offset || data.End() < uint64(s.end) || data.End() > uint64(size) {
		return false, fmt.Errorf("perfdata: the header's data section is now %#x bytes at %#x (was %#x at %#x, the file has %#x): not the recording being followed",
			data.Size, data.Offset, r.hdr.Data.Size, r.hdr.Data.Offset, size)
	}
	finished = feats != [FeatBits / 64]uint64{} && data.Size != 0
	end := int64(data.End())
	r.hdr.Data, r.hdr.FileSize = data, size
	if finished {
		r.hdr.Features = feats
		r.readFeatureSections(r.ra)
		r.nameEvents()
	} else if last && end < size {
		s.cut = end
		end = size
		r.lose(fmt.Sprintf("the recording was cut short (its writer did not finish it): the header's data section ends at %#x, the file at %#x: reading the records up to the end of the file", data.End(), size))
	}
	// The stream has been read up to s.off plus what is buffered.
	pos := s.off + int64(s.w-s.r)
	if end > pos {
		s.rd = io.NewSectionReader(r.ra, pos, end-pos)
		s.left, s.eof = end-pos, false
	}
	s.end = end
	r.growing = !finished && !last
	r.paused = false
	return finished || last, nil
}
