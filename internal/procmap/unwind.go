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
