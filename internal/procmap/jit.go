package procmap

import "github.com/hwprof/hwprof/addrspace"

// JITCode is what a process's JIT compiler said of its code over time
// (package symbolize/jitdump's Timeline, from a jitdump file): which
// function's code held an address at a time.
type JITCode interface {
	// Find returns the range [start, end) of the function code that held
	// addr at time t and the address of start in the object's own
	// address space (base), where every function the file names has
	// addresses of its own; ok is false when it names none there then.
	Find(addr, t uint64) (start, end, base uint64, ok bool)
}

// jitOverlay is a process's JIT code and the object that names it.
type jitOverlay struct {
	code JITCode
	obj  *object
}

// SetJIT says that the JIT code of process pid is named by code, read
// from the file at path: from then on, an address of the process's JIT
// memory (anonymous executable memory, KindJIT) that code names at the
// lookup's time resolves to an object of Kind KindJIT and that Path,
// marked JITCode, whose object address is the function's own (base plus
// the offset into the function: addrspace.Mapping.ObjAddr), so that two functions that held one address at
// different times are two addresses of the object. Addresses code does
// not name resolve as before. A second call for pid replaces the first.
func (m *Map) SetJIT(pid uint32, path string, code JITCode) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jit == nil {
		m.jit = map[uint32]*jitOverlay{}
	}
	m.jit[pid] = &jitOverlay{code: code, obj: &object{Object: addrspace.Object{Path: path, Kind: addrspace.KindJIT, JITCode: true}}}
}

// HasJIT says whether process pid's JIT code is named by SetJIT's code.
func (m *Map) HasJIT(pid uint32) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.jit[pid] != nil
}

// jitFind returns the mapping of the function that held addr at time t
// when mp, which holds addr, is JIT memory of a process with SetJIT's
// code; the caller holds mu.
func (m *Map) jitFind(pid uint32, mp *mapping, t uint64, addr addrspace.Addr) (mapping, bool) {
	if mp.Object == nil || mp.Object.Kind != addrspace.KindJIT || m.jit == nil {
		return mapping{}, false
	}
	ov := m.jit[pid]
	if ov == nil {
		return mapping{}, false
	}
	start, end, base, ok := ov.code.Find(uint64(addr), t)
	if !ok {
		return mapping{}, false
	}
	jm := *mp
	jm.Start, jm.End, jm.PgOff, jm.Object, jm.obj = addrspace.Addr(start), addrspace.Addr(end), base, &ov.obj.Object, ov.obj
	return jm, true
}
