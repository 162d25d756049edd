package jitdump

import (
	"cmp"
	"slices"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/symbolize"
)

// Timeline is what a jitdump file says of its process's JIT code over
// time: every function loaded, and the addresses each held from when to
// when. It is read-only once built, so safe for concurrent use.
type Timeline struct {
	funcs []function // in load order, which is the order of their bases
	spans []span     // by start address
	// maxEnd[i] is the largest end of spans[:i+1]: a lookup walks back
	// from the last span starting at or below an address while a span
	// before may still hold it
	maxEnd []uint64
	// Loads is the number of JIT_CODE_LOAD records read, Moves of
	// JIT_CODE_MOVE records.
	Loads, Moves int
}

// function is one JIT_CODE_LOAD: its code at base in the virtual address
// space (Find, Symbolize), and its source lines by offset.
type function struct {
	base, size uint64
	name       string
	lines      []line
}

// line is a debug entry: the code from off on is of file:line.
type line struct {
	off  uint64
	file string
	line int
}

// span is a function's code at [start, end) from time from until until
// (exclusive; maxTime when it never moved away).
type span struct {
	start, end  uint64
	from, until uint64
	fn          int32
}

const maxTime = ^uint64(0)

// firstBase is the virtual address of the first function: no function
// is at 0.
const firstBase = 0x1000

