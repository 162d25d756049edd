package perf

import (
	"encoding/binary"
	"slices"
	"strconv"
)

// branchEntrySize is sizeof(struct perf_branch_entry).
const branchEntrySize = 24

// DecodeSample decodes a PERF_RECORD_SAMPLE (header included) into s,
// reusing s's slices: after the first few samples it does not allocate.
// The fields are read in the order of perf_output_sample (and perf's
// evsel__parse_sample), for the sample_type of the record's event. Raw,
// StackUser.Data and Aux alias rec. On error s holds what was decoded up
// to the bad field, and the *DecodeError names it and its offset.
func (f *SampleFormat) DecodeSample(rec []byte, s *Sample) error {
	h, err := ParseHeader(rec)
	if err != nil {
		return err
	}
	if h.Type != RecordSample {
		return &DecodeError{Type: h.Type, Field: "header type", Detail: "not a SAMPLE record"}
	}
	if int(h.Size) != len(rec) {
		return &DecodeError{Type: h.Type, Field: "header size", Offset: 6, Detail: "size field " + strconv.Itoa(int(h.Size)) + " but record of " + strconv.Itoa(len(rec)) + " bytes"}
	}
	idx, ev, err := f.layoutOf(rec)
	if err != nil {
		return err
	}
	s.RecordHeader = h
	s.Attr = idx
	return decodeSample(rec, ev, s)
}

// decodeSample follows perf_output_sample field by field.
func decodeSample(rec []byte, ev *formatEvent, s *Sample) error {
	a := &ev.attr
	st := a.SampleType
	s.Present = st
	c := cursor{b: rec, off: RecordHeaderSize, typ: RecordSample}
	if st&SampleIdentifier != 0 {
		s.Identifier = c.u64("identifier")
	}
	if st&SampleIP != 0 {
		s.IP = c.u64("ip")
	}
	if st&SampleTID != 0 {
		s.PID = c.u32("pid")
		s.TID = c.u32("tid")
	}
	if st&SampleTime != 0 {
		s.Time = c.u64("time")
	}
	if st&SampleAddr != 0 {
		s.Addr = c.u64("addr")
	}
	if st&SampleID != 0 {
		s.ID = c.u64("id")
	}
	if st&SampleStreamID != 0 {
		s.StreamID = c.u64("stream_id")
	}
	if st&SampleCPU != 0 {
		s.CPU = c.u32("cpu")
		s.Res = c.u32("res")
	}
	if st&SamplePeriod != 0 {
		s.Period = c.u64("period")
	}
	if st&SampleRead != 0 {
		decodeReadFormat(&c, a.ReadFormat, &s.Read)
	}
	if st&SampleCallchain != 0 {
		n := c.count("callchain nr", 8)
		s.Callchain = readU64s(&c, s.Callchain, n)
	}
	if st&SampleRaw != 0 {
		n := c.u32("raw size")
		s.Raw = c.bytes("raw data", uint64(n))
	}
	if st&SampleBranchStack != 0 {
		decodeBranchStack(&c, a.BranchSampleType, &s.BranchStack)
	}
	if st&SampleRegsUser != 0 {
		decodeRegs(&c, "regs_user", "regs_user abi", a.SampleRegsUser, ev.nRegsUser, &s.RegsUser)
	}
	if st&SampleStackUser != 0 {
		n := c.u64("stack_user size")
		s.StackUser.Data = c.bytes("stack_user data", n)
		s.StackUser.DynSize = 0
		if n != 0 {
			s.StackUser.DynSize = c.u64("stack_user dyn_size")
		}
	}
	if st&(SampleWeight|SampleWeightStruct) != 0 {
		s.Weight = c.u64("weight")
	}
	if st&SampleDataSrc != 0 {
		s.DataSrc = c.u64("data_src")
	}
	if st&SampleTransaction != 0 {
		s.Transaction = c.u64("transaction")
	}
	if st&SampleRegsIntr != 0 {
		decodeRegs(&c, "regs_intr", "regs_intr abi", a.SampleRegsIntr, ev.nRegsIntr, &s.RegsIntr)
	}
	if st&SamplePhysAddr != 0 {
		s.PhysAddr = c.u64("phys_addr")
	}
	if st&SampleCgroup != 0 {
		s.Cgroup = c.u64("cgroup")
	}
	if st&SampleDataPageSize != 0 {
		s.DataPageSz = c.u64("data_page_size")
	}
	if st&SampleCodePageSize != 0 {
		s.CodePageSz = c.u64("code_page_size")
	}
	if st&SampleAux != 0 {
		n := c.u64("aux size")
		s.Aux = c.bytes("aux data", n)
	}
	if c.err != nil {
		return c.err
	}
	return nil
}

