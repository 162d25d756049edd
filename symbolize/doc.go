// Package symbolize turns object-relative addresses into functions, source
// files and lines, with inlined frames, once per object and once per unique
// address.
//
// # Addresses
//
// Every lookup takes an [Addr]: an address in the object's own virtual
// address space, the address addr2line takes for the same file (for a PIE or
// a shared library that is the runtime address minus the mapping's load bias;
// for a non-PIE executable it equals the runtime address). This package does
// no runtime-to-object arithmetic: the caller (internal/procmap) converts a
// sampled runtime address with the mapping it falls in. Kernel symbols
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
// An [Object] is one ELF file, opened once ([Open]). It resolves addresses from:
//
//   - DWARF (.debug_info, .debug_line, through debug/dwarf): a range table of
//     subprograms with their DW_TAG_inlined_subroutine ranges and one sorted
//     line table, both built once per object on first use. The frame list of
//     an address is innermost first: the innermost frame has the line-table
//     line of the address; each outer frame has the DW_AT_call_file/call_line
//     of the inlined call it contains, as addr2line -i prints them. Function
//     names come from DW_AT_linkage_name when present (else DW_AT_name),
//     following DW_AT_abstract_origin and DW_AT_specification, as addr2line.
//     A C++ or Rust function without a linkage name (GCC's anonymous
//     namespaces) takes the name of the ELF symbol that starts where it
//     starts, as addr2line does, so it demangles to its qualified name.
//     File names are DW_AT_comp_dir, the directory entry and the file name
//     joined and cleaned (path.Join): addr2line prints the same path
//     unjoined ("./csu/../sysdeps/x.h" for "sysdeps/x.h").
//   - ELF symbols, from one table as perf reads them: the .symtab of the
//     separate debug file if there is one, else the file's .symtab, else its
//     .dynsym. STT_FUNC and STT_GNU_IFUNC symbols with a non-zero address in
//     a defined section count. A sized symbol covers [value, value+size). A
//     symbol of size zero covers the addresses up to the next symbol's start
//     within the same section. An address past the end of the sized symbol
//     before it and before the next symbol has no symbol. Of symbols at one
//     address the one perf 6.1 chooses names it (choose_best_symbol: sized,
//     not weak, global, fewer leading underscores, longer name). On x86-64,
//     PLT entries (.plt, .plt.sec, .plt.got) get "name@plt" symbols, as
//     perf and objdump name them; an IRELATIVE entry is named after its
//     resolver, as perf 6.2+ does.
//     Every [Location] carries its containing symbol (for function+offset
//     output); when there is no DWARF for an address, the symbol alone makes
//     its single frame, without file and line. [OpenSymbols] reads no
//     DWARF function or inline tables, only the line tables of DWARF the
//     object's own file holds: the symbol's single frame then has the
//     line-table file and line of the address (the innermost line, the
//     same as Open's first frame).
//   - Go pclntab (.gopclntab through debug/gosym), used when a Go binary has
//     no DWARF (go build -ldflags=-w): the physical function and lines from
//     debug/gosym, and the inlined frames from the pclntab's inline tree
//     (FUNCDATA_InlTree, PCDATA_InlTreeIndex; Go 1.20+ layout), which needs
//     the go:func.* symbol. Without .symtab (-ldflags=-s) or with an older
//     pclntab, an address gives one frame: the physical function with the
//     file:line of the innermost inlined position, as go tool addr2line.
//   - Separate debug files, when the file itself has no DWARF: by build-id
//     under each debug root (default /usr/lib/debug/.build-id/xx/rest.debug)
//     and under every [Options.DebugDirs] directory, then by .gnu_debuglink
//     (the file's directory, its .debug/ subdirectory, and /usr/lib/debug/
//     followed by the file's directory), checking the debug file's build-id
//     (or, without one, the debuglink CRC-32).
//
// [Options.SymFS] is the root every recorded path is looked up in, like
// perf's --symfs. [Options.DebugDirs] are directories of binaries and debug
// files named by build-id (flat: <hex>, <hex>.debug; or the
// .build-id/xx/rest[.debug] layout), for recordings made on another
// machine. Each is a root that neither .. nor a symbolic link leaves, and
// only regular files are read in it (package internal/safefile): a FIFO,
// a device, a directory, a link out of the root is refused ([ErrRefused],
// told to [Options.Refused]) and taken for missing. A recorded path must
// be absolute, without .. components. A perf map is read only when it is
// a file of its own (no link) owned by root or the effective user
// ([Options.PerfMap]).
//
// A recording states the build-id of each object it saw ([ObjectKey]
// holds it as a buildid.ID: perf's all-zero id means none, and a 20-byte id
// padded with zeros by perf before 5.x matches its file's shorter id). When
// the file on disk has another build-id and no file with the expected one
// is found, opening fails with a *[BuildIDMismatchError]: the wrong file is
// never used silently. Build-ids are read with package buildid; symbolize
// reads no recordings.
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
// tables are built once, on first use. Nothing here starts goroutines,
// logs, or panics on input.
//
// # What it does not do
//
// It does not unwind stacks, does not map runtime addresses to objects, does
// not read perf.data files, and does not fetch debug files from the network
// (debuginfod). It does not read dwz's .gnu_debugaltlink files (names held
// there are missing), nor the vdso from memory (the caller passes a file
// holding the vdso image, if it has one).
//
// # Checked against
//
// The tests compare symbol+offset with perf script's for every address
// perf 6.1 sampled (perf record -e cpu-clock) in a program and in libc, the
// symbols of every sample address perf 6.1 named in a real LBR recording (autofdo's test.lbr of test.binary, from the shared
// fixtures) with perf script's, PLT symbols with objdump -d's labels, and
// every byte of C programs built with gcc (-O0 with frame
// pointers, -O2, -O2 -fomit-frame-pointer, PIE with DWARF 4, -O3 with
// --gc-sections), the functions of a C++ program (namespaces, templates,
// virtual calls) and 3,500 addresses of the system libc through its debug
// package with addr2line -i -f -C, function, file, line and inline chain;
// a Go binary with DWARF with llvm-symbolizer (binutils 2.40 cannot read
// Go's DWARF 5); the same binary with its DWARF stripped (pclntab inline
// tree) with llvm-symbolizer on the unstripped one, and one built with
// -ldflags=-w with go tool addr2line.
// Where addr2line names the compilation unit's primary file instead of an
// included one (a binutils 2.40 DWARF 5 bug), the position must match
// llvm-symbolizer, which agrees with gdb.
package symbolize
