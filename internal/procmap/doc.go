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
// Address arithmetic: Lookup returns the address in the object's own ELF
// virtual address space (ObjAddr, what addr2line and the object's symbol
// table take). For a file mapping that needs the object's PT_LOAD program
// headers: the file offset of addr is PgOff + (addr - Start), and the segment
// that holds that offset gives ObjAddr = p_vaddr + (offset - p_offset).
// Segments reads them with debug/elf, once per path (a regular file within
// its root, --symfs or /: package safefile), and accepts injected segments
// for tests and for objects that are not on this machine. The
// kernel and modules resolve to the runtime address itself (the address space
// of /proc/kallsyms); the vdso to its image offset (the kernel links it at 0);
// anonymous, JIT, stack and heap regions to the runtime address (the space of
// /tmp/perf-PID.map, which the caller reads).
//
// The unwinder's view: *Map is an unwind.Maps (LookupObject) and *Object
// an unwind.Object (CFIFile, IsVDSO), in plain types, so that package
// unwind's API holds none of this package's types and this package does
// not import unwind.
//
// What it does not do: it does not read symbols, build-ids of files on disk
// or perf-PID.map files (package symbolize does), and it does not synthesize
// the mappings of processes that existed before a recording started (the
// recorder writes those records). A Map is safe for concurrent use: one
// goroutine may Apply records while others Lookup. It starts no goroutines.
package procmap