// readU64s reads n u64s (already bounds-checked by count) into dst's
// storage.
func readU64s(c *cursor, dst []uint64, n int) []uint64 {
	dst = slices.Grow(dst[:0], n)[:n]
	if c.err != nil {
		return dst[:0]
	}
	b := c.b[c.off : c.off+8*n]
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	c.off += 8 * n
	return dst
}

// decodeReadFormat mirrors struct read_format: with PERF_FORMAT_GROUP
// nr, times, then nr {value, id, lost}; without it value, times, id, lost.
func decodeReadFormat(c *cursor, rf ReadFormat, r *ReadValues) {
	r.Format = rf
	r.TimeEnabled, r.TimeRunning = 0, 0
	per := 1 + b2i(rf&FormatID != 0) + b2i(rf&FormatLost != 0)
	if rf&FormatGroup == 0 {
		r.Values = slices.Grow(r.Values[:0], 1)[:1]
		v := &r.Values[0]
		*v = ReadValue{Value: c.u64("read value")}
		readTimes(c, rf, r)
		if rf&FormatID != 0 {
			v.ID = c.u64("read id")
		}
		if rf&FormatLost != 0 {
			v.Lost = c.u64("read lost")
		}
		return
	}
	nr := c.u64("read nr")
	readTimes(c, rf, r)
	if c.err == nil && nr > uint64(c.left()/(8*per)) {
		c.bad("read nr", "%d group values of %d bytes do not fit in the %d bytes left", nr, 8*per, c.left())
	}
	if c.err != nil {
		r.Values = r.Values[:0]
		return
	}
	r.Values = slices.Grow(r.Values[:0], int(nr))[:nr]
	for i := range r.Values {
		v := &r.Values[i]
		*v = ReadValue{Value: c.u64("read value")}
		if rf&FormatID != 0 {
			v.ID = c.u64("read id")
		}
		if rf&FormatLost != 0 {
			v.Lost = c.u64("read lost")
		}
	}
}

func readTimes(c *cursor, rf ReadFormat, r *ReadValues) {
	if rf&FormatTotalTimeEnabled != 0 {
		r.TimeEnabled = c.u64("read time_enabled")
	}
	if rf&FormatTotalTimeRunning != 0 {
		r.TimeRunning = c.u64("read time_running")
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// decodeBranchStack mirrors the BRANCH_STACK part of perf_output_sample:
// nr, hw_idx if the event asked for PERF_SAMPLE_BRANCH_HW_INDEX, nr
// entries, and nr counters with PERF_SAMPLE_BRANCH_COUNTERS. Like perf's
// reader it expects hw_idx whenever the attr asks for it.
func decodeBranchStack(c *cursor, bst BranchSampleType, bs *BranchStack) {
	n := c.u64("branch nr")
	bs.HasHWIndex = bst&BranchHWIndex != 0
	bs.HasCounters = bst&BranchCounters != 0
	bs.HWIndex = 0
	if bs.HasHWIndex {
		bs.HWIndex = c.u64("branch hw_idx")
	}
	per := branchEntrySize
	if bs.HasCounters {
		per += 8
	}
	if c.err == nil && n > uint64(c.left()/per) {
		c.bad("branch nr", "%d branch entries of %d bytes do not fit in the %d bytes left", n, per, c.left())
	}
	if c.err != nil {
		bs.Branches = bs.Branches[:0]
		bs.BranchCounters = bs.BranchCounters[:0]
		return
	}
	bs.Branches = slices.Grow(bs.Branches[:0], int(n))[:n]
	b := c.b[c.off : c.off+branchEntrySize*int(n)]
	for i := range bs.Branches {
		e := b[branchEntrySize*i : branchEntrySize*i+branchEntrySize]
		bs.Branches[i] = BranchEntry{
			From:  binary.LittleEndian.Uint64(e),
			To:    binary.LittleEndian.Uint64(e[8:]),
			Flags: BranchFlags(binary.LittleEndian.Uint64(e[16:])),
		}
	}
	c.off += branchEntrySize * int(n)
	if bs.HasCounters {
		bs.BranchCounters = readU64s(c, bs.BranchCounters, int(n))
	} else {
		bs.BranchCounters = bs.BranchCounters[:0]
	}
}

// decodeRegs reads abi and, unless it is PERF_SAMPLE_REGS_ABI_NONE, one
// u64 per bit of the mask. abiField is field's abi word (a constant: a
// label built per sample would allocate on every sample).
func decodeRegs(c *cursor, field, abiField string, mask uint64, n int, r *Regs) {
	r.Mask = mask
	r.ABI = c.u64(abiField)
	if r.ABI == RegsABINone || c.err != nil {
		r.Values = r.Values[:0]
		return
	}
	if c.left() < 8*n {
		c.short(field, 8*n)
		r.Values = r.Values[:0]
		return
	}
	r.Values = readU64s(c, r.Values, n)
}
