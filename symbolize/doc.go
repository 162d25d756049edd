// Package symbolize turns object-relative addresses into functions, source
// files and lines, with inlined frames, once per object and once per unique
// address.
//
// # Addresses
//
// Every lookup takes an addrspace.ObjAddr: an address in the object's own
// virtual address space, the address addr2line takes for the same file (for
// a PIE or a shared library that is the runtime address minus the mapping's
// load bias; for a non-PIE executable it equals the runtime address). This
// package does no runtime-to-object arithmetic: the caller converts a
// sampled runtime address with the mapping it falls in
// (addrspace.Mapping.ObjAddr, through internal/procmap). Kernel symbols
// ([Kallsyms]) and JIT symbols ([PerfMap]) are the exception: their addresses
// are runtime addresses, as written in /proc/kallsyms and /tmp/perf-PID.map.
//
// A return address (every frame of a callchain or unwound stack but the
// first) is a [RetAddr]; [RetAddr.Lookup] gives ra-1, an address inside the
// call instruction, and [Object.SymbolizeReturns] looks a batch up that way,
// so the line reported is the call's line, not the next statement's.
//
// # Sources
//
// An [Object] is one ELF file, opened once ([Open]). It resolves addresses
// from DWARF (functions, inlined frames and line tables, as addr2line -i
// prints them), from ELF symbols (one table, as perf reads them and
// chooses among them; PLT entries named "name@plt"), from a Go binary's
// pclntab when it has no DWARF (with its inline tree), and from separate
// debug files found by build-id or .gnu_debuglink. [OpenSymbols] reads
// no DWARF function or inline tables, only the line tables of DWARF the
// object's own file holds. Kernel symbols come from [Kallsyms], JIT
// symbols from [PerfMap].
//
// [Options.SymFS] is the root every recorded path is looked up in, like
// perf's --symfs; [Options.DebugDirs] are directories of binaries and
// debug files named by build-id, for recordings made on another machine.
// Each is a root that neither .. nor a symbolic link leaves, and only
// regular files are read in it (package internal/safefile): a file
// refused ([ErrRefused], told to [Options.Refused]) is taken for missing.
// When the file on disk has another build-id than the recording states
// ([ObjectKey]) and no file with the expected one is found, opening fails
// with a *[BuildIDMismatchError]: the wrong file is never used silently.
//
// docs/symbolization.md gives each source's rules in full, the roots and
// build-id matching, and what the package was checked against (perf
// script, addr2line, llvm-symbolizer, objdump).
//
// # Names
//
// Each frame's function [Name] has the raw (mangled) name, the demangled
// full name (C++ and Rust through github.com/ianlancetaylor/demangle, with
// parameters, as addr2line -C prints it) and a short name without
// parameters for reports. Go and C names are the same in all three forms.
//
// # What the caller provides
//
// The files of the recorded objects (or a --symfs tree, or --debug-dir
// copies named by build-id), debug packages for stripped system libraries
// (libc6-dbg and the like, under /usr/lib/debug), read access to
// /proc/kallsyms with addresses shown (root, or kernel.kptr_restrict=0),
// and the /tmp/perf-PID.map files JITs wrote, which must outlive the
// process. Nothing here needs privileges of its own.
//
// # Concurrency
//
// An Object, a Kallsyms and a PerfMap are safe for concurrent use; their
// tables are built once, on first use. Goroutines start here only when
// asked: [ReadKallsymsAhead] and [OpenAhead] read on one of their own, which
// ends with the read ([Ahead.Wait]); [EachObject] resolves objects on at
// most GOMAXPROCS, all ended when it returns. Nothing here logs or panics.
//
// # What it does not do
//
// It does not unwind stacks, does not map runtime addresses to objects, does
// not read perf.data files, and does not fetch debug files from the network
// itself (a debuginfod client, package symbolize/debuginfod, is given as
// [Options.FetchDebug]). It does not read dwz's .gnu_debugaltlink files (names held
// there are missing), nor the vdso from memory (the caller passes a file
// holding the vdso image, if it has one).
package symbolize
