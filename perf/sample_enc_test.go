package perf

import (
	"encoding/binary"
	"math/bits"
)

// This file encodes samples the way perf_output_sample in
// kernel/events/core.c lays them out, independently of the decoder, for
// the table tests and the fuzz round trip.

var lee = binary.LittleEndian

// appendSample encodes s for attr a: header, then every field of
// a.SampleType in kernel order. The header's size covers the record.
func appendSample(a *Attr, s *Sample) []byte {
	st := a.SampleType
	b := make([]byte, 8)
	lee.PutUint32(b, uint32(RecordSample))
	lee.PutUint16(b[4:], s.Misc)
	u64 := func(v uint64) { b = lee.AppendUint64(b, v) }
	u32 := func(v uint32) { b = lee.AppendUint32(b, v) }
	if st&SampleIdentifier != 0 {
		u64(s.Identifier)
	}
	if st&SampleIP != 0 {
		u64(s.IP)
	}
	if st&SampleTID != 0 {
		u32(s.PID)
		u32(s.TID)
	}
	if st&SampleTime != 0 {
		u64(s.Time)
	}
	if st&SampleAddr != 0 {
		u64(s.Addr)
	}
	if st&SampleID != 0 {
		u64(s.ID)
	}
	if st&SampleStreamID != 0 {
		u64(s.StreamID)
	}
	if st&SampleCPU != 0 {
		u32(s.CPU)
		u32(s.Res)
	}
	if st&SamplePeriod != 0 {
		u64(s.Period)
	}
	if st&SampleRead != 0 {
		b = appendReadFormat(b, a.ReadFormat, &s.Read)
	}
	if st&SampleCallchain != 0 {
		u64(uint64(len(s.Callchain)))
		for _, ip := range s.Callchain {
			u64(ip)
		}
	}
	if st&SampleRaw != 0 {
		u32(uint32(len(s.Raw)))
		b = append(b, s.Raw...)
	}
	if st&SampleBranchStack != 0 {
		u64(uint64(len(s.Branches)))
		if a.BranchSampleType&BranchHWIndex != 0 {
			u64(s.HWIndex)
		}
		for _, e := range s.Branches {
			u64(e.From)
			u64(e.To)
			u64(uint64(e.Flags))
		}
		if a.BranchSampleType&BranchCounters != 0 {
			for _, c := range s.BranchCounters {
				u64(c)
			}
		}
	}
	regs := func(r *Regs, mask uint64) {
		u64(r.ABI)
		if r.ABI != RegsABINone {
			for i := range bits.OnesCount64(mask) {
				u64(r.Values[i])
			}
		}
	}
	if st&SampleRegsUser != 0 {
		regs(&s.RegsUser, a.SampleRegsUser)
	}
	if st&SampleStackUser != 0 {
		u64(uint64(len(s.StackUser.Data)))
		b = append(b, s.StackUser.Data...)
		if len(s.StackUser.Data) != 0 {
			u64(s.StackUser.DynSize)
		}
	}
	if st&(SampleWeight|SampleWeightStruct) != 0 {
		u64(s.Weight)
	}
	if st&SampleDataSrc != 0 {
		u64(s.DataSrc)
	}
	if st&SampleTransaction != 0 {
		u64(s.Transaction)
	}
	if st&SampleRegsIntr != 0 {
		regs(&s.RegsIntr, a.SampleRegsIntr)
	}
	if st&SamplePhysAddr != 0 {
		u64(s.PhysAddr)
	}
	if st&SampleCgroup != 0 {
		u64(s.Cgroup)
	}
	if st&SampleDataPageSize != 0 {
		u64(s.DataPageSz)
	}
	if st&SampleCodePageSize != 0 {
		u64(s.CodePageSz)
	}
	if st&SampleAux != 0 {
		u64(uint64(len(s.Aux)))
		b = append(b, s.Aux...)
	}
	lee.PutUint16(b[6:], uint16(len(b)))
	return b
}

func appendReadFormat(b []byte, rf ReadFormat, r *ReadValues) []byte {
	times := func() {
		if rf&FormatTotalTimeEnabled != 0 {
			b = lee.AppendUint64(b, r.TimeEnabled)
		}
		if rf&FormatTotalTimeRunning != 0 {
			b = lee.AppendUint64(b, r.TimeRunning)
		}
	}
	value := func(v ReadValue) {
		if rf&FormatID != 0 {
			b = lee.AppendUint64(b, v.ID)
		}
		if rf&FormatLost != 0 {
			b = lee.AppendUint64(b, v.Lost)
		}
	}
	if rf&FormatGroup == 0 {
		b = lee.AppendUint64(b, r.Values[0].Value)
		times()
		value(r.Values[0])
		return b
	}
	b = lee.AppendUint64(b, uint64(len(r.Values)))
	times()
	for _, v := range r.Values {
		b = lee.AppendUint64(b, v.Value)
		value(v)
	}
	return b
}

// appendTrailer appends the sample_id trailer for sample_type st.
func appendTrailer(b []byte, st SampleType, t *Trailer) []byte {
	if st&SampleTID != 0 {
		b = lee.AppendUint32(b, t.PID)
		b = lee.AppendUint32(b, t.TID)
	}
	if st&SampleTime != 0 {
		b = lee.AppendUint64(b, t.Time)
	}
	if st&SampleID != 0 {
		b = lee.AppendUint64(b, t.ID)
	}
	if st&SampleStreamID != 0 {
		b = lee.AppendUint64(b, t.StreamID)
	}
	if st&SampleCPU != 0 {
		b = lee.AppendUint32(b, t.CPU)
		b = lee.AppendUint32(b, t.Res)
	}
	if st&SampleIdentifier != 0 {
		b = lee.AppendUint64(b, t.Identifier)
	}
	return b
}

// rec builds a record of type t from a body, fixing the header's size.
func rec(t RecordType, misc uint16, body []byte) []byte {
	b := make([]byte, 8, 8+len(body))
	lee.PutUint32(b, uint32(t))
	lee.PutUint16(b[4:], misc)
	b = append(b, body...)
	lee.PutUint16(b[6:], uint16(len(b)))
	return b
}

// cstr appends s NUL-terminated and padded to 8 bytes, as the kernel pads
// names.
func cstr(b []byte, s string) []byte {
	b = append(b, s...)
	for n := 8 - len(s)%8; n > 0; n-- {
		b = append(b, 0)
	}
	return b
}
