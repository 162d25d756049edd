package procmap

import "github.com/hwprof/hwprof/addrspace"

// LookupObjectRange is Lookup for the unwinder: the object mapped at addr
// and addr in its address space, also giving the addresses [lo, hi)
// around addr for which, at the same pid, tid and time, Lookup gives the
// same object and an object address that moves with the address
// (objAddr.Moved(addr, a)), so that the unwinder can save their lookups.
// The range may be addr alone.
func (m *Map) LookupObjectRange(pid, tid uint32, t uint64, addr addrspace.Addr) (obj *addrspace.Object, objAddr addrspace.ObjAddr, lo, hi addrspace.Addr, ok bool) {
	mp, whole, ok := m.findWhole(pid, tid, t, addr)
	if !ok || mp.Object == nil {
		return nil, 0, 0, 0, false
	}
	segs := m.objSegments(mp.obj)
	lo, hi = addr, addr+1
	if whole {
		lo, hi = mp.Linear(addr, segs)
	}
	return mp.Object, mp.ObjAddr(addr, segs), lo, hi, true
}
