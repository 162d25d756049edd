package perf

import (
	"encoding/binary"
	"fmt"
)

// Attr mirrors struct perf_event_attr in <linux/perf_event.h> (Linux 6.x),
// field by field. Unions are stored once under the name perf prints first;
// the accessors below give the other meanings.
type Attr struct {
	Type   EventType // type
	Size   uint32    // size: bytes of the struct as written; 0 means AttrSizeVer7
	Config uint64    // config
	// SamplePeriod is sample_period, or sample_freq when Flags has FlagFreq.
	SamplePeriod     uint64
	SampleType       SampleType // sample_type
	ReadFormat       ReadFormat // read_format
	Flags            AttrFlags  // the bit-field word: disabled, inherit, ...
	PreciseIP        uint8      // precise_ip (2 bits inside the bit-field word)
	WakeupEvents     uint32     // wakeup_events, or wakeup_watermark with FlagWatermark
	BPType           uint32     // bp_type
	Config1          uint64     // bp_addr / kprobe_func / uprobe_path / config1
	Config2          uint64     // bp_len / kprobe_addr / probe_offset / config2
	BranchSampleType BranchSampleType
	SampleRegsUser   uint64 // sample_regs_user
	SampleStackUser  uint32 // sample_stack_user
	ClockID          int32  // clockid
	SampleRegsIntr   uint64 // sample_regs_intr
	AuxWatermark     uint32 // aux_watermark
	SampleMaxStack   uint16 // sample_max_stack
	AuxSampleSize    uint32 // aux_sample_size
	AuxAction        uint32 // aux_action bits (__reserved_3 before 6.13)
	SigData          uint64 // sig_data
	Config3          uint64 // config3
}

// Attr sizes by ABI version, mirrors PERF_ATTR_SIZE_VER* in
// <linux/perf_event.h>.
const (
	AttrSizeVer0 = 64  // first published struct
	AttrSizeVer1 = 72  // config2
	AttrSizeVer2 = 80  // branch_sample_type
	AttrSizeVer3 = 96  // sample_regs_user, sample_stack_user
	AttrSizeVer4 = 104 // sample_regs_intr
	AttrSizeVer5 = 112 // aux_watermark
	AttrSizeVer6 = 120 // aux_sample_size
	AttrSizeVer7 = 128 // sig_data
	AttrSizeVer8 = 136 // config3
)

// AttrFlags is the bit-field word of perf_event_attr (disabled ... sigtrap),
// except precise_ip, which Attr holds as a number.
type AttrFlags uint64

const (
	FlagDisabled               AttrFlags = 1 << 0
	FlagInherit                AttrFlags = 1 << 1
	FlagPinned                 AttrFlags = 1 << 2
	FlagExclusive              AttrFlags = 1 << 3
	FlagExcludeUser            AttrFlags = 1 << 4
	FlagExcludeKernel          AttrFlags = 1 << 5
	FlagExcludeHV              AttrFlags = 1 << 6
	FlagExcludeIdle            AttrFlags = 1 << 7
	FlagMmap                   AttrFlags = 1 << 8
	FlagComm                   AttrFlags = 1 << 9
	FlagFreq                   AttrFlags = 1 << 10
	FlagInheritStat            AttrFlags = 1 << 11
	FlagEnableOnExec           AttrFlags = 1 << 12
	FlagTask                   AttrFlags = 1 << 13
	FlagWatermark              AttrFlags = 1 << 14
	preciseShift                         = 15 // precise_ip: bits 15-16
	FlagMmapData               AttrFlags = 1 << 17
	FlagSampleIDAll            AttrFlags = 1 << 18
	FlagExcludeHost            AttrFlags = 1 << 19
	FlagExcludeGuest           AttrFlags = 1 << 20
	FlagExcludeCallchainKernel AttrFlags = 1 << 21
	FlagExcludeCallchainUser   AttrFlags = 1 << 22
	FlagMmap2                  AttrFlags = 1 << 23
	FlagCommExec               AttrFlags = 1 << 24
	FlagUseClockID             AttrFlags = 1 << 25
	FlagContextSwitch          AttrFlags = 1 << 26
	FlagWriteBackward          AttrFlags = 1 << 27
	FlagNamespaces             AttrFlags = 1 << 28
	FlagKsymbol                AttrFlags = 1 << 29
	FlagBPFEvent               AttrFlags = 1 << 30
	FlagAuxOutput              AttrFlags = 1 << 31
	FlagCgroup                 AttrFlags = 1 << 32
	FlagTextPoke               AttrFlags = 1 << 33
	FlagBuildID                AttrFlags = 1 << 34
	FlagInheritThread          AttrFlags = 1 << 35
	FlagRemoveOnExec           AttrFlags = 1 << 36
	FlagSigtrap                AttrFlags = 1 << 37
)

const preciseMask = 3 << preciseShift

