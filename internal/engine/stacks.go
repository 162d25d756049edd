package engine

import (
	"fmt"
	"math"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
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
// one that no call instruction ends at (checkReturn), or, for a stack cut
// at the depth limit, a frame-pointer loop (loopStack). A frame-pointer
// walk that left the stack reads data as return addresses: a new thread's
// first frames, code built without frame pointers, a frame-pointer
// register used for data. The kernel's frames come from its own unwinder
// and are not judged; neither are return addresses whose code cannot be
// read (JIT code, the vdso, an object without its file).
//
// The outermost frame is where the thread began, which runtimes make up:
// Go gives a goroutine's first function the return address goexit+1,
// after a NOP, so that its stacks end in runtime.goexit. It is judged by
// its mapping alone, and an address in no mapping at all is not judged
// either: a zero there is where some kernels end the walk (a zeroed frame
// pointer's return slot), and another word is the one above a thread's
// first frame, which exec or clone left there (a program without libc
// whose C entry function sets up a frame has argc there). Both are kept
// as the frame perf shows as [unknown]. A walk that ran into data reads
// more than one such word, and the inner ones still break the stack.
//
// A stack with no way back to an entry is not judged here, stack by
// stack, but once the profile is complete (unrooted).
//
// A cut stack (at the kernel's depth limit) is also broken when it ends in
// a frame-pointer loop (loopStack). The loop check runs on the folding
// goroutine only: the preparers judge unwound (DWARF) stacks, which are
// never cut at the kernel's limit.
func (l *loader) brokenStack(frames []unwind.Frame, cut bool) bool {
	return brokenStack(&l.addrs.retTable, frames) || cut && l.loopStack(frames)
}

// brokenStack is the loader's brokenStack, without the loop check, with
// the return addresses checked in rt.
func brokenStack(rt *retTable, frames []unwind.Frame) bool {
	for i := range frames {
		f := &frames[i]
		if f.Kernel || f.Kind != unwind.FrameReturn {
			continue
		}
		outermost := i == len(frames)-1
		if outermost && (f.Addr == 0 || f.Object == nil) {
			continue
		}
		switch rt.checkReturn(f.Object, f.ObjAddr) {
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
	return uint64(len(s.Callchain)) >= limit && chainEntries(s.Callchain) >= limit, limit
}

// chainEntries is the number of a callchain's entries other than the
// PERF_CONTEXT_* markers (what the kernel's depth limit counts).
func chainEntries(chain []uint64) uint64 {
	var n uint64
	for _, a := range chain {
		if a < perf.ContextMax {
			n++
		}
	}
	return n
}

// countShape counts a sample of a stack folded as frames (innermost
// first): a stack that is not whole by its shape, a whole one by its
// outermost frame, which unrooted judges once the profile is complete.
func (l *loader) countShape(shape stackShape, frames []ccmap.Frame, weight uint64) {
	switch shape {
	case stackWhole:
		if len(frames) == 0 {
			return
		}
		id := int(frames[len(frames)-1].Func)
		if len(frames) > 1 && l.addrs.keys[id].obj == nil {
			// the word above the first frame (brokenStack): the frame
			// inside it is where the thread began
			id = int(frames[len(frames)-2].Func)
		}
		if id >= len(l.rootWeight) {
			n := max(id+1, 2*len(l.rootWeight))
			l.rootWeight = append(l.rootWeight, make([]uint64, n-len(l.rootWeight))...)
			l.rootSamples = append(l.rootSamples, make([]uint64, n-len(l.rootSamples))...)
		}
		l.rootSamples[id]++
		l.rootWeight[id] += weight
	case stackBroken:
		l.rec.Stacks.Broken++
		l.rec.Stacks.BrokenWeight += weight
	case stackCut:
		l.rec.Stacks.Cut++
		l.rec.Stacks.CutWeight += weight
	}
}

// entryFuncs are the functions threads and processes begin in, where a
// whole stack ends: the ELF entry and glibc's path to main, glibc's and
// the kernel's thread starts, Go's goroutine and thread starts. A runtime
// may also call one of them (Go's rt0_go calls mstart; a thread's walk
// may end at start_thread or go on to clone3), so a stack ending at one
// is rooted whatever else the profile shows.
var entryFuncs = map[string]bool{
	"_start": true, "__libc_start_main": true, "__libc_start_main_impl": true, "__libc_start_call_main": true,
	"start_thread": true, "clone": true, "clone3": true, "__clone": true, "__clone3": true, "__clone_internal": true,
	"runtime.goexit": true, "runtime.rt0_go": true, "runtime.mstart": true, "runtime.mstart0": true,
	"runtime.goexit.abi0": true, "runtime.rt0_go.abi0": true, "runtime.mstart.abi0": true,
}

// unrooted counts the whole stacks with no way back to an entry, once m
// holds every edge: those whose outermost function is called elsewhere
// in the profile (the callee of an edge) and is no entryFuncs function.
//
// A native profiler cannot list every program's entries: a program built
// without libc (-nostdlib, its own _start under any name), a JIT or an
// interpreter start threads where they like. What it can argue is that
// a stack ends where its thread began, and that a function the profile
// sees called was not where a thread began: the stack lost its outer
// frames, as a frame-pointer walk does when it meets code that keeps
// data in rbp and stops there. Roots form a small set, the functions no
// stack shows a caller of; a program's own entries are among them
// without being named, and the named ones cover the runtimes that also
// call their entries. Kernel frames are not judged (a sample's kernel
// part ends at the kernel's entry code, and its user part, if any, is
// outer); a stack ending in the [unknown] word above its first frame is
// judged by that frame.
//
// The judgement is after the fact and may be wrong where a program calls
// its own thread function directly, so unrooted stacks are counted and
// warned about, like cut ones, not dropped: every adjacent pair in them
// passed brokenStack, so their edges are real; only their contexts start
// mid-stack.
func (l *loader) unrooted(m *ccmap.Map, funcs []profile.Func, fmap []ccmap.FuncID) {
	called := make([]bool, len(funcs))
	for _, e := range m.Edges(ccmap.Total) {
		// a caller in no object (the word above a first frame) is no
		// evidence of a call
		if int(e.Callee) < len(called) && int(e.Site.Caller) < len(funcs) && funcs[e.Site.Caller].Object != "" {
			called[e.Callee] = true
		}
	}
	for id, w := range l.rootSamples {
		if w == 0 {
			continue
		}
		k := l.addrs.keys[id]
		if k.obj == nil || k.obj.Kind == addrspace.KindKernel || k.obj.Kind == addrspace.KindModule {
			continue
		}
		f := fmap[id]
		if !called[f] || entryFuncs[funcs[f].Name] {
			continue
		}
		l.rec.Stacks.Unrooted += w
		l.rec.Stacks.UnrootedWeight += l.rootWeight[id]
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
		l.warn(fmt.Sprintf("%d samples (%.2f%% of the sampled weight) have stacks that cannot be real (a return address in no executable code or after no call instruction, a frame-pointer loop): "+
			"they are one %s line, out of the edges and contexts", st.Broken, pct(st.BrokenWeight), profile.BrokenStack))
	}
	if st.Cut > 0 {
		l.warn(fmt.Sprintf("%d samples (%.2f%% of the sampled weight) have stacks cut at the kernel's limit of %d frames: their outer frames are missing and their contexts start mid-stack; "+
			"record with --max-stack N to raise it (above kernel.perf_event_max_stack, root must first raise the sysctl: sysctl -w kernel.perf_event_max_stack=N)",
			st.Cut, pct(st.CutWeight), st.MaxStack))
	}
	if st.Unrooted > 0 {
		l.warn(fmt.Sprintf("%d samples (%.2f%% of the sampled weight) have stacks with no way back to an entry: their outermost function is called elsewhere in the profile, so their outer frames were lost "+
			"(a frame-pointer walk that stopped in code without frame pointers); they are kept, their contexts start mid-stack", st.Unrooted, pct(st.UnrootedWeight)))
	}
}
