package procmap

import "github.com/hwprof/hwprof/buildid"

// What package unwind needs of the process model (unwind.Maps and
// unwind.Object), given in plain types: this package does not import
// unwind, whose tests use it.

// LookupObject is Lookup for the unwinder (unwind.Maps): the object mapped
// at addr and addr in its address space.
func (m *Map) LookupObject(pid, tid uint32, t, addr uint64) (interface {
	CFIFile() (path string, id buildid.ID, ok bool)
	IsVDSO() bool
}, uint64, bool) {
	mp, oa, ok := m.Lookup(pid, tid, t, Addr(addr))
	if !ok || mp.Object == nil {
		return nil, 0, false
	}
	return mp.Object, uint64(oa), true
}

// CFIFile returns the object's path as recorded and its build-id, with ok
// false for what has no ELF file to read call-frame information from (the
// kernel, modules, the vdso, anonymous memory, JIT code, stack and heap).
func (o *Object) CFIFile() (path string, id buildid.ID, ok bool) {
	return o.Path, o.BuildID, o.Kind == KindFile
}

// IsVDSO reports whether the object is the vdso.
func (o *Object) IsVDSO() bool { return o.Kind == KindVDSO }

// LookupObjectRange is LookupObject also giving the addresses [lo, hi)
// around addr for which, at the same pid, tid and time, LookupObject gives
// the same object and an object address that moves with the address
// (objAddr + a - addr), so that the unwinder can save their lookups. The
// range may be addr alone.
func (m *Map) LookupObjectRange(pid, tid uint32, t, addr uint64) (obj interface {
	CFIFile() (path string, id buildid.ID, ok bool)
	IsVDSO() bool
}, objAddr, lo, hi uint64, ok bool) {
	mp, whole, ok := m.findWhole(pid, tid, t, Addr(addr))
	if !ok || mp.Object == nil {
		return nil, 0, 0, 0, false
	}
	oa := m.ObjAddr(&mp, Addr(addr))
	lo, hi = addr, addr+1
	if whole {
		lo, hi = m.linear(&mp, Addr(addr))
	}
	return mp.Object, uint64(oa), lo, hi, true
}

// linear returns the addresses of mp around addr that ObjAddr maps as it
// maps addr, moving with the address: the whole mapping, or for a file the
// part of it in addr's segment (addr alone when ObjAddr found no segment
// that holds it, or when segments overlap).
func (m *Map) linear(mp *Mapping, addr Addr) (lo, hi uint64) {
	lo, hi = uint64(mp.Start), uint64(mp.End)
	switch mp.Object.Kind {
	case KindFile, KindVDSO:
	default:
		return lo, hi
	}
	segs, err := m.objSegments(mp.Object)
	if err != nil {
		return lo, hi // the file offset throughout
	}
	off := mp.PgOff + uint64(addr-mp.Start)
	for i, s := range segs {
		if !(s.Offset <= off && off-s.Offset < s.Filesz) {
			continue
		}
		for _, e := range segs[:i] { // ObjAddrOf takes the first that holds an offset
			if e.Offset < s.Offset+s.Filesz && s.Offset < e.Offset+e.Filesz {
				return uint64(addr), uint64(addr) + 1
			}
		}
		if s.Offset > mp.PgOff {
			lo = max(lo, uint64(mp.Start)+(s.Offset-mp.PgOff))
		}
		if end := s.Offset + s.Filesz - mp.PgOff; end < hi-uint64(mp.Start) {
			hi = uint64(mp.Start) + end
		}
		return lo, hi
	}
	return uint64(addr), uint64(addr) + 1
}
