package unwind

import "github.com/hwprof/hwprof/perf"

// AppendLBR appends the stack of a sample recorded in LBR call-stack mode
// (`--call-graph lbr`: branch_sample_type with PERF_SAMPLE_BRANCH_CALL_STACK)
// to dst, joined as perf's resolve_lbr_callchain_sample does: the kernel part
// of the callchain, then the user leaf, then the call site (`from`) of every
// branch-stack entry, innermost first. The user leaf is the interrupted user
// IP (the first user entry of the callchain, or the sample IP when the sample
// was taken in user mode); perf shows entries[0].to there, the entry of the
// same function, and hwprof falls back to it only when neither IP is known.
func AppendLBR(dst []Frame, s *perf.Sample, maps Maps) []Frame {
	dst = KernelFrames(dst, s, maps)
	var user []uint64
	if s.Has(perf.SampleCallchain) {
		user = perf.SplitCallchain(s.Callchain).User
	}
	br := s.Branches
	if !s.Has(perf.SampleBranchStack) {
		br = nil
	}
	switch {
	case len(user) > 0:
		dst = lookup(dst, maps, s, user[0], FrameIP, false)
	case s.Has(perf.SampleIP) && s.CPUMode() != perf.MiscKernel:
		dst = lookup(dst, maps, s, s.IP, FrameIP, false)
	case len(br) > 0:
		dst = lookup(dst, maps, s, br[0].To, FrameIP, false)
	}
	for _, b := range br {
		if b.From == 0 {
			break
		}
		dst = lookup(dst, maps, s, b.From, FrameCallSite, false)
	}
	return dst
}
