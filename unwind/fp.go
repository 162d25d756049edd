package unwind

import "github.com/hwprof/hwprof/perf"

// AppendCallchain appends the frames of s's callchain (PERF_SAMPLE_CALLCHAIN,
// frame pointers) to dst: the kernel part first, then the user part, each
// innermost first, its first entry an instruction pointer and the rest
// return addresses. A sample without a callchain gives its IP alone.
func AppendCallchain(dst []Frame, s *perf.Sample, maps Maps) []Frame {
	if !s.Has(perf.SampleCallchain) || len(s.Callchain) == 0 {
		if s.Has(perf.SampleIP) {
			dst = lookup(dst, maps, s, s.IP, FrameIP, s.CPUMode() == perf.MiscKernel)
		}
		return dst
	}
	parts := perf.SplitCallchain(s.Callchain)
	dst = appendPart(dst, maps, s, parts.Kernel, true)
	if len(parts.Unmarked) > 0 && len(parts.Kernel) == 0 && len(parts.User) == 0 {
		// a chain without markers (some synthesized ones): the sample's mode decides
		dst = appendPart(dst, maps, s, parts.Unmarked, s.CPUMode() == perf.MiscKernel)
	}
	return appendPart(dst, maps, s, parts.User, false)
}

// KernelFrames appends only the kernel part of s's callchain to dst.
func KernelFrames(dst []Frame, s *perf.Sample, maps Maps) []Frame {
	if !s.Has(perf.SampleCallchain) {
		return dst
	}
	return appendPart(dst, maps, s, perf.SplitCallchain(s.Callchain).Kernel, true)
}

func appendPart(dst []Frame, maps Maps, s *perf.Sample, part []uint64, kernel bool) []Frame {
	for i, a := range part {
		kind := FrameReturn
		if i == 0 {
			kind = FrameIP
		}
		dst = lookup(dst, maps, s, a, kind, kernel)
	}
	return dst
}
