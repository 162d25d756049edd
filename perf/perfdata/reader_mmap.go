package perfdata

import (
	"os"

	"golang.org/x/sys/unix"
)

// minMap is the least data section worth mapping: smaller ones are read.
const minMap = 1 << 20

// releaseStep is how many bytes of the mapping behind the records still
// needed are let go at once (madvise DONTNEED): the pages stay in the page
// cache, but are no longer counted in the process's resident memory.
const releaseStep = 4 << 20

// dataMap describes a data section that the source may map instead of
// reading it: the records of a file-mode recording then are slices of the
// mapping, with no copy and no read call.
type dataMap struct {
	f        *os.File // the file to map (nil: do not map)
	off, end int64    // the data section, as far as the file went when opened
	mem      []byte   // the mapping, from file offset 0 to end (nil: not mapped)
	released int      // bytes of s.buf before it were let go
	step     int      // releaseStep if 0
}

// tryMap maps the data section, if the source was set to and it is still
// all there, and makes it the source's only chunk; else the source reads
// as before. It is called before the first read.
func (s *source) tryMap() {
	m := &s.mp
	f := m.f
	m.f = nil
	if f == nil || s.keep || s.buf != nil || m.end-m.off < minMap || int64(int(m.end)) != m.end {
		return
	}
	// Map only what the file holds now: a page past its end would fault.
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < m.end {
		return
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(m.end), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return
	}
	_ = unix.Madvise(mem, unix.MADV_SEQUENTIAL) // a hint only
	m.mem = mem
	s.buf = mem[m.off:m.end:m.end]
	s.r, s.w = 0, len(s.buf)
	s.left, s.eof = 0, true
}

// release lets go of the pages of the mapping more than a step before
// low (an index in s.buf: the records before it are needed no more by the
// Reader), in steps of releaseStep. The step left mapped is for the
// Stable records a caller still works on: pages let go under it are read
// in again, for good.
func (s *source) release(low int) {
	m := &s.mp
	step := m.step
	if step == 0 {
		step = releaseStep
	}
	low -= step
	if m.mem == nil || low-m.released < step {
		return
	}
	base := int(m.off) // s.buf[i] is m.mem[base+i]
	from := (base + m.released) &^ (pageSize - 1)
	to := (base + low) &^ (pageSize - 1)
	if to > from {
		_ = unix.Madvise(m.mem[from:to], unix.MADV_DONTNEED)
	}
	m.released = low
}

var pageSize = os.Getpagesize()

// unmap removes the mapping.
func (s *source) unmap() {
	if s.mp.mem != nil {
		_ = unix.Munmap(s.mp.mem)
		s.mp.mem = nil
		s.buf = nil
		s.r, s.w = 0, 0
	}
}
