package perf

// This file mirrors the records the kernel writes into a perf ring buffer
// (enum perf_event_type in <linux/perf_event.h>) as typed structs. The
// decoders are in decode_record.go; PERF_RECORD_SAMPLE is in sample.go.

// RecordHeaderSize is sizeof(struct perf_event_header).
const RecordHeaderSize = 8

// RecordHeader mirrors struct perf_event_header in <linux/perf_event.h>.
// Every typed record embeds it, so rec.Type, rec.Misc and rec.Size read
// the header.
type RecordHeader struct {
	Type RecordType
	Misc uint16
	Size uint16
}

// Header returns the header itself; it makes every record a Record.
func (h RecordHeader) Header() RecordHeader { return h }

// CPUMode returns the PERF_RECORD_MISC_CPUMODE bits of Misc (MiscKernel,
// MiscUser, ...).
func (h RecordHeader) CPUMode() uint16 { return h.Misc & MiscCPUModeMask }

// Record is one decoded record: a pointer to one of the typed structs of
// this package (*Mmap2, *Sample, *FinishedRound, *Unknown, ...).
type Record interface {
	Header() RecordHeader
}

// Trailer mirrors struct sample_id in <linux/perf_event.h>: the trailer
// that the kernel appends to every non-sample record of an event with
// sample_id_all set. Present holds the PERF_SAMPLE_* bits of the fields
// that are there (a subset of TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER);
// a field whose bit is not set is zero and means nothing.
type Trailer struct {
	Present    SampleType
	PID, TID   uint32 // if PERF_SAMPLE_TID
	Time       uint64 // if PERF_SAMPLE_TIME
	ID         uint64 // if PERF_SAMPLE_ID
	StreamID   uint64 // if PERF_SAMPLE_STREAM_ID
	CPU, Res   uint32 // if PERF_SAMPLE_CPU
	Identifier uint64 // if PERF_SAMPLE_IDENTIFIER
}

// sampleIDBits are the sample_type bits that appear in a sample_id trailer.
const sampleIDBits = SampleTID | SampleTime | SampleID | SampleStreamID | SampleCPU | SampleIdentifier

// Mmap mirrors struct perf_record_mmap (PERF_RECORD_MMAP): an executable
// mapping (a data mapping with MiscMmapData).
type Mmap struct {
	RecordHeader
	PID, TID uint32
	Addr     uint64
	Len      uint64
	PgOff    uint64
	Filename string
	Trailer  Trailer
}

// Mmap2 mirrors struct perf_record_mmap2 (PERF_RECORD_MMAP2). With
// MiscMmapBuildID in Misc the device and inode fields hold a build-id
// instead (HasBuildID reports it).
type Mmap2 struct {
	RecordHeader
	PID, TID      uint32
	Addr          uint64
	Len           uint64
	PgOff         uint64
	Maj, Min      uint32 // if !HasBuildID()
	Ino           uint64 // if !HasBuildID()
	InoGeneration uint64 // if !HasBuildID()
	BuildID       []byte // if HasBuildID(): build_id_size bytes of build_id[20]
	Prot, Flags   uint32
	Filename      string
	Trailer       Trailer
}

// HasBuildID reports whether the record carries a build-id in place of the
// device and inode numbers (PERF_RECORD_MISC_MMAP_BUILD_ID).
func (m *Mmap2) HasBuildID() bool { return m.Misc&MiscMmapBuildID != 0 }

// Comm mirrors struct perf_record_comm (PERF_RECORD_COMM).
type Comm struct {
	RecordHeader
	PID, TID uint32
	Comm     string
	Trailer  Trailer
}

// Exec reports whether the name changed because of an exec
// (PERF_RECORD_MISC_COMM_EXEC).
func (c *Comm) Exec() bool { return c.Misc&MiscCommExec != 0 }

// Fork mirrors struct perf_record_fork (PERF_RECORD_FORK and, with the
// same layout, PERF_RECORD_EXIT: Type tells which).
type Fork struct {
	RecordHeader
	PID, PPID uint32
	TID, PTID uint32
	Time      uint64
	Trailer   Trailer
}

// Lost mirrors struct perf_record_lost (PERF_RECORD_LOST): records the
// kernel dropped because the ring buffer was full.
type Lost struct {
	RecordHeader
	ID      uint64
	Lost    uint64
	Trailer Trailer
}

// LostSamples mirrors struct perf_record_lost_samples
// (PERF_RECORD_LOST_SAMPLES): samples dropped by the PMU driver.
type LostSamples struct {
	RecordHeader
	Lost    uint64
	Trailer Trailer
}

