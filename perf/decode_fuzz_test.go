package perf

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzDecodeRecord decodes arbitrary bytes as a record of an event with an
// arbitrary layout (sample_type, read_format, branch_sample_type, register
// masks, sample_id_all), and of two events sharing the id position.
// Whatever the bytes: no panic; a decoded sample encodes back (kernel
// layout, independent encoder) to exactly the bytes it came from; an error
// is a *DecodeError or names an unknown id; Time agrees with the decoded
// sample.
func FuzzDecodeRecord(f *testing.F) {
	full := Attr{SampleType: SampleType(1<<sampleTypeKnownBits-1) &^ SampleWeight, ReadFormat: FormatGroup | FormatID | FormatLost | FormatTotalTimeEnabled,
		BranchSampleType: BranchHWIndex | BranchCounters, SampleRegsUser: RegsUserX86_64, SampleRegsIntr: 0x3, Flags: FlagSampleIDAll}
	s := fullSample(&full)
	f.Add(uint64(full.SampleType), uint64(full.ReadFormat), uint64(full.BranchSampleType), full.SampleRegsUser, full.SampleRegsIntr, true, appendSample(&full, &s))
	lbr := Attr{SampleType: SampleIP | SampleTID | SampleTime | SamplePeriod | SampleBranchStack}
	s2 := Sample{IP: 1, Period: 2, BranchStack: BranchStack{Branches: []BranchEntry{{1, 2, 3}, {4, 5, 0xffff_ffff_ffff}}}}
	f.Add(uint64(lbr.SampleType), uint64(0), uint64(0), uint64(0), uint64(0), false, appendSample(&lbr, &s2))
	st := SampleTID | SampleTime | SampleID | SampleCPU
	mm := rec(RecordMmap2, MiscUser, appendTrailer(cstr(make([]byte, 64), "/bin/true"), st, &Trailer{PID: 1, Time: 9, ID: 7}))
	f.Add(uint64(st), uint64(0), uint64(0), uint64(0), uint64(0), true, mm)
	f.Add(uint64(SampleIP), uint64(0), uint64(0), uint64(0), uint64(0), false, rec(RecordHeaderAttr, 0, make([]byte, 72)))
	f.Add(uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), false, []byte{9, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, st, rf, bst, ru, ri uint64, idAll bool, data []byte) {
		a := Attr{SampleType: SampleType(st), ReadFormat: ReadFormat(rf), BranchSampleType: BranchSampleType(bst), SampleRegsUser: ru, SampleRegsIntr: ri}
		if idAll {
			a.Flags |= FlagSampleIDAll
		}
		if len(data) >= 8 {
			binary.LittleEndian.PutUint16(data[6:], uint16(min(len(data), 0xffff)))
			data = data[:min(len(data), 0xffff)]
		}
		formats := []*SampleFormat{}
		if one, err := NewSampleFormat(a); err == nil {
			formats = append(formats, one)
		}
		b := a
		b.Config = 1
		if two, err := NewSampleFormat(a, b); err == nil {
			two.AddIDs(0, []uint64{1})
			two.AddIDs(1, []uint64{2})
			formats = append(formats, two)
		}
		for _, sf := range formats {
			checkDecode(t, sf, data)
		}
	})
}

func checkDecode(t *testing.T, sf *SampleFormat, data []byte) {
	r, err := sf.Decode(data)
	if err != nil {
		if _, ok := err.(*DecodeError); !ok && !bytes.Contains([]byte(err.Error()), []byte("decode")) {
			t.Fatalf("error %v is not a decode error", err)
		}
	} else if r.Header().Size != uint16(len(data)) {
		t.Fatalf("decoded header size %d, record %d", r.Header().Size, len(data))
	}
	var s Sample
	if err := sf.DecodeSample(data, &s); err != nil {
		return
	}
	a := sf.Attr(max(s.Attr, 0))
	enc := appendSample(a, &s)
	if len(enc) > len(data) || !bytes.Equal(enc[8:], data[8:len(enc)]) {
		t.Fatalf("sample does not encode back:\n in %x\nout %x", data, enc)
	}
	if tm, ok := sf.Time(data); ok != s.Has(SampleTime) || tm != s.Time && ok {
		t.Fatalf("Time = %d, %v; sample time %d, has %v", tm, ok, s.Time, s.Has(SampleTime))
	}
}
