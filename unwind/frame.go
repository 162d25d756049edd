package unwind

import (
	"strconv"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
)

// Maps resolves an address of process pid (thread tid) at a time to the
// mapping that held it (its Object the same pointer for every address of
// one object, so callers can key caches on it) and the address in that
// object's address space; ok is false when no mapping holds it. hwprof's
// process model (internal/procmap's *Map) is one.
type Maps interface {
	Lookup(pid, tid uint32, time uint64, addr addrspace.Addr) (addrspace.Mapping, addrspace.ObjAddr, bool)
}

// FrameKind tells how a frame's address relates to the code it stands for.
type FrameKind uint8

const (
	// FrameIP is an instruction pointer: the instruction that was
	// executing (the sample IP, or the interrupted user IP of a sample taken
	// in the kernel).
	FrameIP FrameKind = iota
	// FrameReturn is a return address: the call is the instruction before
	// it, so it is looked up at Addr-1.
	FrameReturn
	// FrameCallSite is the address of a call instruction itself (the
	// `from` of an LBR call-stack entry).
	FrameCallSite
)

func (k FrameKind) String() string {
	switch k {
	case FrameIP:
		return "ip"
	case FrameReturn:
		return "return"
	case FrameCallSite:
		return "call-site"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Frame is one frame of a stack.
type Frame struct {
	Addr   addrspace.Addr // runtime address
	Kind   FrameKind
	Kernel bool // a kernel frame (from the callchain's PERF_CONTEXT_KERNEL part)
	// Object is the mapped object, nil when no mapping held Addr; ObjAddr
	// is Addr in the object's address space (0 without an object).
	Object  *addrspace.Object
	ObjAddr addrspace.ObjAddr
}

// LookupAddr is the address to symbolize: ObjAddr, or ObjAddr-1 for a
// return address (so that a call at the end of a function, or an inlined
// call, is named by the call, not by what follows it).
func (f Frame) LookupAddr() addrspace.ObjAddr {
	if f.Kind == FrameReturn && f.ObjAddr > 0 {
		return f.ObjAddr - 1
	}
	return f.ObjAddr
}

// StopReason says why an unwind ended.
type StopReason uint8

const (
	// StopOutermost: the CFI marks the return address undefined, as glibc
	// does in _start and clone: the stack is complete.
	StopOutermost StopReason = iota
	// StopZeroReturn: a zero return address, the other way stacks end.
	StopZeroReturn
	// StopChainEnd: a callchain or LBR call stack has no more entries.
	StopChainEnd
	// StopStackEnd: the next read falls outside the copy of the user
	// stack (the copy's end, or a frame pointer leaving it).
	StopStackEnd
	// StopNoRegs: the sample has no user registers or stack copy (a kernel
	// thread, or not recorded with --call-graph dwarf).
	StopNoRegs
	// StopNoMapping: the PC is in no known mapping.
	StopNoMapping
	// StopNoObject: the object's file could not be read (not on disk, the
	// vdso, anonymous or JIT code).
	StopNoObject
	// StopNoCFI: no FDE covers the PC, and its frame pointer (tried when
	// the object has CFI for other code) led to no mapped caller.
	StopNoCFI
	// StopBadCFI: the CFI rule could not be evaluated.
	StopBadCFI
	// StopNoProgress: the stack pointer did not move toward the stack's base.
	StopNoProgress
	// StopMaxDepth: Options.MaxDepth frames were produced.
	StopMaxDepth
)

var stopNames = [...]string{"outermost frame", "zero return address", "end of chain", "end of stack copy",
	"no user registers", "no mapping", "object unreadable", "no CFI", "bad CFI", "no progress", "max depth"}

func (r StopReason) String() string {
	if int(r) < len(stopNames) {
		return stopNames[r]
	}
	return "stop(" + strconv.Itoa(int(r)) + ")"
}

// Complete reports whether the unwind reached the stack's end rather than
// giving up.
func (r StopReason) Complete() bool {
	return r == StopOutermost || r == StopZeroReturn || r == StopChainEnd
}

// Method is how a sample's stack is unwound.
type Method uint8

const (
	MethodAuto  Method = iota // DWARF when the sample has a stack copy, else frame pointers
	MethodFP                  // the kernel's callchain
	MethodDWARF               // CFI over the user-stack copy
	MethodLBR                 // the LBR call stack
)

func (m Method) String() string {
	switch m {
	case MethodAuto:
		return "auto"
	case MethodFP:
		return "fp"
	case MethodDWARF:
		return "dwarf"
	case MethodLBR:
		return "lbr"
	}
	return "method(" + strconv.Itoa(int(m)) + ")"
}

// MethodFor returns the method an event's attr was recorded for: LBR for a
// branch stack in call-stack mode, DWARF for user registers with a stack
// copy and no user callchain (perf's --call-graph dwarf sets
// exclude_callchain_user), frame pointers for a callchain (repaired at its
// first frame by a stack copy, if the attr has one), Auto otherwise.
func MethodFor(a *perf.Attr) Method {
	copied := a.SampleType&perf.SampleStackUser != 0 && a.SampleType&perf.SampleRegsUser != 0
	userChain := a.SampleType&perf.SampleCallchain != 0 && !a.Flags.Has(perf.FlagExcludeCallchainUser)
	switch {
	case a.SampleType&perf.SampleBranchStack != 0 && a.BranchSampleType&perf.BranchCallStack != 0:
		return MethodLBR
	case copied && !userChain:
		return MethodDWARF
	case a.SampleType&perf.SampleCallchain != 0:
		return MethodFP
	}
	return MethodAuto
}

// lookup appends the frame of addr, a runtime address of s's process as
// the record or a register holds it.
func lookup(dst []Frame, maps Maps, s *perf.Sample, raw uint64, kind FrameKind, kernel bool) []Frame {
	addr := addrspace.Addr(raw)
	f := Frame{Addr: addr, Kind: kind, Kernel: kernel}
	if maps != nil {
		at := addr
		if kind == FrameReturn && at > 0 {
			at-- // the call's mapping: a call can end a mapping
		}
		if m, oa, ok := maps.Lookup(s.PID, s.TID, s.Time, at); ok && m.Object != nil {
			f.Object = m.Object
			f.ObjAddr = oa.Moved(at, addr)
		}
	}
	return append(dst, f)
}