// Throttle mirrors struct perf_record_throttle (PERF_RECORD_THROTTLE and
// PERF_RECORD_UNTHROTTLE: Type tells which).
type Throttle struct {
	RecordHeader
	Time     uint64
	ID       uint64
	StreamID uint64
	Trailer  Trailer
}

// Read mirrors struct perf_record_read (PERF_RECORD_READ): counter values
// of an inherited event when a child exits.
type Read struct {
	RecordHeader
	PID, TID uint32
	Values   ReadValues
	Trailer  Trailer
}

// Switch mirrors PERF_RECORD_SWITCH: a context switch of the sampled task,
// out of it with MiscSwitchOut.
type Switch struct {
	RecordHeader
	Trailer Trailer
}

// Out reports a switch out (PERF_RECORD_MISC_SWITCH_OUT).
func (s *Switch) Out() bool { return s.Misc&MiscSwitchOut != 0 }

// Preempted reports a switch out of a task that was still runnable
// (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT): preempted, not blocked.
func (s *Switch) Preempted() bool { return s.Misc&MiscSwitchOutPreempt != 0 }

// SwitchCPUWide mirrors struct perf_record_switch for
// PERF_RECORD_SWITCH_CPU_WIDE: the task switched to (or from, when
// switching out).
type SwitchCPUWide struct {
	RecordHeader
	NextPrevPID uint32
	NextPrevTID uint32
	Trailer     Trailer
}

// Out reports a switch out (PERF_RECORD_MISC_SWITCH_OUT).
func (s *SwitchCPUWide) Out() bool { return s.Misc&MiscSwitchOut != 0 }

// Preempted reports a switch out of a task that was still runnable.
func (s *SwitchCPUWide) Preempted() bool { return s.Misc&MiscSwitchOutPreempt != 0 }

// NamespaceLink mirrors struct perf_ns_link_info.
type NamespaceLink struct {
	Dev, Ino uint64
}

// Namespaces mirrors struct perf_record_namespaces (PERF_RECORD_NAMESPACES);
// the links are indexed by NET_NS_INDEX ... CGROUP_NS_INDEX.
type Namespaces struct {
	RecordHeader
	PID, TID uint32
	Links    []NamespaceLink
	Trailer  Trailer
}

// Ksymbol mirrors struct perf_record_ksymbol (PERF_RECORD_KSYMBOL): a
// kernel symbol (BPF program, ftrace trampoline) registered or, with
// KsymbolUnregister in Flags, removed.
type Ksymbol struct {
	RecordHeader
	Addr     uint64
	Len      uint32
	KsymType uint16 // PERF_RECORD_KSYMBOL_TYPE_*
	Flags    uint16 // PERF_RECORD_KSYMBOL_FLAGS_*
	Name     string
	Trailer  Trailer
}

// KsymbolUnregister is PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER.
const KsymbolUnregister = 1 << 0

// BPFEvent mirrors struct perf_record_bpf_event (PERF_RECORD_BPF_EVENT).
type BPFEvent struct {
	RecordHeader
	EventType uint16 // PERF_BPF_EVENT_*
	Flags     uint16
	ID        uint32
	Tag       [8]byte
	Trailer   Trailer
}

// Cgroup mirrors struct perf_record_cgroup (PERF_RECORD_CGROUP).
type Cgroup struct {
	RecordHeader
	ID      uint64
	Path    string
	Trailer Trailer
}

// TextPoke mirrors struct perf_record_text_poke_event
// (PERF_RECORD_TEXT_POKE): kernel text changed at Addr from Old to New.
type TextPoke struct {
	RecordHeader
	Addr     uint64
	Old, New []byte // old_len and new_len bytes of the bytes[] field
	Trailer  Trailer
}

// Aux mirrors struct perf_record_aux (PERF_RECORD_AUX): new data in the
// AUX area.
type Aux struct {
	RecordHeader
	AuxOffset uint64
	AuxSize   uint64
	Flags     uint64 // PERF_AUX_FLAG_*
	Trailer   Trailer
}

// ItraceStart mirrors struct perf_record_itrace_start
// (PERF_RECORD_ITRACE_START).
type ItraceStart struct {
	RecordHeader
	PID, TID uint32
	Trailer  Trailer
}

// AuxOutputHWID mirrors struct perf_record_aux_output_hw_id
// (PERF_RECORD_AUX_OUTPUT_HW_ID).
type AuxOutputHWID struct {
	RecordHeader
	HWID    uint64
	Trailer Trailer
}

// Unknown is a record of a type this package does not decode, kept whole.
type Unknown struct {
	RecordHeader
	Data []byte // the bytes after the header; aliases the record
}
