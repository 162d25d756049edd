package perf

import (
	"math/bits"
	"strconv"
)

// Sample mirrors PERF_RECORD_SAMPLE as laid out by perf_output_sample in
// kernel/events/core.c: the fields in kernel order, each present only when
// its PERF_SAMPLE_* bit is in Present (the sample_type of the event the
// sample belongs to). A field whose bit is not set is left as it was and
// means nothing: test Present (or Has), never a zero value.
//
// The slices are reused by SampleFormat.DecodeSample: Callchain, Branches,
// BranchCounters, Read.Values and the register values are copied into
// storage the Sample keeps between calls; Raw, StackUser and Aux alias the
// record and are valid only as long as its bytes are.
type Sample struct {
	RecordHeader
	// Present is the sample_type the record was laid out with.
	Present SampleType
	// Attr is the index of the event in the SampleFormat, or -1 when the
	// sample's id matches no event and the layout every event shares was
	// used.
	Attr int

	Identifier  uint64     // if PERF_SAMPLE_IDENTIFIER
	IP          uint64     // if PERF_SAMPLE_IP
	PID, TID    uint32     // if PERF_SAMPLE_TID
	Time        uint64     // if PERF_SAMPLE_TIME
	Addr        uint64     // if PERF_SAMPLE_ADDR
	ID          uint64     // if PERF_SAMPLE_ID
	StreamID    uint64     // if PERF_SAMPLE_STREAM_ID
	CPU, Res    uint32     // if PERF_SAMPLE_CPU
	Period      uint64     // if PERF_SAMPLE_PERIOD
	Read        ReadValues // if PERF_SAMPLE_READ
	Callchain   []uint64   // if PERF_SAMPLE_CALLCHAIN: IPs with PERF_CONTEXT_* markers kept
	Raw         []byte     // if PERF_SAMPLE_RAW
	BranchStack            // if PERF_SAMPLE_BRANCH_STACK
	RegsUser    Regs       // if PERF_SAMPLE_REGS_USER
	StackUser   StackUser  // if PERF_SAMPLE_STACK_USER
	// Weight is the u64 of PERF_SAMPLE_WEIGHT, or the union of
	// PERF_SAMPLE_WEIGHT_STRUCT (see WeightStruct).
	Weight      uint64 // if PERF_SAMPLE_WEIGHT or PERF_SAMPLE_WEIGHT_STRUCT
	DataSrc     uint64 // if PERF_SAMPLE_DATA_SRC
	Transaction uint64 // if PERF_SAMPLE_TRANSACTION
	RegsIntr    Regs   // if PERF_SAMPLE_REGS_INTR
	PhysAddr    uint64 // if PERF_SAMPLE_PHYS_ADDR
	Cgroup      uint64 // if PERF_SAMPLE_CGROUP
	DataPageSz  uint64 // if PERF_SAMPLE_DATA_PAGE_SIZE
	CodePageSz  uint64 // if PERF_SAMPLE_CODE_PAGE_SIZE
	Aux         []byte // if PERF_SAMPLE_AUX
}

// Has reports whether every field of bits is present.
func (s *Sample) Has(bits SampleType) bool { return s.Present&bits == bits }

// WeightStruct returns the parts of a PERF_SAMPLE_WEIGHT_STRUCT weight,
// mirroring union perf_sample_weight (little-endian): var1_dw (the
// latency), var2_w and var3_w.
func (s *Sample) WeightStruct() (var1 uint32, var2, var3 uint16) {
	return uint32(s.Weight), uint16(s.Weight >> 32), uint16(s.Weight >> 48)
}

// ReadValues mirrors struct read_format: the counter values of
// PERF_SAMPLE_READ and PERF_RECORD_READ, one value or, with FormatGroup,
// one per group member.
type ReadValues struct {
	Format      ReadFormat
	TimeEnabled uint64 // if FormatTotalTimeEnabled
	TimeRunning uint64 // if FormatTotalTimeRunning
	Values      []ReadValue
}

