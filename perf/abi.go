package perf

import (
	"strconv"
	"strings"
)

// This file mirrors the constants of <linux/perf_event.h> (Linux 6.x) as
// named Go types. Every enum has a String method so attrs and records print
// the way `perf record -vv` and `perf report -D` print them.

// EventType mirrors enum perf_type_id in <linux/perf_event.h>.
type EventType uint32

const (
	TypeHardware   EventType = 0 // PERF_TYPE_HARDWARE
	TypeSoftware   EventType = 1 // PERF_TYPE_SOFTWARE
	TypeTracepoint EventType = 2 // PERF_TYPE_TRACEPOINT
	TypeHWCache    EventType = 3 // PERF_TYPE_HW_CACHE
	TypeRaw        EventType = 4 // PERF_TYPE_RAW
	TypeBreakpoint EventType = 5 // PERF_TYPE_BREAKPOINT
)

func (t EventType) String() string {
	switch t {
	case TypeHardware:
		return "hardware"
	case TypeSoftware:
		return "software"
	case TypeTracepoint:
		return "tracepoint"
	case TypeHWCache:
		return "hw-cache"
	case TypeRaw:
		return "raw"
	case TypeBreakpoint:
		return "breakpoint"
	}
	return "pmu-" + strconv.FormatUint(uint64(t), 10)
}

// Hardware event configs, mirrors enum perf_hw_id.
const (
	HWCPUCycles             = 0
	HWInstructions          = 1
	HWCacheReferences       = 2
	HWCacheMisses           = 3
	HWBranchInstructions    = 4
	HWBranchMisses          = 5
	HWBusCycles             = 6
	HWStalledCyclesFrontend = 7
	HWStalledCyclesBackend  = 8
	HWRefCPUCycles          = 9
)

// Software event configs, mirrors enum perf_sw_ids.
const (
	SWCPUClock        = 0
	SWTaskClock       = 1
	SWPageFaults      = 2
	SWContextSwitches = 3
	SWCPUMigrations   = 4
	SWPageFaultsMin   = 5
	SWPageFaultsMaj   = 6
	SWAlignmentFaults = 7
	SWEmulationFaults = 8
	SWDummy           = 9
	SWBPFOutput       = 10
	SWCgroupSwitches  = 11
)

// SampleType mirrors enum perf_event_sample_format: the PERF_SAMPLE_* bits
// of perf_event_attr.sample_type. The order of the bits is the order of the
// fields in a PERF_RECORD_SAMPLE.
type SampleType uint64

const (
	SampleIP            SampleType = 1 << 0
	SampleTID           SampleType = 1 << 1
	SampleTime          SampleType = 1 << 2
	SampleAddr          SampleType = 1 << 3
	SampleRead          SampleType = 1 << 4
	SampleCallchain     SampleType = 1 << 5
	SampleID            SampleType = 1 << 6
	SampleCPU           SampleType = 1 << 7
	SamplePeriod        SampleType = 1 << 8
	SampleStreamID      SampleType = 1 << 9
	SampleRaw           SampleType = 1 << 10
	SampleBranchStack   SampleType = 1 << 11
	SampleRegsUser      SampleType = 1 << 12
	SampleStackUser     SampleType = 1 << 13
	SampleWeight        SampleType = 1 << 14
	SampleDataSrc       SampleType = 1 << 15
	SampleIdentifier    SampleType = 1 << 16
	SampleTransaction   SampleType = 1 << 17
	SampleRegsIntr      SampleType = 1 << 18
	SamplePhysAddr      SampleType = 1 << 19
	SampleAux           SampleType = 1 << 20
	SampleCgroup        SampleType = 1 << 21
	SampleDataPageSize  SampleType = 1 << 22
	SampleCodePageSize  SampleType = 1 << 23
	SampleWeightStruct  SampleType = 1 << 24
	sampleTypeKnownBits            = 25
)

var sampleTypeNames = [...]string{
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD",
	"STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT",
	"DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX",
	"CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
}

// String prints the set bits as perf does: "IP|TID|TIME|PERIOD".
func (s SampleType) String() string { return bitNames(uint64(s), sampleTypeNames[:]) }

// ReadFormat mirrors enum perf_event_read_format.
type ReadFormat uint64

const (
	FormatTotalTimeEnabled ReadFormat = 1 << 0
	FormatTotalTimeRunning ReadFormat = 1 << 1
	FormatID               ReadFormat = 1 << 2
	FormatGroup            ReadFormat = 1 << 3
	FormatLost             ReadFormat = 1 << 4
)

var readFormatNames = [...]string{"TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST"}

func (f ReadFormat) String() string { return bitNames(uint64(f), readFormatNames[:]) }

