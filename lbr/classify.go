package lbr

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
)

// KernelStart is the lowest x86-64 kernel address (the canonical upper half);
// a branch with either end at or above it is a kernel branch.
const KernelStart addrspace.Addr = 0xffff800000000000

// MaxInstLen is the longest x86 instruction, in bytes: what a CodeReader
// should return at an address when it can.
const MaxInstLen = 15

// CodeReader reads a process's code: Code returns the bytes at addr (up to
// MaxInstLen of them, fewer at the end of a segment), and false when the
// address is in no known executable mapping of the process. The caller
// implements it over its process model.
type CodeReader interface {
	Code(pid uint32, addr addrspace.Addr) ([]byte, bool)
}

// Kind is what a branch entry is, as far as call edges go.
type Kind uint8

const (
	KindUnknown Kind = iota // the instruction at from could not be read or decoded
	KindCall                // a direct call (CALL rel32, or saved type PERF_BR_CALL)
	KindIndCall             // an indirect call (CALL r/m, or PERF_BR_IND_CALL)
	KindOther               // a user-space branch that is not a call
	KindKernel              // either end in the kernel: dropped
	numKinds
)

var kindNames = [numKinds]string{"unknown", "call", "indirect-call", "other", "kernel"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(?)"
}

// IsCall reports whether the entry is a call edge.
func (k Kind) IsCall() bool { return k == KindCall || k == KindIndCall }

// Call is one call edge seen in a branch stack: the call instruction's
// address, the callee's entry, and where in the window it was.
type Call struct {
	Site, Callee addrspace.Addr
	Kind         Kind // KindCall or KindIndCall
	// Index is the entry's position in the sample's branch stack, 0 the
	// newest, counting every entry the hardware recorded (kernel and
	// non-call entries too): what the estimator needs.
	Index   int
	Mispred bool
	Cycles  uint16 // cycles since the previous branch, 0 when not recorded
}

type siteKey struct {
	pid  uint32
	site addrspace.Addr
}

// frontEntry is a slot of Decoder.front.
type frontEntry struct {
	site addrspace.Addr
	pid  uint32
	kind Kind
	used bool
}

const frontBits = 12
const frontSize = 1 << frontBits

func frontSlot(k siteKey) uint64 {
	return ((uint64(k.site) ^ uint64(k.pid)<<40) * 0x9e3779b97f4a7c15) >> (64 - frontBits)
}

// Decoder turns branch-stack entries into call edges. It classifies each
// entry by its saved branch type when the recording has one (SavedType),
// otherwise by decoding the instruction at the entry's from address, read
// through a CodeReader; classifications are cached per (process, address),
// so each call site is decoded once. Forget drops a process's cache entries
// (call it when the process execs or exits). A Decoder is not safe for
// concurrent use.
type Decoder struct {
	code CodeReader
	// SavedType says the recording's branch_sample_type had
	// PERF_SAMPLE_BRANCH_TYPE_SAVE, so entry flags carry a branch type.
	// An entry whose saved type is PERF_BR_UNKNOWN is still decoded.
	SavedType bool
	cache     map[siteKey]Kind
	// front is a direct-mapped copy of recent cache entries: a sample
	// classifies 16-32 entries, most of them sites seen before, and a
	// probe here costs a multiply and a compare where the map hashes a
	// struct key
	front     *[frontSize]frontEntry
	counts    [numKinds]uint64
	decoded   uint64
	maxWindow int
}

// NewDecoder returns a Decoder reading instructions through code (nil:
// only saved types and the kernel test classify; the rest is KindUnknown).
func NewDecoder(code CodeReader) *Decoder {
	return &Decoder{code: code, cache: make(map[siteKey]Kind)}
}

// Count returns how many entries of each kind Decode has seen.
func (d *Decoder) Count(k Kind) uint64 {
	if k < numKinds {
		return d.counts[k]
	}
	return 0
}

