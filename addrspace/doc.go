// Package addrspace is hwprof's vocabulary of addresses: the types that
// unwind, lbr, symbolize, the process model (internal/procmap) and the
// engine share, and the one place where an address of one kind becomes an
// address of another.
//
// Two kinds of address:
//
//   - [Addr] is a runtime virtual address in a process (or the kernel): what
//     samples, callchains, branch stacks and MMAP records carry.
//   - [ObjAddr] is an address in an object's own link-time address space:
//     the ELF p_vaddr space that its symbol table, DWARF and CFI use, and
//     that addr2line takes. It is not a file offset: a byte at file offset
//     off of a PT_LOAD segment is at ObjAddr p_vaddr + (off - p_offset). For
//     a non-PIE executable ObjAddr equals Addr; for a PIE or a shared library
//     Addr minus the load bias; for the vdso its offset in the image (the
//     kernel links it at 0). The kernel, its modules, anonymous memory and
//     JIT code have no file of their own to link against: their ObjAddr is
//     the runtime address (the space of /proc/kallsyms and
//     /tmp/perf-PID.map), but for the functions a jitdump file names
//     (Object.JITCode), which have addresses of their own.
//
// A [Mapping] is one range of a process's address space, [Start, End),
// mapped from file offset PgOff of an [Object]. [Mapping.ObjAddr] is the
// conversion from runtime to object address: the file offset of a is
// PgOff + (a - Start), and the PT_LOAD [Segment] holding that offset
// ([ObjAddrOf]) gives the object address; without the object's segments
// the file offset stands for it. [Mapping.Linear] says around which
// addresses that conversion is a plain shift, and [ObjAddr.Moved] applies
// the shift. [FileOffset] goes the other way, from an object address to
// the file offset a uprobe names. [Segments] picks the PT_LOAD headers of
// an ELF file the caller opened.
//
// An [Object] is what a mapping maps, identified as the recording
// identifies it: path, [Kind], build-id, device and inode. One *Object
// stands for one object in every mapping of every process, so its pointer
// is a cache key.
//
// What it does not do: it reads no file (the process model reads the
// segments, package symbolize the symbols), keeps no process state, and
// knows nothing of perf records. It starts no goroutines and imports
// only debug/elf's program-header types and package buildid.
package addrspace
