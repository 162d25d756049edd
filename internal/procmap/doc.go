// Package procmap is hwprof's process model: processes → mappings → objects,
// built from the MMAP, MMAP2, COMM, FORK and EXIT records of a recording
// (package perf's typed records) fed in time order, and queried with
// Lookup(pid, tid, time, addr).
//
// What it models:
//
//   - A fork copies the parent's mappings into the child; a new thread (a
//     FORK whose pid equals its parent's pid) shares its process's mappings.
//   - An exec (a COMM record with the exec bit) retires every mapping of the
//     process; the new image's MMAP2 records follow it. Kernels before 3.16
//     set no exec bit: there, as in perf, the new image's mappings replace
//     the old ones where they overlap.
//   - A new mapping that overlaps older ones retires the overlapped parts
//     (the kernel reports no munmap; a later mmap over the same range is how
//     a replacement shows), keeping the parts that do not overlap.
//   - Nothing is forgotten: a retired mapping keeps its time range
//     [From, Until), so a sample taken before a range was replaced or the
//     process exec'd still resolves to what was mapped then.
//   - Kernel mappings (pid -1: "[kernel.kallsyms]_text", modules) apply to
//     every process; lookups fall back to them.
//
// Address arithmetic: Lookup returns the mapping (an addrspace.Mapping of
// an *addrspace.Object, one pointer per object) and the address in the
// object's own address space (addrspace.ObjAddr), converted by package
// addrspace (Mapping.ObjAddr) with the object's PT_LOAD program headers.
// Segments reads them with debug/elf, once per path (a regular file within
// its root, --symfs or /: package safefile), and accepts injected segments
// for tests and for objects that are not on this machine.
// JIT memory of a process whose jitdump file SetJIT gave resolves to the
// range of the function that held the address at the lookup's time, in an
// object marked addrspace.Object.JITCode (the function's own addresses).
// LookupObjectRange also says around which addresses the answer shifts
// with the address (Mapping.Linear), so that the unwinder saves lookups.
// *Map is an unwind.Maps, in addrspace's types: this package does not
// import unwind.
//
// What it does not do: it does not read symbols, build-ids of files on disk
// or perf-PID.map files (package symbolize does), and it does not synthesize
// the mappings of processes that existed before a recording started (the
// recorder writes those records). A Map is safe for concurrent use: one
// goroutine may Apply records while others Lookup. It starts no goroutines.
package procmap
