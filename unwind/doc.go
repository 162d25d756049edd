// Package unwind turns a sample into its stack, innermost frame first, by
// one of three methods, all for x86-64:
//
//   - Frame pointers (AppendCallchain): the kernel's PERF_SAMPLE_CALLCHAIN,
//     split at its PERF_CONTEXT_* markers, kernel frames kept apart from user
//     frames. The first entry of each part is an instruction pointer, the
//     others are return addresses.
//   - DWARF call-frame information (Unwinder.AppendDWARF, `--call-graph
//     dwarf`): the user registers (PERF_SAMPLE_REGS_USER) and the copy of the
//     user stack (PERF_SAMPLE_STACK_USER) of a sample are unwound with the
//     .eh_frame and .debug_frame rules of each object, read once per object
//     with delve's pkg/dwarf/frame and evaluated with pkg/dwarf/op, the rule
//     of each PC cached per object. It unwinds code built without frame
//     pointers and through libc, and stops with a StopReason: cleanly where
//     the CFI marks the outermost frame (_start, clone, thread start) or the
//     return address is zero, or where a read falls outside the stack copy,
//     a PC is in no mapping, or the CFI cannot be evaluated. A PC that no
//     FDE covers in an object that has CFI (the C runtime's
//     __do_global_dtors_aux, hand-written assembly) is stepped over by its
//     frame pointer, as perf's unwinder does, and the stack stops there
//     when that leads to no mapped caller.
//   - The LBR call stack (AppendLBR, `--call-graph lbr`, branch_sample_type
//     with PERF_SAMPLE_BRANCH_CALL_STACK): the kernel frames of the
//     callchain, then the user IP, then the call sites (`from`) of the
//     branch stack, as perf joins them.
//
// Every Frame says whether its address is an instruction pointer or a
// return address (symbolize a return address at Addr-1: the call, not what
// follows it; LookupAddr does that), whether it is a kernel frame, and,
// when the process model knows its mapping, the object and the address in
// the object's ELF address space.
//
// What the caller provides: a Maps, which resolves an address of a
// process at a time to the mapping there and the address in its object
// (package addrspace's Mapping, Object and ObjAddr: the object's path,
// build-id and kind say which file holds its CFI); hwprof's process model,
// fed the recording's MMAP2/COMM/FORK/EXIT records up to the sample, is
// one. The package's API is made of its own types (Maps, Frame) and
// addrspace's, and imports no process model;
// and for DWARF unwinding
// read access to the objects' files (with Options.Root as a --symfs, a root
// that neither .. nor a symbolic link leaves, where only regular files are
// read; or Options.Open). The vdso is not on disk: DWARF unwinding stops in it unless
// Options.VDSO holds its image (LocalVDSO reads this machine's). What it
// does not do: symbolize, or unwind other architectures. JIT code has no
// CFI: DWARF unwinding stops in it unless Options.FramePointerFallback lets
// it follow the frame pointer there. An Unwinder is safe for concurrent use; the package starts
// no goroutines.
package unwind
