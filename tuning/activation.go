package tuning

// Frame is what a native sample says about its top activation record, for
// ActivationKey: the user stack pointer, the callee-saved registers rbx,
// rbp, r12-r15 and the caller-saved ones (PERF_SAMPLE_REGS_USER), the word
// at the top of the stack (the first u64 of PERF_SAMPLE_STACK_USER) and
// the frame-pointer callchain's return addresses (the user part without
// the IP).
type Frame struct {
	SP    uint64
	Saved [6]uint64 // rbx, rbp, r12, r13, r14, r15
	// Scratch are the caller-saved registers rax, rcx, rdx, rsi, rdi and
	// r8-r11, and Kept the ones among them (bit i for Scratch[i]) that
	// no code still to run in this activation can write: the running
	// function's code from the sampled instruction to its returns, and
	// the functions it calls directly, as far as they can be read (see
	// unwind/clobber). Kept is 0 when that is not known.
	Scratch [9]uint64
	Kept    uint16
	TopWord uint64
	Returns []uint64
}

// ActivationKey is the identity of a sample's top activation record as far
// as a native profiler can tell it without marking frames, for
// RepeatCounter: two samples of one thread with the same key are taken
// in the same invocation of the running function, as the CC-Map paper's
// marked frames tell. It mixes
//
//   - the return addresses of the callchain: the path of calls that led
//     here (a different caller or call site is a different activation);
//   - the stack pointer: the depth (a recursion's levels differ);
//   - the word at the top of the stack: in a function without its frame
//     (most hot leaves at -O2) its return address or a register it saved,
//     which tells two calls from the same caller to different leaves
//     apart;
//   - the callee-saved registers: a caller that calls in a loop keeps the
//     loop's state across the call in them (or in its frame), so two
//     calls from the same call site in different iterations differ,
//     while a callee that does not write them (most leaves) leaves them
//     as its caller set them for its whole activation;
//   - the caller-saved registers the rest of the activation cannot write
//     (Frame.Kept): they hold, for the whole activation, what they held
//     when it was called, the arguments it keeps and whatever its caller
//     left there. A caller compiled with interprocedural register
//     allocation (gcc's -fipa-ra, on at -O2) keeps its loop's state
//     across calls to functions it knows in exactly these registers
//     instead of callee-saved ones, so without them every call of one
//     loop reads as the same activation.
//
// It errs where a running function writes callee-saved registers or the
// word at the top of its stack (a function with its frame set up keeps
// locals there): one activation then reads as several, repetition is
// undercounted and the period shrinks, which the budget bounds. It reads
// high where a caller keeps its loop's state where the key does not look:
// in caller-saved registers while Kept is 0 (the code on top cannot be
// read through, such as a leaf with a switch's indirect jump, or the
// process's memory cannot be read), or only in memory (unoptimized code
// that passes its callees nothing of it). The simulation in
// activation_test.go measures both errors.
func ActivationKey(f *Frame) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	mix := func(v uint64) {
		h ^= v
		h *= 0xff51afd7ed558ccd
		h ^= h >> 32
	}
	mix(f.SP)
	mix(f.TopWord)
	for _, v := range f.Saved {
		mix(v)
	}
	mix(uint64(f.Kept))
	for i, v := range f.Scratch {
		if f.Kept&(1<<i) != 0 {
			mix(v)
		}
	}
	for _, r := range f.Returns {
		mix(r)
	}
	mix(uint64(len(f.Returns)))
	return h
}
