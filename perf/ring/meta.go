package ring

import "encoding/binary"

// Byte offsets of the fields of struct perf_event_mmap_page in
// <linux/perf_event.h>, the first page of every perf mmap. The fields
// before data_head are the self-monitoring part (seqlock-protected counter
// and time conversion values); the ring itself is described by data_*.
const (
	offVersion       = 0    // __u32 version
	offCompatVersion = 4    // __u32 compat_version
	offLock          = 8    // __u32 lock: seqlock for the fields below
	offIndex         = 12   // __u32 index: hardware counter + 1, or 0
	offOffset        = 16   // __s64 offset
	offTimeEnabled   = 24   // __u64 time_enabled
	offTimeRunning   = 32   // __u64 time_running
	offCapabilities  = 40   // __u64 capabilities (cap_user_rdpmc, cap_user_time, ...)
	offPMCWidth      = 48   // __u16 pmc_width
	offTimeShift     = 50   // __u16 time_shift
	offTimeMult      = 52   // __u32 time_mult
	offTimeOffset    = 56   // __u64 time_offset
	offTimeZero      = 64   // __u64 time_zero
	offSize          = 72   // __u32 size: header size up to __reserved
	offTimeCycles    = 80   // __u64 time_cycles
	offTimeMask      = 88   // __u64 time_mask
	offDataHead      = 1024 // __u64 data_head: written by the kernel
	offDataTail      = 1032 // __u64 data_tail: written by user space
	offDataOffset    = 1040 // __u64 data_offset: where the data area starts
	offDataSize      = 1048 // __u64 data_size: bytes in the data area
	offAuxHead       = 1056 // __u64 aux_head
	offAuxTail       = 1064 // __u64 aux_tail
	offAuxOffset     = 1072 // __u64 aux_offset
	offAuxSize       = 1080 // __u64 aux_size

	// metaMin is the number of bytes of the page this package relies on.
	metaMin = offAuxSize + 8
)

// headerSize is sizeof(struct perf_event_header).
const headerSize = 8

// header mirrors struct perf_event_header in <linux/perf_event.h>:
// {u32 type; u16 misc; u16 size}. size counts the header itself.
type header struct {
	typ  uint32 // type: enum perf_event_type
	misc uint16 // misc: PERF_RECORD_MISC_* bits
	size uint16 // size: bytes of the whole record, header included
}

// parseHeader decodes the first headerSize bytes of b; b must hold them.
func parseHeader(b []byte) header {
	return header{
		typ:  binary.LittleEndian.Uint32(b[0:]),
		misc: binary.LittleEndian.Uint16(b[4:]),
		size: binary.LittleEndian.Uint16(b[6:]),
	}
}