// MaxWindow is the largest number of entries Decode has seen in one
// sample: the window depth D when the attr or PMU does not state it
// (caps/branches of the cpu PMU) and the windows fill up.
func (d *Decoder) MaxWindow() int { return d.maxWindow }

// Decoded is the number of distinct instructions decoded (cache misses).
func (d *Decoder) Decoded() uint64 { return d.decoded }

// Forget drops the cached classifications of process pid.
func (d *Decoder) Forget(pid uint32) {
	for k := range d.cache {
		if k.pid == pid {
			delete(d.cache, k)
		}
	}
	if d.front != nil {
		for i := range d.front {
			if d.front[i].pid == pid {
				d.front[i] = frontEntry{}
			}
		}
	}
}

// Decode appends to dst the call edges among the branch entries of one
// sample of process pid (entries newest first, as the kernel writes them)
// and returns it. Kernel, non-call and unclassifiable entries are counted
// (Count) and dropped.
func (d *Decoder) Decode(dst []Call, pid uint32, entries []perf.BranchEntry) []Call {
	d.maxWindow = max(d.maxWindow, len(entries))
	for i, e := range entries {
		k := d.Classify(pid, e)
		d.counts[k]++
		if !k.IsCall() {
			continue
		}
		dst = append(dst, Call{
			Site: addrspace.Addr(e.From), Callee: addrspace.Addr(e.To), Kind: k, Index: i,
			Mispred: e.Flags.Mispred(), Cycles: e.Flags.Cycles(),
		})
	}
	return dst
}

// Classify returns the kind of one branch entry of process pid.
func (d *Decoder) Classify(pid uint32, e perf.BranchEntry) Kind {
	from, to := addrspace.Addr(e.From), addrspace.Addr(e.To)
	if from >= KernelStart || to >= KernelStart {
		return KindKernel
	}
	if p := e.Flags.Priv(); p == perf.BrPrivKernel || p == perf.BrPrivHV {
		return KindKernel
	}
	if d.SavedType {
		if k, ok := savedKind(e.Flags.FullType()); ok {
			return k
		}
	}
	key := siteKey{pid, from}
	if d.front == nil {
		d.front = new([frontSize]frontEntry)
	}
	f := &d.front[frontSlot(key)]
	if f.used && f.site == key.site && f.pid == pid {
		return f.kind
	}
	k, ok := d.cache[key]
	if !ok {
		k = KindUnknown
		if d.code != nil {
			if b, ok := d.code.Code(pid, from); ok {
				k = DecodeKind(b)
				d.decoded++
			}
		}
		d.cache[key] = k
	}
	*f = frontEntry{site: key.site, pid: pid, kind: k, used: true}
	return k
}

// savedKind maps a saved branch type (PERF_BR_*) to a Kind; false for
// PERF_BR_UNKNOWN, which says nothing.
func savedKind(t perf.BranchType) (Kind, bool) {
	switch t {
	case perf.BrUnknown:
		return KindUnknown, false
	case perf.BrCall, perf.BrCondCall:
		return KindCall, true
	case perf.BrIndCall:
		return KindIndCall, true
	}
	return KindOther, true
}

// DecodeKind classifies the x86-64 instruction at the start of code: a
// near CALL with a relative operand is KindCall, a near CALL through a
// register or memory is KindIndCall, a far call (LCALL) KindIndCall, any
// other instruction KindOther, and bytes that do not decode KindUnknown.
func DecodeKind(code []byte) Kind {
	inst, err := x86asm.Decode(code, 64)
	if err != nil || inst.Op == 0 || inst.Len == 0 || inst.Len > len(code) {
		// x86asm reports some truncated encodings as Op 0 without an error
		return KindUnknown
	}
	switch inst.Op {
	case x86asm.CALL:
		if _, ok := inst.Args[0].(x86asm.Rel); ok {
			return KindCall
		}
		return KindIndCall
	case x86asm.LCALL:
		return KindIndCall
	}
	return KindOther
}
