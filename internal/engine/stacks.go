package engine

import (
	"fmt"
	"math"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/unwind"
)

// stackShape says whether a sampled stack is whole.
type stackShape uint8

const (
	stackWhole stackShape = iota
	// stackBroken: the stack cannot be real (brokenStack); it is folded
	// as the one frame brokenKey.
	stackBroken
	// stackCut: the kernel stopped walking it at the depth limit.
	stackCut
)

// brokenKey is the address key of the profile.BrokenStack function: no
// object, a process id no address key has (newAddrKey gives pid 0 to
// every address without an object).
var brokenKey = addrKey{obj: nil, pid: math.MaxUint32}

// defaultMaxStack is the kernel's default perf_event_max_stack
// (PERF_MAX_STACK_DEPTH in <linux/perf_event.h>).
const defaultMaxStack = 127

// brokenStack reports whether an unwound stack cannot be real: a user
// return address in no executable code, or, below the outermost frame,
// one that no call instruction ends at (checkReturn). A frame-pointer
// walk that left the stack reads data as return addresses: a new thread's
// first frames, code built without frame pointers, a frame-pointer
// register used for data. The kernel's frames come from its own unwinder
// and are not judged; neither are return addresses whose code cannot be
// read (JIT code, the vdso, an object without its file).
//
// The outermost frame is where the thread began, which runtimes make up:
// Go gives a goroutine's first function the return address goexit+1,
// after a NOP, so that its stacks end in runtime.goexit. It is judged by
// its mapping alone; a zero there is where some kernels end the walk (a
// zeroed frame pointer's return slot), kept as the frame perf shows as
// [unknown].
func (l *loader) brokenStack(frames []unwind.Frame) bool {
	return brokenStack(&l.addrs.retTable, frames)
}

// brokenStack is the loader's brokenStack with the return addresses
// checked in rt.
func brokenStack(rt *retTable, frames []unwind.Frame) bool {
	for i := range frames {
		f := &frames[i]
		if f.Kernel || f.Kind != unwind.FrameReturn {
			continue
		}
		outermost := i == len(frames)-1
		if outermost && f.Addr == 0 {
			continue
		}
		switch rt.checkReturn(FrameObject(f), procmap.ObjAddr(f.ObjAddr)) {
		case retNotCode:
			return true
		case retNotCall:
			if !outermost {
				return true
			}
		}
	}
	return false
}

// maxStack is the depth at which the kernel cuts event ev's callchains:
// its sample_max_stack, else this machine's perf_event_max_stack (the
// recording does not keep the sysctl; a recording made here had it),
// else the kernel's default.
func (l *loader) maxStack(ev int) uint64 {
	if a := l.ev.format.Attr(ev); a != nil && a.SampleMaxStack != 0 {
		return uint64(a.SampleMaxStack)
	}
	if l.sysMaxStack == 0 {
		l.sysMaxStack = defaultMaxStack
		if lim, err := perf.ReadKernelLimits(); err == nil && lim.MaxStack != 0 {
			l.sysMaxStack = lim.MaxStack
		}
	}
	return l.sysMaxStack
}

// cutStack reports whether s's frame-pointer callchain reached the depth
// limit: the kernel counts its kernel and user entries together, not the
// PERF_CONTEXT_* markers, and stops at the limit.
func (l *loader) cutStack(s *perf.Sample, ev int) (bool, uint64) {
	limit := l.maxStack(ev)
	if uint64(len(s.Callchain)) < limit {
		return false, limit
	}
	var n uint64
	for _, a := range s.Callchain {
		if a < perf.ContextMax {
			n++
		}
	}
	return n >= limit, limit
}

// countShape counts a sample of a stack that is not whole.
func (l *loader) countShape(shape stackShape, weight uint64) {
	switch shape {
	case stackBroken:
		l.rec.Stacks.Broken++
		l.rec.Stacks.BrokenWeight += weight
	case stackCut:
		l.rec.Stacks.Cut++
		l.rec.Stacks.CutWeight += weight
	}
}

// brokenFrames is the stack a broken stack is folded as.
func (l *loader) brokenFrames(dst []ccmap.Frame) []ccmap.Frame {
	return append(dst, ccmap.Frame{Func: l.addrs.id(brokenKey)})
}

// stackWarnings warns of broken and cut stacks with the share of the
// sampled weight they hold (total).
func (l *loader) stackWarnings(total uint64) {
	st := l.rec.Stacks
	pct := func(w uint64) float64 {
		if total == 0 {
			return 0
		}
		return 100 * float64(w) / float64(total)
	}
	if st.Broken > 0 {
		l.warn(fmt.Sprintf("%d samples (%.2f%% of the sampled weight) have stacks that cannot be real (a return address in no executable code or after no call instruction): "+
			"they are one %s line, out of the edges and contexts", st.Broken, pct(st.BrokenWeight), profile.BrokenStack))
	}
	if st.Cut > 0 {
		l.warn(fmt.Sprintf("%d samples (%.2f%% of the sampled weight) have stacks cut at the kernel's limit of %d frames: their outer frames are missing and their contexts start mid-stack; "+
			"record with --max-stack N to raise it (above kernel.perf_event_max_stack, root must first raise the sysctl: sysctl -w kernel.perf_event_max_stack=N)",
			st.Cut, pct(st.CutWeight), st.MaxStack))
	}
}