// attrFlagNames are the kernel's bit-field names in bit order; "" marks the
// two bits of precise_ip.
var attrFlagNames = [...]string{
	"disabled", "inherit", "pinned", "exclusive", "exclude_user",
	"exclude_kernel", "exclude_hv", "exclude_idle", "mmap", "comm", "freq",
	"inherit_stat", "enable_on_exec", "task", "watermark", "", "",
	"mmap_data", "sample_id_all", "exclude_host", "exclude_guest",
	"exclude_callchain_kernel", "exclude_callchain_user", "mmap2",
	"comm_exec", "use_clockid", "context_switch", "write_backward",
	"namespaces", "ksymbol", "bpf_event", "aux_output", "cgroup",
	"text_poke", "build_id", "inherit_thread", "remove_on_exec", "sigtrap",
}

func (f AttrFlags) String() string { return bitNames(uint64(f)&^preciseMask, attrFlagNames[:]) }

// Has reports whether every bit of g is set.
func (f AttrFlags) Has(g AttrFlags) bool { return f&g == g }

// Freq reports whether SamplePeriod holds a frequency.
func (a *Attr) Freq() bool { return a.Flags.Has(FlagFreq) }

// EffectiveSize is the size the attr is marshalled with: Size if set, else
// the smallest version that holds every field in use (at least Ver7, what
// perf 6.1 writes).
func (a *Attr) EffectiveSize() uint32 {
	if a.Size != 0 {
		return a.Size
	}
	if a.Config3 != 0 {
		return AttrSizeVer8
	}
	return AttrSizeVer7
}

// Marshal encodes the attr in the kernel's layout (little-endian, x86-64),
// EffectiveSize bytes long.
func (a *Attr) Marshal() []byte {
	b := make([]byte, AttrSizeVer8)
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(a.Type))
	le.PutUint32(b[4:], a.EffectiveSize())
	le.PutUint64(b[8:], a.Config)
	le.PutUint64(b[16:], a.SamplePeriod)
	le.PutUint64(b[24:], uint64(a.SampleType))
	le.PutUint64(b[32:], uint64(a.ReadFormat))
	le.PutUint64(b[40:], uint64(a.Flags&^preciseMask)|uint64(a.PreciseIP&3)<<preciseShift)
	le.PutUint32(b[48:], a.WakeupEvents)
	le.PutUint32(b[52:], a.BPType)
	le.PutUint64(b[56:], a.Config1)
	le.PutUint64(b[64:], a.Config2)
	le.PutUint64(b[72:], uint64(a.BranchSampleType))
	le.PutUint64(b[80:], a.SampleRegsUser)
	le.PutUint32(b[88:], a.SampleStackUser)
	le.PutUint32(b[92:], uint32(a.ClockID))
	le.PutUint64(b[96:], a.SampleRegsIntr)
	le.PutUint32(b[104:], a.AuxWatermark)
	le.PutUint16(b[108:], a.SampleMaxStack)
	le.PutUint32(b[112:], a.AuxSampleSize)
	le.PutUint32(b[116:], a.AuxAction)
	le.PutUint64(b[120:], a.SigData)
	le.PutUint64(b[128:], a.Config3)
	n := int(a.EffectiveSize())
	if n <= len(b) {
		return b[:n]
	}
	return append(b, make([]byte, n-len(b))...)
}

// UnmarshalAttr decodes an attr of any size: fields past the end of b are
// zero (older ABI), bytes past the fields known here are ignored (newer
// ABI). The size field is taken from b when b is at least 8 bytes long;
// len(b) bounds it.
func UnmarshalAttr(b []byte) (Attr, error) {
	if len(b) < AttrSizeVer0 {
		return Attr{}, fmt.Errorf("perf_event_attr: %d bytes, want at least %d", len(b), AttrSizeVer0)
	}
	le := binary.LittleEndian
	if s := int(le.Uint32(b[4:])); s >= AttrSizeVer0 && s < len(b) {
		b = b[:s]
	}
	var full [AttrSizeVer8]byte
	copy(full[:], b)
	word := le.Uint64(full[40:])
	a := Attr{
		Type:             EventType(le.Uint32(full[0:])),
		Size:             le.Uint32(full[4:]),
		Config:           le.Uint64(full[8:]),
		SamplePeriod:     le.Uint64(full[16:]),
		SampleType:       SampleType(le.Uint64(full[24:])),
		ReadFormat:       ReadFormat(le.Uint64(full[32:])),
		Flags:            AttrFlags(word &^ preciseMask),
		PreciseIP:        uint8(word>>preciseShift) & 3,
		WakeupEvents:     le.Uint32(full[48:]),
		BPType:           le.Uint32(full[52:]),
		Config1:          le.Uint64(full[56:]),
		Config2:          le.Uint64(full[64:]),
		BranchSampleType: BranchSampleType(le.Uint64(full[72:])),
		SampleRegsUser:   le.Uint64(full[80:]),
		SampleStackUser:  le.Uint32(full[88:]),
		ClockID:          int32(le.Uint32(full[92:])),
		SampleRegsIntr:   le.Uint64(full[96:]),
		AuxWatermark:     le.Uint32(full[104:]),
		SampleMaxStack:   le.Uint16(full[108:]),
		AuxSampleSize:    le.Uint32(full[112:]),
		AuxAction:        le.Uint32(full[116:]),
		SigData:          le.Uint64(full[120:]),
		Config3:          le.Uint64(full[128:]),
	}
	return a, nil
}
