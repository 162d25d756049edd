// Package jitdump reads the jitdump files JIT compilers write for perf
// (jit-PID.dump: Node.js with --perf-prof, and the JVM, .NET and others
// through their agents) and answers which function a JIT code address
// held at a given time.
//
// A jitdump file is a header followed by records, each with a timestamp:
// JIT_CODE_LOAD (a function's code, its address, size, index and name),
// JIT_CODE_MOVE (the code of an index moved to another address),
// JIT_CODE_DEBUG_INFO (source lines of the next code loaded at an
// address), JIT_CODE_UNWINDING_INFO (its .eh_frame, skipped here) and
// JIT_CODE_CLOSE (the end). The layout is perf's
// tools/perf/util/jitdump.h, mirrored field by field in reader.go.
//
// [Reader] decodes the records one at a time, as bufio.Scanner does;
// it never panics on input and stops with an error that gives the
// offset of a damaged record. [NewTimeline] builds, from the records, the
// span of time each function held each address range: a function loaded
// later over the addresses of another ends it there, and a move ends it
// at the old address and starts it at the new one. [Timeline.Find]
// answers an address at a time with the function's range and its place
// in a virtual address space where every loaded function has addresses of
// its own (so that two functions that held one address at different times
// are two addresses there), and [Timeline.Symbolize] names such virtual
// addresses, with the source lines the debug records give.
//
// The caller finds the file (the runtime maps it, so a recording names
// it in an MMAP record, as perf inject -j finds it), opens it safely
// (package internal/safefile) and says how the file's timestamps relate
// to the recording's (the file's are CLOCK_MONOTONIC). It starts no
// goroutines and does not read the code bytes or the unwinding tables.
package jitdump