// ReadValue is one counter of a read_format.
type ReadValue struct {
	Value uint64
	ID    uint64 // if FormatID
	Lost  uint64 // if FormatLost
}

// Regs is a register dump (PERF_SAMPLE_REGS_USER or PERF_SAMPLE_REGS_INTR):
// the ABI (PERF_SAMPLE_REGS_ABI_*; with RegsABINone no registers follow)
// and one value per bit of Mask, lowest bit first.
type Regs struct {
	ABI    uint64
	Mask   uint64 // the attr's sample_regs_user or sample_regs_intr
	Values []uint64
}

// Register ABIs, mirrors enum perf_sample_regs_abi.
const (
	RegsABINone = 0 // PERF_SAMPLE_REGS_ABI_NONE: no registers (kernel thread)
	RegsABI32   = 1 // PERF_SAMPLE_REGS_ABI_32
	RegsABI64   = 2 // PERF_SAMPLE_REGS_ABI_64
)

// Get returns register reg (RegSP, RegIP, ...) if the dump has it.
func (r *Regs) Get(reg int) (uint64, bool) {
	if reg < 0 || reg > 63 || r.Mask&(1<<reg) == 0 || r.ABI == RegsABINone {
		return 0, false
	}
	i := bits.OnesCount64(r.Mask & (1<<reg - 1))
	if i >= len(r.Values) {
		return 0, false
	}
	return r.Values[i], true
}

// StackUser is PERF_SAMPLE_STACK_USER: a copy of the user stack from the
// stack pointer up. Data is size bytes as the kernel reserved them; only
// the first DynSize are valid (dyn_size follows the data when size != 0).
type StackUser struct {
	Data    []byte
	DynSize uint64 // if len(Data) != 0
}

// Valid returns the part of the copy the kernel filled in.
func (s *StackUser) Valid() []byte {
	if s.DynSize < uint64(len(s.Data)) {
		return s.Data[:s.DynSize]
	}
	return s.Data
}

// BranchStack mirrors struct perf_branch_stack and the branch counters that
// follow it: PERF_SAMPLE_BRANCH_STACK.
type BranchStack struct {
	// HasHWIndex reports that the event's branch_sample_type has
	// PERF_SAMPLE_BRANCH_HW_INDEX, so HWIndex was recorded.
	HasHWIndex bool
	HWIndex    uint64 // if HasHWIndex: index of the newest entry in the hardware buffer, or -1
	Branches   []BranchEntry
	// HasCounters reports PERF_SAMPLE_BRANCH_COUNTERS: BranchCounters has
	// one value per entry.
	HasCounters    bool
	BranchCounters []uint64 // if HasCounters
}

// BranchEntry mirrors struct perf_branch_entry in <linux/perf_event.h>:
// from, to and the bit-field word, whose fields the Flags methods read.
type BranchEntry struct {
	From, To uint64
	Flags    BranchFlags
}

// BranchFlags is the third word of struct perf_branch_entry: mispred:1,
// predicted:1, in_tx:1, abort:1, cycles:16, type:4, spec:2, new_type:4,
// priv:3, reserved:31 (little-endian bit-field order).
type BranchFlags uint64

func (f BranchFlags) Mispred() bool   { return f&1 != 0 }
func (f BranchFlags) Predicted() bool { return f&2 != 0 }
func (f BranchFlags) InTX() bool      { return f&4 != 0 }
func (f BranchFlags) Abort() bool     { return f&8 != 0 }

// Cycles is the cycle count since the previous branch (0: not recorded).
func (f BranchFlags) Cycles() uint16 { return uint16(f >> 4) }

// Type is the branch type (PERF_BR_*, with branch_sample_type TYPE_SAVE);
// for BrExtendABI the full type is in NewType.
func (f BranchFlags) Type() BranchType { return BranchType(f >> 20 & 0xf) }

// Spec is the speculation outcome (PERF_BR_SPEC_*, AMD and Arm).
func (f BranchFlags) Spec() BranchSpec { return BranchSpec(f >> 24 & 3) }

