package synth

import (
	"encoding/binary"

	"github.com/hwprof/hwprof/perf"
)

// SampleID mirrors struct sample_id in <linux/perf_event.h>: the trailer
// every non-sample record carries when the attr has sample_id_all. Which
// fields are present is decided by the attr's sample_type; the rest are
// ignored when writing.
type SampleID struct {
	PID, TID   uint32 // if PERF_SAMPLE_TID
	Time       uint64 // if PERF_SAMPLE_TIME
	ID         uint64 // if PERF_SAMPLE_ID
	StreamID   uint64 // if PERF_SAMPLE_STREAM_ID
	CPU        uint32 // if PERF_SAMPLE_CPU (followed by a u32 res, written as 0)
	Identifier uint64 // if PERF_SAMPLE_IDENTIFIER
}

// sampleIDBits are the sample_type bits that put a u64 into sample_id.
const sampleIDBits = perf.SampleTID | perf.SampleTime | perf.SampleID |
	perf.SampleStreamID | perf.SampleCPU | perf.SampleIdentifier

// SampleIDSize is the size in bytes of the sample_id trailer for
// sample_type st (perf's id_hdr_size): 8 bytes for each of TID, TIME, ID,
// STREAM_ID, CPU and IDENTIFIER that st has. Other bits do not count.
func SampleIDSize(st perf.SampleType) int {
	n := 0
	for v := uint64(st & sampleIDBits); v != 0; v &= v - 1 {
		n += 8
	}
	return n
}

// AppendSampleID appends the sample_id trailer for sample_type st, in the
// kernel's order: {pid, tid}, time, id, stream_id, {cpu, res}, identifier.
func AppendSampleID(b []byte, st perf.SampleType, s SampleID) []byte {
	le := binary.LittleEndian
	if st&perf.SampleTID != 0 {
		b = le.AppendUint32(b, s.PID)
		b = le.AppendUint32(b, s.TID)
	}
	if st&perf.SampleTime != 0 {
		b = le.AppendUint64(b, s.Time)
	}
	if st&perf.SampleID != 0 {
		b = le.AppendUint64(b, s.ID)
	}
	if st&perf.SampleStreamID != 0 {
		b = le.AppendUint64(b, s.StreamID)
	}
	if st&perf.SampleCPU != 0 {
		b = le.AppendUint32(b, s.CPU)
		b = le.AppendUint32(b, 0) // res
	}
	if st&perf.SampleIdentifier != 0 {
		b = le.AppendUint64(b, s.Identifier)
	}
	return b
}