// BranchSampleType mirrors enum perf_branch_sample_type: the
// PERF_SAMPLE_BRANCH_* bits of perf_event_attr.branch_sample_type.
type BranchSampleType uint64

const (
	BranchUser      BranchSampleType = 1 << 0
	BranchKernel    BranchSampleType = 1 << 1
	BranchHV        BranchSampleType = 1 << 2
	BranchAny       BranchSampleType = 1 << 3
	BranchAnyCall   BranchSampleType = 1 << 4
	BranchAnyReturn BranchSampleType = 1 << 5
	BranchIndCall   BranchSampleType = 1 << 6
	BranchAbortTX   BranchSampleType = 1 << 7
	BranchInTX      BranchSampleType = 1 << 8
	BranchNoTX      BranchSampleType = 1 << 9
	BranchCond      BranchSampleType = 1 << 10
	BranchCallStack BranchSampleType = 1 << 11
	BranchIndJump   BranchSampleType = 1 << 12
	BranchCall      BranchSampleType = 1 << 13
	BranchNoFlags   BranchSampleType = 1 << 14
	BranchNoCycles  BranchSampleType = 1 << 15
	BranchTypeSave  BranchSampleType = 1 << 16
	BranchHWIndex   BranchSampleType = 1 << 17
	BranchPrivSave  BranchSampleType = 1 << 18
	BranchCounters  BranchSampleType = 1 << 19
)

// BranchPlmAll is the privilege-level part of a branch filter.
const BranchPlmAll = BranchUser | BranchKernel | BranchHV

var branchSampleNames = [...]string{
	"USER", "KERNEL", "HV", "ANY", "ANY_CALL", "ANY_RETURN", "IND_CALL",
	"ABORT_TX", "IN_TX", "NO_TX", "COND", "CALL_STACK", "IND_JUMP", "CALL",
	"NO_FLAGS", "NO_CYCLES", "TYPE_SAVE", "HW_INDEX", "PRIV_SAVE", "COUNTERS",
}

func (b BranchSampleType) String() string { return bitNames(uint64(b), branchSampleNames[:]) }

// RecordType mirrors enum perf_event_type (kernel records, 1..) and the
// user-space record types perf adds to perf.data files (64..).
type RecordType uint32

const (
	RecordMmap            RecordType = 1
	RecordLost            RecordType = 2
	RecordComm            RecordType = 3
	RecordExit            RecordType = 4
	RecordThrottle        RecordType = 5
	RecordUnthrottle      RecordType = 6
	RecordFork            RecordType = 7
	RecordRead            RecordType = 8
	RecordSample          RecordType = 9
	RecordMmap2           RecordType = 10
	RecordAux             RecordType = 11
	RecordItraceStart     RecordType = 12
	RecordLostSamples     RecordType = 13
	RecordSwitch          RecordType = 14
	RecordSwitchCPUWide   RecordType = 15
	RecordNamespaces      RecordType = 16
	RecordKsymbol         RecordType = 17
	RecordBPFEvent        RecordType = 18
	RecordCgroup          RecordType = 19
	RecordTextPoke        RecordType = 20
	RecordAuxOutputHWID   RecordType = 21
	RecordHeaderAttr      RecordType = 64
	RecordHeaderEventType RecordType = 65
	RecordHeaderTracing   RecordType = 66
	RecordHeaderBuildID   RecordType = 67
	RecordFinishedRound   RecordType = 68
	RecordIDIndex         RecordType = 69
	RecordAuxtraceInfo    RecordType = 70
	RecordAuxtrace        RecordType = 71
	RecordAuxtraceError   RecordType = 72
	RecordThreadMap       RecordType = 73
	RecordCPUMap          RecordType = 74
	RecordStatConfig      RecordType = 75
	RecordStat            RecordType = 76
	RecordStatRound       RecordType = 77
	RecordEventUpdate     RecordType = 78
	RecordTimeConv        RecordType = 79
	RecordHeaderFeature   RecordType = 80
	RecordCompressed      RecordType = 81
	RecordFinishedInit    RecordType = 82
	RecordCompressed2     RecordType = 83
)