// NewType is the additional branch type, meaningful when Type is
// BrExtendABI: the type is BrNewFaultAlign + NewType.
func (f BranchFlags) NewType() uint8 { return uint8(f >> 26 & 0xf) }

// Priv is the privilege level of the branch target (PERF_BR_PRIV_*, with
// PRIV_SAVE).
func (f BranchFlags) Priv() BranchPriv { return BranchPriv(f >> 30 & 7) }

// FullType folds Type and NewType into one value, as perf does: Type
// below BrExtendABI, else BrNewFaultAlign + NewType.
func (f BranchFlags) FullType() BranchType {
	if t := f.Type(); t != BrExtendABI {
		return t
	}
	return BrNewFaultAlign + BranchType(f.NewType())
}

// BranchType mirrors enum perf_branch_type (PERF_BR_*) and, from
// BrNewFaultAlign on, enum perf_branch_type_new offset by
// PERF_BR_MAX (16), as perf's branch_type_name numbers them.
type BranchType uint8

const (
	BrUnknown       BranchType = 0  // PERF_BR_UNKNOWN
	BrCond          BranchType = 1  // PERF_BR_COND
	BrUncond        BranchType = 2  // PERF_BR_UNCOND
	BrInd           BranchType = 3  // PERF_BR_IND
	BrCall          BranchType = 4  // PERF_BR_CALL
	BrIndCall       BranchType = 5  // PERF_BR_IND_CALL
	BrRet           BranchType = 6  // PERF_BR_RET
	BrSyscall       BranchType = 7  // PERF_BR_SYSCALL
	BrSysret        BranchType = 8  // PERF_BR_SYSRET
	BrCondCall      BranchType = 9  // PERF_BR_COND_CALL
	BrCondRet       BranchType = 10 // PERF_BR_COND_RET
	BrEret          BranchType = 11 // PERF_BR_ERET
	BrIRQ           BranchType = 12 // PERF_BR_IRQ
	BrSerror        BranchType = 13 // PERF_BR_SERROR
	BrNoTX          BranchType = 14 // PERF_BR_NO_TX
	BrExtendABI     BranchType = 15 // PERF_BR_EXTEND_ABI
	BrNewFaultAlign BranchType = 16 // PERF_BR_MAX + PERF_BR_NEW_FAULT_ALGN
	BrNewFaultData  BranchType = 17 // PERF_BR_NEW_FAULT_DATA
	BrNewFaultInst  BranchType = 18 // PERF_BR_NEW_FAULT_INST
	BrNewArch1      BranchType = 19 // PERF_BR_NEW_ARCH_1
	BrNewArch2      BranchType = 20 // PERF_BR_NEW_ARCH_2
	BrNewArch3      BranchType = 21 // PERF_BR_NEW_ARCH_3
	BrNewArch4      BranchType = 22 // PERF_BR_NEW_ARCH_4
	BrNewArch5      BranchType = 23 // PERF_BR_NEW_ARCH_5
)

// branchTypeNames are perf's names (branch_type_name in
// tools/perf/util/branch.c); PERF_BR_UNKNOWN prints as nothing.
var branchTypeNames = [...]string{
	"", "COND", "UNCOND", "IND", "CALL", "IND_CALL", "RET", "SYSCALL",
	"SYSRET", "COND_CALL", "COND_RET", "ERET", "IRQ", "SERROR", "NO_TX",
	"EXTEND_ABI", "FAULT_ALGN", "FAULT_DATA", "FAULT_INST", "ARCH_1",
	"ARCH_2", "ARCH_3", "ARCH_4", "ARCH_5",
}

func (t BranchType) String() string {
	if int(t) < len(branchTypeNames) {
		return branchTypeNames[t]
	}
	return "BR_TYPE(" + strconv.Itoa(int(t)) + ")"
}

// BranchSpec mirrors the PERF_BR_SPEC_* values of perf_branch_entry.spec.
type BranchSpec uint8