// NewTimeline reads every record of r and builds the timeline in the
// recording's time: made is when the recording saw the file made (the
// time of the runtime's MMAP of it; 0 when unknown). What it read before
// an error is kept: the error (Reader.Err) is returned with the
// timeline, which holds the records before it.
func NewTimeline(r *Reader, made uint64) (*Timeline, error) {
	var recs []Record
	for r.Next() {
		rec := r.Record()
		switch rec.Kind {
		case KindCodeLoad, KindCodeMove, KindDebugInfo:
			recs = append(recs, rec)
		}
	}
	// writers write in time order, but threads may interleave: order by
	// time, file order within a time
	slices.SortStableFunc(recs, func(a, b Record) int { return cmp.Compare(a.Time, b.Time) })
	var shift int64
	if len(recs) > 0 {
		shift = Shift(made, recs[0].Time)
	}
	t := &Timeline{}
	pending := map[uint64]*DebugInfo{}
	byIndex := map[uint64]int{} // code index -> its latest span
	next := uint64(firstBase)
	for _, rec := range recs {
		at := uint64(int64(rec.Time) + shift)
		switch rec.Kind {
		case KindDebugInfo:
			pending[rec.Debug.CodeAddr] = rec.Debug
		case KindCodeLoad:
			l := rec.Load
			if l.CodeSize == 0 || l.CodeAddr+l.CodeSize < l.CodeAddr {
				continue
			}
			fn := function{base: next, size: l.CodeSize, name: l.Name, lines: lines(pending[l.CodeAddr], l.CodeAddr, l.CodeSize)}
			delete(pending, l.CodeAddr)
			next += (l.CodeSize + 15) &^ 15
			t.funcs = append(t.funcs, fn)
			byIndex[l.CodeIndex] = len(t.spans)
			t.spans = append(t.spans, span{start: l.CodeAddr, end: l.CodeAddr + l.CodeSize, from: at, until: maxTime, fn: int32(len(t.funcs) - 1)})
			t.Loads++
		case KindCodeMove:
			m := rec.Move
			i, ok := byIndex[m.CodeIndex]
			if !ok || m.NewCodeAddr+t.spans[i].end-t.spans[i].start < m.NewCodeAddr {
				continue
			}
			old := &t.spans[i]
			old.until = max(at, old.from)
			size := old.end - old.start
			byIndex[m.CodeIndex] = len(t.spans)
			t.spans = append(t.spans, span{start: m.NewCodeAddr, end: m.NewCodeAddr + size, from: at, until: maxTime, fn: old.fn})
			t.Moves++
		}
	}
	slices.SortStableFunc(t.spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	t.maxEnd = make([]uint64, len(t.spans))
	var m uint64
	for i, s := range t.spans {
		m = max(m, s.end)
		t.maxEnd[i] = m
	}
	return t, r.Err()
}

// sameClock is how far after the file was made its first record may come
// for the two clocks to be taken for one.
const sameClock = uint64(10 * 60 * 1e9)

// Shift returns what moves a file's timestamps to the recording's time,
// given when the recording saw the file made (made, 0 when unknown) and
// the file's first record's time. The file's clock is CLOCK_MONOTONIC;
// the recording's is the kernel's perf clock unless it was recorded with
// CLOCK_MONOTONIC (perf record -k mono, which perf inject -j asks for).
// On Linux x86-64 the two count from boot alike, so a first record
// within minutes after the file was made is taken as the same clock (0,
// as perf takes it); one before the file was made, or much later, is a
// clock of its own, and its first record is moved to when the file was
// made (the runtime makes the file as it starts to compile: the names
// are then right but for code loaded in that gap). The writer's header
// timestamp is not used: V8 writes one in another clock.
func Shift(made, first uint64) int64 {
	if made == 0 || (first >= made && first-made < sameClock) {
		return 0
	}
	return int64(made - first)
}

// lines turns the debug entries of code at addr (size bytes) into lines
// by offset, in order; entries outside the code are left out.
func lines(d *DebugInfo, addr, size uint64) []line {
	if d == nil {
		return nil
	}
	var out []line
	for _, e := range d.Entries {
		if e.Addr < addr || e.Addr-addr >= size {
			continue
		}
		out = append(out, line{off: e.Addr - addr, file: e.File, line: int(e.Line)})
	}
	slices.SortStableFunc(out, func(a, b line) int { return cmp.Compare(a.off, b.off) })
	return out
}

// Find returns the function code that held address addr at time t (in
// the recording's time): its runtime range [start, end) and the virtual
// address of start (base), which Symbolize names; ok is false when no
// function loaded by t held addr (code the file does not name, or named
// after t). When several did, the one loaded last wins: a function
// loaded over another's addresses replaced it there.
func (t *Timeline) Find(addr, at uint64) (start, end, base uint64, ok bool) {
	i, found := slices.BinarySearchFunc(t.spans, addr, func(s span, a uint64) int { return cmp.Compare(s.start, a) })
	if found { // the last of the spans starting at addr
		for i+1 < len(t.spans) && t.spans[i+1].start == addr {
			i++
		}
	} else {
		i--
	}
	best := -1
	for j := i; j >= 0 && t.maxEnd[j] > addr; j-- {
		s := &t.spans[j]
		if addr < s.end && s.from <= at && at < s.until && (best < 0 || s.from > t.spans[best].from) {
			best = j
		}
	}
	if best < 0 {
		return 0, 0, 0, false
	}
	s := t.spans[best]
	return s.start, s.end, t.funcs[s.fn].base, true
}

// Functions returns the number of functions loaded.
func (t *Timeline) Functions() int { return len(t.funcs) }

// Symbolize names virtual addresses (Find's base plus an offset): the
// function loaded there, with the source line of the offset when the
// file has debug records for it. The result is parallel to addrs.
func (t *Timeline) Symbolize(addrs []addrspace.ObjAddr) []symbolize.Location {
	out := make([]symbolize.Location, len(addrs))
	syms := map[int]*symbolize.Symbol{}
	for k, a := range addrs {
		out[k].Addr = a
		i, found := slices.BinarySearchFunc(t.funcs, uint64(a), func(f function, a uint64) int { return cmp.Compare(f.base, a) })
		if !found {
			i--
		}
		if i < 0 || uint64(a)-t.funcs[i].base >= t.funcs[i].size {
			continue
		}
		fn := &t.funcs[i]
		s := syms[i]
		if s == nil {
			s = &symbolize.Symbol{Name: symbolize.NewName(fn.name), Start: addrspace.ObjAddr(fn.base), Size: fn.size}
			syms[i] = s
		}
		f := symbolize.Frame{Func: s.Name}
		if j, ok := fn.lineAt(uint64(a) - fn.base); ok {
			f.File, f.Line = fn.lines[j].file, fn.lines[j].line
		}
		out[k].Symbol = s
		out[k].Frames = []symbolize.Frame{f}
	}
	return out
}

// lineAt returns the index of the line of offset off: the last entry at
// or before it.
func (f *function) lineAt(off uint64) (int, bool) {
	i, found := slices.BinarySearchFunc(f.lines, off, func(l line, o uint64) int { return cmp.Compare(l.off, o) })
	if !found {
		i--
	}
	return i, i >= 0
}
