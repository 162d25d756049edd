package addrspace

import "debug/elf"

// Mapping is one range of an address space, [Start, End), mapped from
// file offset PgOff of Object (nil when unknown).
type Mapping struct {
	Start, End Addr
	PgOff      uint64 // file offset of Start
	Object     *Object
}

// Contains reports whether a falls in the mapping's range.
func (m *Mapping) Contains(a Addr) bool { return m.Start <= a && a < m.End }

// Segment is one PT_LOAD program header of an ELF object.
type Segment struct {
	Offset, Vaddr uint64 // p_offset, p_vaddr
	Filesz, Memsz uint64 // p_filesz, p_memsz
	Align         uint64 // p_align
	Flags         elf.ProgFlag
}

// Segments returns the PT_LOAD program headers among progs (an ELF file's
// Progs), in their order.
func Segments(progs []*elf.Prog) []Segment {
	var segs []Segment
	for _, p := range progs {
		if p.Type == elf.PT_LOAD {
			segs = append(segs, Segment{Offset: p.Off, Vaddr: p.Vaddr, Filesz: p.Filesz, Memsz: p.Memsz, Align: p.Align, Flags: p.Flags})
		}
	}
	return segs
}

// holds reports whether file offset off is in the file-backed part of s.
func (s *Segment) holds(off uint64) bool { return s.Offset <= off && off-s.Offset < s.Filesz }

// ObjAddr converts a, which m holds, to its object's address space: for a
// file or the vdso the address of the PT_LOAD segment of segs (the
// object's) holding a's file offset, or that offset itself when segs has
// none; for JIT code a jitdump names (Object.JITCode) the offset from
// PgOff; for the kernel, modules and anonymous memory a itself.
func (m *Mapping) ObjAddr(a Addr, segs []Segment) ObjAddr {
	switch {
	case m.Object.Kind.Linked():
		off := m.PgOff + uint64(a-m.Start)
		if oa, ok := ObjAddrOf(segs, off); ok {
			return oa
		}
		return ObjAddr(off)
	case m.Object.JITCode:
		return ObjAddr(m.PgOff + uint64(a-m.Start))
	}
	return ObjAddr(a)
}

const pageSize = 4096

// ObjAddrOf turns a file offset into an address in the object's address
// space through the PT_LOAD segment that holds the offset:
// p_vaddr + (off - p_offset). An offset in the page-aligned head of a
// segment (before p_offset, in the same page) belongs to it too.
func ObjAddrOf(segs []Segment, off uint64) (ObjAddr, bool) {
	for _, s := range segs {
		if s.holds(off) {
			return ObjAddr(s.Vaddr + (off - s.Offset)), true
		}
	}
	for _, s := range segs {
		head := s.Offset &^ (pageSize - 1)
		end := s.Offset + max(s.Filesz, s.Memsz)
		if head <= off && off < (end+pageSize-1)&^(pageSize-1) {
			return ObjAddr(s.Vaddr + off - s.Offset), true
		}
	}
	return 0, false
}

// FileOffset turns an object address into its file offset through the
// PT_LOAD segment whose file-backed part holds it:
// p_offset + (oa - p_vaddr). False when none does (.bss, or no segment).
func FileOffset(segs []Segment, oa ObjAddr) (uint64, bool) {
	a := uint64(oa)
	for _, s := range segs {
		if a >= s.Vaddr && a-s.Vaddr < s.Filesz {
			return a - s.Vaddr + s.Offset, true
		}
	}
	return 0, false
}

// Linear returns the addresses [lo, hi) of m around a that ObjAddr (with
// the same segs) maps as it maps a, moving with the address: the whole
// mapping, or for a file the part of it in a's segment; a alone when
// ObjAddr found no segment that holds a's offset, or when segments
// overlap. With no segments (nil: the file offset throughout) it is the
// whole mapping.
func (m *Mapping) Linear(a Addr, segs []Segment) (lo, hi Addr) {
	lo, hi = m.Start, m.End
	if !m.Object.Kind.Linked() || segs == nil {
		return lo, hi
	}
	off := m.PgOff + uint64(a-m.Start)
	for i, s := range segs {
		if !s.holds(off) {
			continue
		}
		for _, e := range segs[:i] { // ObjAddrOf takes the first that holds an offset
			if e.Offset < s.Offset+s.Filesz && s.Offset < e.Offset+e.Filesz {
				return a, a + 1
			}
		}
		if s.Offset > m.PgOff {
			lo = max(lo, m.Start+Addr(s.Offset-m.PgOff))
		}
		if end := s.Offset + s.Filesz - m.PgOff; end < uint64(hi-m.Start) {
			hi = m.Start + Addr(end)
		}
		return lo, hi
	}
	return a, a + 1
}
