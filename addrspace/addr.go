package addrspace

// Addr is a runtime virtual address in a process's (or the kernel's)
// address space, as samples, callchains and branch stacks carry it.
type Addr uint64

// ObjAddr is an address in an object's own link-time (ELF p_vaddr)
// address space: what its symbol table, DWARF and CFI use and addr2line
// takes. For the kernel, modules, anonymous memory and JIT code, which
// have no file of their own, it is the runtime address.
type ObjAddr uint64

// Moved returns the object address of runtime address to, given that
// runtime address from is at oa and both lie in one stretch that a
// mapping shifts as a whole (see [Mapping.Linear]): oa + (to - from).
func (oa ObjAddr) Moved(from, to Addr) ObjAddr { return oa + ObjAddr(to-from) }

// Unmapped is the object address of an address no mapping holds: the
// runtime address itself, as for anonymous memory.
func Unmapped(a Addr) ObjAddr { return ObjAddr(a) }
