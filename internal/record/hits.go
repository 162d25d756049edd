package record

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// maxForkDepth bounds the walk from a process to the processes it was
// forked from, whose mappings it inherited without MMAP records.
const maxForkDepth = 16

// hits finds the objects that had samples, for the build-id cache, as
// perf record's end-of-run build-id pass does (build_id__mark_dso_hit):
// the executable file mappings of every process come from the MMAP and
// MMAP2 records as they are read (addMapping), a forked process sees its
// parent's too (addFork); then every address a sample holds (its IP, its
// callchain, its branch stack, and the words of its user stack copy that
// fall in an executable mapping: the return addresses a DWARF unwinder
// follows are among them) marks the object mapped there (sample).
//
// A process's mappings are every one it ever had: an address that two
// objects held one after the other marks one of them or both, which
// keeps more than needed at worst. It starts no goroutines.
type hits struct {
	procs  map[uint32]*procMaps
	parent map[uint32]uint32 // forked process -> its parent
	hit    map[string]bool   // object path -> had a sample address
	s      perf.Sample       // reused
	// live: the samples are looked at as they are read (a stream), when
	// the mapping of an address may be read after it (another CPU's
	// ring): addresses of no mapping yet wait in pending (at most
	// maxPending) for done.
	live    bool
	pending []pidAddr
}

// maxPending bounds the addresses a live pass looks up again at its end.
const maxPending = 1 << 16

// pidAddr is an address of a process.
type pidAddr struct {
	pid  uint32
	addr uint64
}

// procMaps are the executable file mappings of one process.
type procMaps struct {
	maps   []fileMap
	maxEnd []uint64 // maxEnd[i]: the largest end of maps[:i+1]
	sorted bool
	last   int // the mapping the last address hit, -1: none
	lo, hi uint64
}

// fileMap is one executable mapping of a file.
type fileMap struct {
	start, end uint64
	path       string
}

func newHits() *hits {
	return &hits{procs: map[uint32]*procMaps{}, parent: map[uint32]uint32{}, hit: map[string]bool{}}
}

// addMapping notes that process pid mapped path executable at
// [addr, addr+n).
func (h *hits) addMapping(pid uint32, addr, n uint64, path string) {
	if n == 0 || addr+n < addr {
		return
	}
	p := h.procs[pid]
	if p == nil {
		p = &procMaps{last: -1, lo: addr, hi: addr + n}
		h.procs[pid] = p
	}
	p.maps = append(p.maps, fileMap{addr, addr + n, path})
	p.sorted, p.last = false, -1
	p.lo, p.hi = min(p.lo, addr), max(p.hi, addr+n)
}

// addFork notes that process pid was forked from process ppid.
func (h *hits) addFork(pid, ppid uint32) {
	if pid != ppid {
		if _, ok := h.parent[pid]; !ok {
			h.parent[pid] = ppid
		}
	}
}

// sample marks the objects of the addresses of the sample record rec.
func (h *hits) sample(f *perf.SampleFormat, rec []byte) {
	s := &h.s
	if f.DecodeSample(rec, s) != nil || !s.Has(perf.SampleTID) {
		return
	}
	pid := s.PID
	if s.Has(perf.SampleIP) {
		h.markOrWait(pid, s.IP)
	}
	for _, a := range s.Callchain {
		if !perf.IsCallchainContext(a) {
			h.markOrWait(pid, a)
		}
	}
	for _, b := range s.BranchStack.Branches {
		h.markOrWait(pid, b.From)
		h.markOrWait(pid, b.To)
	}
	stack := s.StackUser.Valid()
	for i := 0; i+8 <= len(stack); i += 8 {
		h.markWord(pid, le.Uint64(stack[i:]))
	}
}

// markWord marks the object of a word of a user stack copy, which is
// mostly not an address: a quick look at the process's range first.
func (h *hits) markWord(pid uint32, a uint64) {
	if p := h.procs[pid]; p != nil && (a < p.lo || a >= p.hi) {
		if _, forked := h.parent[pid]; !forked {
			return
		}
	}
	h.mark(pid, a)
}

// markOrWait marks the object of a user address a of process pid, or,
// in a live pass, keeps it for done when no mapping holds it yet.
func (h *hits) markOrWait(pid uint32, a uint64) {
	if !h.mark(pid, a) && h.live && a < kernelStart && len(h.pending) < maxPending {
		h.pending = append(h.pending, pidAddr{pid, a})
	}
}

// kernelStart is where the kernel's half of the x86-64 address space
// begins: no process maps a file there.
const kernelStart = 0xffff800000000000

// done looks up again the addresses a live pass kept waiting.
func (h *hits) done() {
	for _, pa := range h.pending {
		h.mark(pa.pid, pa.addr)
	}
	h.pending = nil
}

// mark marks the object process pid had mapped at address a: its own
// mapping, else one it inherited. It reports whether one held a.
func (h *hits) mark(pid uint32, a uint64) bool {
	for range maxForkDepth {
		if p := h.procs[pid]; p != nil {
			if path, ok := p.find(a); ok {
				h.hit[path] = true
				return true
			}
		}
		ppid, ok := h.parent[pid]
		if !ok {
			return false
		}
		pid = ppid
	}
	return false
}

// find returns the path of a mapping that holds a.
func (p *procMaps) find(a uint64) (string, bool) {
	if p.last >= 0 && a >= p.maps[p.last].start && a < p.maps[p.last].end {
		return p.maps[p.last].path, true
	}
	if a < p.lo || a >= p.hi {
		return "", false
	}
	p.sort()
	i, _ := slices.BinarySearchFunc(p.maps, a+1, func(m fileMap, t uint64) int { return cmp.Compare(m.start, t) })
	for j := i - 1; j >= 0 && p.maxEnd[j] > a; j-- { // the mappings that start at or before a
		if a < p.maps[j].end {
			p.last = j
			return p.maps[j].path, true
		}
	}
	return "", false
}

// sort orders the mappings by start, once after each addition.
func (p *procMaps) sort() {
	if p.sorted {
		return
	}
	slices.SortFunc(p.maps, func(x, y fileMap) int { return cmp.Compare(x.start, y.start) })
	p.maxEnd = p.maxEnd[:0]
	var m uint64
	for _, fm := range p.maps {
		m = max(m, fm.end)
		p.maxEnd = append(p.maxEnd, m)
	}
	p.sorted = true
}

// readSamples runs sample over every sample record of the perf.data file
// ra of size bytes, in the order they were written.
func (h *hits) readSamples(ra io.ReaderAt, size int64) error {
	rd, err := perfdata.NewReader(ra, size)
	if err != nil {
		return err
	}
	defer rd.Close()
	rd.SetFileOrder(true)
	f := rd.Format()
	for rd.Next() {
		if raw, _ := rd.Raw(); perf.RecordType(le.Uint32(raw)) == perf.RecordSample {
			h.sample(f, raw)
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("read the samples back: %w", err)
	}
	return nil
}
