package ring

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Ring reads one perf ring buffer: the metadata page (struct
// perf_event_mmap_page) and the data area of 2^n bytes that follows it.
// Not safe for concurrent use.
type Ring struct {
	fd      int
	mapping []byte // the whole mmap, nil for New
	meta    []byte // struct perf_event_mmap_page
	data    []byte // the data area, len a power of 2
	mask    uint64 // len(data) - 1
	head    *uint64
	tail    *uint64
	scratch []byte // reassembles records that wrap around the end
}

// ErrCorrupt is matched (errors.Is) by the *CorruptError Read returns when
// a record header cannot be right.
var ErrCorrupt = errors.New("corrupt perf ring")

// CorruptError describes a record header that cannot be right: a size
// below the header's own 8 bytes, a size past data_head, or a data_head
// that is not within one data area of data_tail. Read reports it after
// skipping everything up to data_head.
type CorruptError struct {
	Pos     uint64 // ring position (data_tail value) of the bad record
	Offset  uint64 // Pos within the data area: Pos mod data_size
	Type    uint32 // the header's type, 0 if the header was incomplete
	Size    uint16 // the header's size, 0 if the header was incomplete
	Avail   uint64 // bytes from Pos to data_head
	Skipped uint64 // bytes discarded by moving data_tail to data_head
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("ring read: corrupt record at data offset %d (position %d): "+
		"type %d size %d with %d bytes published; skipped %d bytes",
		e.Offset, e.Pos, e.Type, e.Size, e.Avail, e.Skipped)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// New reads a ring laid out in plain memory: meta is the metadata page
// (struct perf_event_mmap_page, at least 1088 bytes, 8-byte aligned) and
// data the data area (a power of 2 bytes). If meta's data_size is set it
// must equal len(data). Close does nothing.
func New(meta []byte, data []byte) (*Ring, error) {
	if len(meta) < metaMin {
		return nil, fmt.Errorf("ring: metadata page is %d bytes, want at least %d", len(meta), metaMin)
	}
	if uintptr(unsafe.Pointer(&meta[0]))%8 != 0 {
		return nil, errors.New("ring: metadata page is not 8-byte aligned")
	}
	n := uint64(len(data))
	if n == 0 || bits.OnesCount64(n) != 1 {
		return nil, fmt.Errorf("ring: data area of %d bytes is not a power of 2", n)
	}
	if ds := atomic.LoadUint64(word(meta, offDataSize)); ds != 0 && ds != n {
		return nil, fmt.Errorf("ring: data_size is %d but the data area is %d bytes", ds, n)
	}
	return &Ring{
		fd:   -1,
		meta: meta,
		data: data,
		mask: n - 1,
		head: word(meta, offDataHead),
		tail: word(meta, offDataTail),
	}, nil
}

// word points at the u64 at off in the metadata page.
func word(meta []byte, off int) *uint64 { return (*uint64)(unsafe.Pointer(&meta[off])) }

// Map maps the ring of the perf event fd: the metadata page and dataPages
// data pages (a power of 2), PROT_READ|PROT_WRITE and MAP_SHARED, so the
// kernel sees data_tail and never overwrites unread records. The caller
// keeps ownership of fd; Close unmaps but does not close it.
func Map(fd int, dataPages int) (*Ring, error) {
	if dataPages <= 0 || bits.OnesCount(uint(dataPages)) != 1 {
		return nil, fmt.Errorf("ring: map fd %d: %d data pages is not a power of 2", fd, dataPages)
	}
	page := unix.Getpagesize()
	if dataPages > math.MaxInt32/page {
		return nil, fmt.Errorf("ring: map fd %d: %d data pages is too many", fd, dataPages)
	}
	mem, err := unix.Mmap(fd, 0, (1+dataPages)*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("ring: map fd %d with %d data pages: %w", fd, dataPages, err)
	}
	start, size := uint64(page), uint64(dataPages*page)
	// Since Linux 4.1 the kernel states where the data area is; it agrees
	// with the classic layout (right after the metadata page).
	if off := atomic.LoadUint64(word(mem, offDataOffset)); off != 0 {
		start = off
	}
	if ds := atomic.LoadUint64(word(mem, offDataSize)); ds != 0 {
		size = ds
	}
	if start < uint64(page) || start+size > uint64(len(mem)) {
		unix.Munmap(mem)
		return nil, fmt.Errorf("ring: map fd %d: data_offset %d data_size %d outside the %d-byte mapping",
			fd, start, size, len(mem))
	}
	r, err := New(mem[:page], mem[start:start+size])
	if err != nil {
		unix.Munmap(mem)
		return nil, fmt.Errorf("ring: map fd %d: %w", fd, err)
	}
	r.fd, r.mapping = fd, mem
	return r, nil
}

// Close unmaps a ring made by Map; for New it does nothing. The Ring must
// not be used afterwards.
func (r *Ring) Close() error {
	if r.mapping == nil {
		return nil
	}
	err := unix.Munmap(r.mapping)
	r.mapping, r.meta, r.data, r.head, r.tail = nil, nil, nil, nil, nil
	if err != nil {
		return fmt.Errorf("ring: unmap fd %d: %w", r.fd, err)
	}
	return nil
}

// Pending is the number of bytes the kernel has published and Read has not
// yet consumed (data_head - data_tail).
func (r *Ring) Pending() uint64 {
	if r.head == nil {
		return 0
	}
	return atomic.LoadUint64(r.head) - atomic.LoadUint64(r.tail)
}

// Read calls fn once per complete record available now, in order, with the
// record's bytes (the 8-byte header included). A record that wraps around
// the end of the data area is copied into a scratch buffer reused across
// calls; any other record is a slice of the ring itself. Either way the
// slice is valid only during fn: copy what must outlive it.
//
// data_head is loaded once, with acquire semantics, before any record is
// read; records published later wait for the next Read. When fn returns an
// error, Read stops and returns it as is, and the record given to that fn
// counts as consumed. After the loop data_tail is stored, with release
// semantics, past everything consumed, which lets the kernel reuse the
// space.
//
// A header whose size is below 8 or beyond data_head means the ring cannot
// be trusted: Read stops, moves data_tail to data_head so that a bad ring
// never makes it spin, and returns a *CorruptError naming the offset.
//
// records and bytes count what fn was given (bytes includes headers).
//
// Memory ordering: the kernel writes a record and then, after smp_wmb(),
// data_head (perf_output_put_handle in kernel/events/ring_buffer.c); user
// space must load data_head before it loads the record (smp_rmb), and load
// the record before it stores data_tail (smp_mb), or the kernel could
// overwrite bytes still being read. sync/atomic gives both: a Go atomic
// load is a plain MOV on x86-64, and x86-64 never reorders a load with a
// later load; the atomic store is an XCHG, a full barrier. Both also stop
// the Go compiler from moving the ring's loads across them. On weaker
// architectures Go's atomics are sequentially consistent, which is at
// least acquire/release.
func (r *Ring) Read(fn func(rec []byte) error) (records int, bytes int, err error) {
	return r.ReadPos(func(_ uint64, rec []byte) error { return fn(rec) })
}

// Head returns the kernel's write position (data_head): every record the
// kernel writes from now on starts at or after it.
func (r *Ring) Head() uint64 {
	if r.head == nil {
		return 0
	}
	return atomic.LoadUint64(r.head)
}

// ReadPos is Read that also hands fn each record's position: its offset
// in the stream of bytes the kernel has written to the ring (the
// data_head/data_tail counters, which only grow), comparable with Head.
func (r *Ring) ReadPos(fn func(pos uint64, rec []byte) error) (records int, bytes int, err error) {
	if r.head == nil {
		return 0, 0, errors.New("ring read: ring is closed")
	}
	head := atomic.LoadUint64(r.head) // acquire: pairs with the kernel's smp_wmb
	tail := atomic.LoadUint64(r.tail)
	size := uint64(len(r.data))
	if head-tail > size {
		return 0, 0, r.corrupt(tail, head, header{})
	}
	for tail != head {
		avail := head - tail
		if avail < headerSize {
			return records, bytes, r.corrupt(tail, head, header{})
		}
		h := r.header(tail)
		if h.size < headerSize || uint64(h.size) > avail {
			return records, bytes, r.corrupt(tail, head, h)
		}
		rec := r.record(tail, int(h.size))
		pos := tail
		tail += uint64(h.size)
		records++
		bytes += int(h.size)
		if err := fn(pos, rec); err != nil {
			atomic.StoreUint64(r.tail, tail)
			return records, bytes, err
		}
	}
	atomic.StoreUint64(r.tail, tail) // release: the kernel may now overwrite
	return records, bytes, nil
}

// corrupt skips to head and describes the bad record at pos.
func (r *Ring) corrupt(pos, head uint64, h header) error {
	atomic.StoreUint64(r.tail, head)
	return &CorruptError{
		Pos:     pos,
		Offset:  pos & r.mask,
		Type:    h.typ,
		Size:    h.size,
		Avail:   head - pos,
		Skipped: head - pos,
	}
}

// header decodes the record header at ring position pos, which may be
// split across the end of the data area.
func (r *Ring) header(pos uint64) header {
	off := pos & r.mask
	if off+headerSize <= uint64(len(r.data)) {
		return parseHeader(r.data[off : off+headerSize])
	}
	var b [headerSize]byte
	n := copy(b[:], r.data[off:])
	copy(b[n:], r.data)
	return parseHeader(b[:])
}

// record returns the n bytes at ring position pos, copied into the scratch
// buffer if they wrap around the end of the data area.
func (r *Ring) record(pos uint64, n int) []byte {
	off := int(pos & r.mask)
	if off+n <= len(r.data) {
		return r.data[off : off+n : off+n]
	}
	if cap(r.scratch) < n {
		r.scratch = make([]byte, max(n, 2*cap(r.scratch)))
	}
	s := r.scratch[:n]
	k := copy(s, r.data[off:])
	copy(s[k:], r.data)
	return s
}
