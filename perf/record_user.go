package perf

// This file mirrors the records perf itself writes into perf.data files
// (enum perf_user_event_type, types 64 and up), from
// tools/lib/perf/include/perf/event.h. They never come from the kernel.

// HeaderAttr mirrors struct perf_record_header_attr (PERF_RECORD_HEADER_ATTR,
// pipe mode): an event's attr and the sample ids of its instances.
type HeaderAttr struct {
	RecordHeader
	Attr Attr
	IDs  []uint64
}

// HeaderEventType mirrors struct perf_record_header_event_type
// (PERF_RECORD_HEADER_EVENT_TYPE, old pipe files): the name of a
// tracepoint id.
type HeaderEventType struct {
	RecordHeader
	EventID uint64
	Name    string
}

// HeaderTracingData mirrors struct perf_record_header_tracing_data
// (PERF_RECORD_HEADER_TRACING_DATA). Size bytes of tracing data follow the
// record in the stream, outside header.size.
type HeaderTracingData struct {
	RecordHeader
	Size uint32
}

// HeaderBuildID mirrors struct perf_record_header_build_id
// (PERF_RECORD_HEADER_BUILD_ID, and each entry of the build-id feature
// section).
type HeaderBuildID struct {
	RecordHeader
	PID      int32
	BuildID  []byte // 20 bytes, or build_id_size with PERF_RECORD_MISC_BUILD_ID_SIZE
	Filename string
}

// MiscBuildIDSize is PERF_RECORD_MISC_BUILD_ID_SIZE: byte 20 of the
// build-id field holds the build-id's length.
const MiscBuildIDSize = 1 << 15

// FinishedRound is PERF_RECORD_FINISHED_ROUND: perf record read every ring
// buffer once; records before it can be sorted by time and delivered.
type FinishedRound struct{ RecordHeader }

// FinishedInit is PERF_RECORD_FINISHED_INIT: the records synthesized at
// start (existing processes and mappings) end here.
type FinishedInit struct{ RecordHeader }

// IDIndexEntry mirrors struct id_index_entry.
type IDIndexEntry struct {
	ID, Idx, CPU, TID uint64
}

// IDIndex mirrors struct perf_record_id_index (PERF_RECORD_ID_INDEX): which
// event index, CPU and thread each sample id belongs to.
type IDIndex struct {
	RecordHeader
	Entries []IDIndexEntry
}

// AuxtraceInfo mirrors struct perf_record_auxtrace_info
// (PERF_RECORD_AUXTRACE_INFO).
type AuxtraceInfo struct {
	RecordHeader
	AuxType uint32 // PERF_AUXTRACE_*
	Priv    []uint64
}

// Auxtrace mirrors struct perf_record_auxtrace (PERF_RECORD_AUXTRACE).
// Size bytes of AUX data follow the record, outside header.size.
type Auxtrace struct {
	RecordHeader
	Size, Offset, Reference uint64
	Idx, TID, CPU           uint32
}

// AuxtraceError mirrors struct perf_record_auxtrace_error
// (PERF_RECORD_AUXTRACE_ERROR).
type AuxtraceError struct {
	RecordHeader
	ErrType, Code, CPU, PID, TID uint32
	Fmt                          uint32
	IP                           uint64
	Time                         uint64 // if Fmt >= 2
	Msg                          string
}

// ThreadMapEntry mirrors struct perf_record_thread_map_entry.
type ThreadMapEntry struct {
	PID  uint64
	Comm string
}

// ThreadMap mirrors struct perf_record_thread_map (PERF_RECORD_THREAD_MAP).
type ThreadMap struct {
	RecordHeader
	Entries []ThreadMapEntry
}

// CPUMap mirrors struct perf_record_cpu_map (PERF_RECORD_CPU_MAP), with the
// list, mask and range encodings of struct perf_record_cpu_map_data
// expanded to CPU numbers.
type CPUMap struct {
	RecordHeader
	CPUs []uint32
	Any  bool // the range form's any_cpu: the map also holds "any CPU" (-1)
}

// StatConfigEntry mirrors struct perf_record_stat_config_entry.
type StatConfigEntry struct {
	Tag, Val uint64
}

// StatConfig mirrors struct perf_record_stat_config
// (PERF_RECORD_STAT_CONFIG).
type StatConfig struct {
	RecordHeader
	Entries []StatConfigEntry
}

// Stat mirrors struct perf_record_stat (PERF_RECORD_STAT): one counter
// reading of perf stat record.
type Stat struct {
	RecordHeader
	ID            uint64
	CPU, Thread   uint32
	Val, Ena, Run uint64
}

// StatRound mirrors struct perf_record_stat_round (PERF_RECORD_STAT_ROUND).
type StatRound struct {
	RecordHeader
	RoundType uint64
	Time      uint64
}

// Event update types, mirrors enum perf_event_update_type.
const (
	EventUpdateUnit  = 0 // PERF_EVENT_UPDATE__UNIT
	EventUpdateScale = 1 // PERF_EVENT_UPDATE__SCALE
	EventUpdateName  = 2 // PERF_EVENT_UPDATE__NAME
	EventUpdateCPUs  = 3 // PERF_EVENT_UPDATE__CPUS
)

// EventUpdate mirrors struct perf_record_event_update
// (PERF_RECORD_EVENT_UPDATE): a unit, scale, name or CPU list for the event
// that owns ID.
type EventUpdate struct {
	RecordHeader
	UpdateType uint64
	ID         uint64
	Unit       string  // if EventUpdateUnit
	Scale      float64 // if EventUpdateScale
	Name       string  // if EventUpdateName
	CPUs       []uint32
}

// TimeConv mirrors struct perf_record_time_conv (PERF_RECORD_TIME_CONV):
// how to convert TSC values to perf time. Files before Linux 5.10 stop
// after TimeZero (Full is false).
type TimeConv struct {
	RecordHeader
	TimeShift, TimeMult, TimeZero uint64
	Full                          bool   // the fields below are present
	TimeCycles, TimeMask          uint64 // if Full
	CapUserTimeZero               bool   // if Full
	CapUserTimeShort              bool   // if Full
}

// HeaderFeature mirrors struct perf_record_header_feature
// (PERF_RECORD_HEADER_FEATURE, pipe mode): one feature section.
type HeaderFeature struct {
	RecordHeader
	FeatID uint64
	Data   []byte // the section's bytes; aliases the record
}

// Compressed mirrors struct perf_record_compressed (PERF_RECORD_COMPRESSED)
// and struct perf_record_compressed2 (PERF_RECORD_COMPRESSED2): zstd
// compressed records.
type Compressed struct {
	RecordHeader
	Data []byte // the compressed bytes (data_size of them for COMPRESSED2); aliases the record
}