var recordTypeNames = map[RecordType]string{
	RecordMmap: "MMAP", RecordLost: "LOST", RecordComm: "COMM", RecordExit: "EXIT",
	RecordThrottle: "THROTTLE", RecordUnthrottle: "UNTHROTTLE", RecordFork: "FORK",
	RecordRead: "READ", RecordSample: "SAMPLE", RecordMmap2: "MMAP2", RecordAux: "AUX",
	RecordItraceStart: "ITRACE_START", RecordLostSamples: "LOST_SAMPLES",
	RecordSwitch: "SWITCH", RecordSwitchCPUWide: "SWITCH_CPU_WIDE",
	RecordNamespaces: "NAMESPACES", RecordKsymbol: "KSYMBOL", RecordBPFEvent: "BPF_EVENT",
	RecordCgroup: "CGROUP", RecordTextPoke: "TEXT_POKE", RecordAuxOutputHWID: "AUX_OUTPUT_HW_ID",
	RecordHeaderAttr: "ATTR", RecordHeaderEventType: "EVENT_TYPE",
	RecordHeaderTracing: "TRACING_DATA", RecordHeaderBuildID: "BUILD_ID",
	RecordFinishedRound: "FINISHED_ROUND", RecordIDIndex: "ID_INDEX",
	RecordAuxtraceInfo: "AUXTRACE_INFO", RecordAuxtrace: "AUXTRACE",
	RecordAuxtraceError: "AUXTRACE_ERROR", RecordThreadMap: "THREAD_MAP",
	RecordCPUMap: "CPU_MAP", RecordStatConfig: "STAT_CONFIG", RecordStat: "STAT",
	RecordStatRound: "STAT_ROUND", RecordEventUpdate: "EVENT_UPDATE",
	RecordTimeConv: "TIME_CONV", RecordHeaderFeature: "FEATURE",
	RecordCompressed: "COMPRESSED", RecordFinishedInit: "FINISHED_INIT",
	RecordCompressed2: "COMPRESSED2",
}

func (t RecordType) String() string {
	if s, ok := recordTypeNames[t]; ok {
		return s
	}
	return "UNKNOWN(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// Record misc bits, mirrors PERF_RECORD_MISC_* in <linux/perf_event.h>.
const (
	MiscCPUModeMask   = 0x7
	MiscCPUModeUnkown = 0
	MiscKernel        = 1
	MiscUser          = 2
	MiscHypervisor    = 3
	MiscGuestKernel   = 4
	MiscGuestUser     = 5
	MiscMmapData      = 1 << 13 // on MMAP/MMAP2
	MiscCommExec      = 1 << 13 // on COMM
	MiscForkExec      = 1 << 13 // on FORK
	MiscSwitchOut     = 1 << 13 // on SWITCH
	// MiscSwitchOutPreempt, on a switch out: the task was preempted while
	// runnable rather than blocking (Linux 4.17).
	MiscSwitchOutPreempt = 1 << 14
	MiscExactIP          = 1 << 14 // on SAMPLE
	MiscMmapBuildID      = 1 << 14 // on MMAP2
	MiscExtReserved      = 1 << 15
)

// Callchain context markers, mirrors enum perf_callchain_context. They are
// stored in callchains as u64 values (negative numbers in the C enum).
const (
	ContextHV          uint64 = 0xffffffffffffffe0 // (u64)-32
	ContextKernel      uint64 = 0xffffffffffffff80 // (u64)-128
	ContextUser        uint64 = 0xfffffffffffffe00 // (u64)-512
	ContextGuest       uint64 = 0xfffffffffffff800 // (u64)-2048
	ContextGuestKernel uint64 = 0xfffffffffffff780 // (u64)-2176
	ContextGuestUser   uint64 = 0xfffffffffffff600 // (u64)-2560
	ContextMax         uint64 = 0xfffffffffffff001 // (u64)-4095
)

// x86-64 user register indices, mirrors enum perf_event_x86_regs in
// <arch/x86/include/uapi/asm/perf_regs.h> (x/sys/unix does not carry them).
const (
	RegAX    = 0
	RegBX    = 1
	RegCX    = 2
	RegDX    = 3
	RegSI    = 4
	RegDI    = 5
	RegBP    = 6
	RegSP    = 7
	RegIP    = 8
	RegFlags = 9
	RegCS    = 10
	RegSS    = 11
	RegDS    = 12 // not sampled on x86-64: asking for it fails with EINVAL
	RegES    = 13 // idem
	RegFS    = 14 // idem
	RegGS    = 15 // idem
	RegR8    = 16
	RegR15   = 23
)

// RegsUserX86_64 is the user-register mask perf uses for --call-graph dwarf
// on x86-64: all general registers, without DS, ES, FS and GS (0xff0fff).
const RegsUserX86_64 uint64 = (1<<(RegR15+1) - 1) &^ (1<<RegDS | 1<<RegES | 1<<RegFS | 1<<RegGS)

// bitNames joins the names of the set bits with "|"; unnamed bits print as
// hex so nothing is hidden.
func bitNames(v uint64, names []string) string {
	var b strings.Builder
	for i := 0; i < 64 && v != 0; i++ {
		bit := uint64(1) << i
		if v&bit == 0 {
			continue
		}
		v &^= bit
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		if i < len(names) {
			b.WriteString(names[i])
		} else {
			b.WriteString("0x" + strconv.FormatUint(bit, 16))
		}
	}
	return b.String()
}
