// Package uprobe builds the events of hwprof's exact source: one uprobe at
// the entry of every function of an ELF object, sampled at every hit, so
// that each sample is one call.
//
// Functions lists the probe points of an object: the FUNC symbols of
// .symtab (else .dynsym) with a non-zero size in an executable section,
// PLT stubs excluded, one probe per address (aliases share it), each with
// the file offset the kernel wants (found through the PT_LOAD segment that
// holds the address). Events turns them into perf events of the uprobe PMU
// (type from /sys/bus/event_source/devices/uprobe/type, config1 = pointer to
// the object's NUL-terminated path, config2 = file offset) that sample the
// IP, the thread, the time, a frame-pointer callchain, the user registers
// IP, SP and BP, and the first 8 bytes of the user stack.
//
// Counting: a sample's IP is the probed function's entry (the callee).
// At a function's first instruction the frame-pointer callchain does not
// hold the immediate caller yet (the callee has not pushed its frame), but
// the return address is the u64 at the top of the stack; ReturnAddress reads
// it from the stack copy. The call instruction ends just before it, so the
// caller is the function containing ReturnAddress−1 and the call site is the
// call instruction before the return address. A tail call (jmp) into a
// probed function is seen as a call from the tail caller's own caller.
//
// What the caller provides: root or CAP_PERFMON (or perf_event_paranoid
// low enough) and a kernel with the uprobe PMU; enough file descriptors for
// probes × CPUs (EnsureFileLimit raises RLIMIT_NOFILE). The path strings the
// attrs point to are kept alive by this package for the life of the process.
//
// What it does not do: it opens nothing (internal/record opens the events)
// and reads no recordings.
package uprobe