const (
	BrSpecNA             BranchSpec = 0 // PERF_BR_SPEC_NA
	BrSpecWrongPath      BranchSpec = 1 // PERF_BR_SPEC_WRONG_PATH
	BrNonSpecCorrectPath BranchSpec = 2 // PERF_BR_NON_SPEC_CORRECT_PATH
	BrSpecCorrectPath    BranchSpec = 3 // PERF_BR_SPEC_CORRECT_PATH
)

var branchSpecNames = [...]string{"", "SPEC_WRONG_PATH", "NON_SPEC_CORRECT_PATH", "SPEC_CORRECT_PATH"}

func (s BranchSpec) String() string { return branchSpecNames[s&3] }

// BranchPriv mirrors the PERF_BR_PRIV_* values of perf_branch_entry.priv.
type BranchPriv uint8

const (
	BrPrivUnknown BranchPriv = 0 // PERF_BR_PRIV_UNKNOWN
	BrPrivUser    BranchPriv = 1 // PERF_BR_PRIV_USER
	BrPrivKernel  BranchPriv = 2 // PERF_BR_PRIV_KERNEL
	BrPrivHV      BranchPriv = 3 // PERF_BR_PRIV_HV
)

var branchPrivNames = [...]string{"", "PRIV_USER", "PRIV_KERNEL", "PRIV_HV"}

func (p BranchPriv) String() string {
	if int(p) < len(branchPrivNames) {
		return branchPrivNames[p]
	}
	return "PRIV(" + strconv.Itoa(int(p)) + ")"
}

// IsCallchainContext reports whether a callchain entry is a PERF_CONTEXT_*
// marker rather than an address.
func IsCallchainContext(v uint64) bool { return v >= ContextMax }

// CallchainParts are the segments of a callchain between its
// PERF_CONTEXT_* markers, markers removed. The slices alias the callchain.
type CallchainParts struct {
	Unmarked    []uint64 // entries before the first marker (none in kernel callchains)
	HV          []uint64 // after PERF_CONTEXT_HV
	Kernel      []uint64 // after PERF_CONTEXT_KERNEL
	User        []uint64 // after PERF_CONTEXT_USER
	GuestKernel []uint64 // after PERF_CONTEXT_GUEST_KERNEL
	GuestUser   []uint64 // after PERF_CONTEXT_GUEST_USER
}

// SplitCallchain cuts a callchain at its context markers. A context that
// appears twice keeps its first segment; entries after PERF_CONTEXT_GUEST
// and unknown markers are dropped.
func SplitCallchain(chain []uint64) CallchainParts {
	var p CallchainParts
	var cur *[]uint64
	start := 0
	set := func(end int) {
		if cur != nil && *cur == nil {
			*cur = chain[start:end:end]
		}
	}
	for i, v := range chain {
		if !IsCallchainContext(v) {
			if i == 0 {
				cur = &p.Unmarked
			}
			continue
		}
		set(i)
		start = i + 1
		switch v {
		case ContextHV:
			cur = &p.HV
		case ContextKernel:
			cur = &p.Kernel
		case ContextUser:
			cur = &p.User
		case ContextGuestKernel:
			cur = &p.GuestKernel
		case ContextGuestUser:
			cur = &p.GuestUser
		default:
			cur = nil
		}
	}
	set(len(chain))
	return p
}

// CallchainContextName returns perf's name of a context marker
// ("PERF_CONTEXT_USER"), or "" for an address.
func CallchainContextName(v uint64) string {
	switch v {
	case ContextHV:
		return "PERF_CONTEXT_HV"
	case ContextKernel:
		return "PERF_CONTEXT_KERNEL"
	case ContextUser:
		return "PERF_CONTEXT_USER"
	case ContextGuest:
		return "PERF_CONTEXT_GUEST"
	case ContextGuestKernel:
		return "PERF_CONTEXT_GUEST_KERNEL"
	case ContextGuestUser:
		return "PERF_CONTEXT_GUEST_USER"
	}
	if IsCallchainContext(v) {
		return "PERF_CONTEXT_" + strconv.FormatInt(int64(v), 10)
	}
	return ""
}
