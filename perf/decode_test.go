package perf

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// fullSample returns a sample with a distinct value in every field that
// a's layout has.
func fullSample(a *Attr) Sample {
	s := Sample{
		RecordHeader: RecordHeader{Type: RecordSample, Misc: MiscUser | MiscExactIP},
		Identifier:   11, IP: 0x401234, PID: 100, TID: 101, Time: 1_000_000_123, Addr: 0xdead0,
		ID: 11, StreamID: 12, CPU: 3, Period: 4000,
		Callchain: []uint64{ContextKernel, 0xffffffff81000010, ContextUser, 0x401234, 0x401100},
		Raw:       []byte{1, 2, 3, 4},
		BranchStack: BranchStack{
			Branches: []BranchEntry{{0x401000, 0x402000, BranchFlags(1<<1 | 17<<4 | uint64(BrCall)<<20)}, {0x402010, 0x401005, BranchFlags(1 | uint64(BrRet)<<20)}},
		},
		RegsUser:  Regs{ABI: RegsABI64},
		StackUser: StackUser{Data: []byte("stack copy......"), DynSize: 9},
		Weight:    0x0003_0002_0000_0001,
		DataSrc:   0x42, Transaction: 0x7, PhysAddr: 0x1000, Cgroup: 5,
		DataPageSz: 4096, CodePageSz: 2 << 20, Aux: []byte("aux data"),
	}
	rf := a.ReadFormat
	s.Read.Format = rf
	n := 1
	if rf&FormatGroup != 0 {
		n = 3
	}
	for i := range n {
		v := ReadValue{Value: uint64(1000 + i)}
		if rf&FormatID != 0 {
			v.ID = uint64(20 + i)
		}
		if rf&FormatLost != 0 {
			v.Lost = uint64(i)
		}
		s.Read.Values = append(s.Read.Values, v)
	}
	if rf&FormatTotalTimeEnabled != 0 {
		s.Read.TimeEnabled = 777
	}
	if rf&FormatTotalTimeRunning != 0 {
		s.Read.TimeRunning = 666
	}
	bst := a.BranchSampleType
	s.HasHWIndex = bst&BranchHWIndex != 0
	if s.HasHWIndex {
		s.HWIndex = 5
	}
	s.HasCounters = bst&BranchCounters != 0
	if s.HasCounters {
		s.BranchCounters = []uint64{0x12, 0x34}
	}
	s.RegsUser.Mask = a.SampleRegsUser
	for i := range popcount(a.SampleRegsUser) {
		s.RegsUser.Values = append(s.RegsUser.Values, uint64(0x100+i))
	}
	s.RegsIntr = Regs{ABI: RegsABI64, Mask: a.SampleRegsIntr}
	for i := range popcount(a.SampleRegsIntr) {
		s.RegsIntr.Values = append(s.RegsIntr.Values, uint64(0x200+i))
	}
	return s
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// keep clears the fields a's sample_type does not have, so decoded and
// expected samples compare equal.
func keep(a *Attr, s Sample) Sample {
	st := a.SampleType
	out := Sample{RecordHeader: s.RecordHeader, Present: st}
	if st&SampleIdentifier != 0 {
		out.Identifier = s.Identifier
	}
	if st&SampleIP != 0 {
		out.IP = s.IP
	}
	if st&SampleTID != 0 {
		out.PID, out.TID = s.PID, s.TID
	}
	if st&SampleTime != 0 {
		out.Time = s.Time
	}
	if st&SampleAddr != 0 {
		out.Addr = s.Addr
	}
	if st&SampleID != 0 {
		out.ID = s.ID
	}
	if st&SampleStreamID != 0 {
		out.StreamID = s.StreamID
	}
	if st&SampleCPU != 0 {
		out.CPU, out.Res = s.CPU, s.Res
	}
	if st&SamplePeriod != 0 {
		out.Period = s.Period
	}
	if st&SampleRead != 0 {
		out.Read = s.Read
	}
	if st&SampleCallchain != 0 {
		out.Callchain = s.Callchain
	}
	if st&SampleRaw != 0 {
		out.Raw = s.Raw
	}
	if st&SampleBranchStack != 0 {
		out.BranchStack = s.BranchStack
	}
	if st&SampleRegsUser != 0 {
		out.RegsUser = s.RegsUser
	}
	if st&SampleStackUser != 0 {
		out.StackUser = s.StackUser
	}
	if st&(SampleWeight|SampleWeightStruct) != 0 {
		out.Weight = s.Weight
	}
	if st&SampleDataSrc != 0 {
		out.DataSrc = s.DataSrc
	}
	if st&SampleTransaction != 0 {
		out.Transaction = s.Transaction
	}
	if st&SampleRegsIntr != 0 {
		out.RegsIntr = s.RegsIntr
	}
	if st&SamplePhysAddr != 0 {
		out.PhysAddr = s.PhysAddr
	}
	if st&SampleCgroup != 0 {
		out.Cgroup = s.Cgroup
	}
	if st&SampleDataPageSize != 0 {
		out.DataPageSz = s.DataPageSz
	}
	if st&SampleCodePageSize != 0 {
		out.CodePageSz = s.CodePageSz
	}
	if st&SampleAux != 0 {
		out.Aux = s.Aux
	}
	return out
}

// sampleLayouts are named, real-world attrs plus one per sample_type bit.
func sampleLayouts() map[string]Attr {
	m := map[string]Attr{
		"perf record -e cpu-clock":         {SampleType: SampleIP | SampleTID | SampleTime | SamplePeriod},
		"perf record -g":                   {SampleType: SampleIP | SampleTID | SampleTime | SampleCallchain | SamplePeriod},
		"lbr -b (Intel, 3.x files)":        {SampleType: SampleIP | SampleTID | SampleTime | SampleCPU | SamplePeriod | SampleBranchStack, BranchSampleType: BranchAny},
		"lbr hw_index (5.7+)":              {SampleType: SampleIP | SampleTID | SampleTime | SampleCPU | SamplePeriod | SampleBranchStack | SampleIdentifier, BranchSampleType: BranchAny | BranchHWIndex},
		"lbr with counters (6.8+)":         {SampleType: SampleIP | SampleTID | SampleBranchStack, BranchSampleType: BranchAny | BranchCounters | BranchHWIndex},
		"raw+callchain+branch (3.4)":       {SampleType: SampleIP | SampleTID | SampleTime | SampleCallchain | SampleCPU | SamplePeriod | SampleRaw | SampleBranchStack},
		"--call-graph dwarf":               {SampleType: SampleIP | SampleTID | SampleTime | SampleCallchain | SamplePeriod | SampleRegsUser | SampleStackUser, SampleRegsUser: RegsUserX86_64, SampleStackUser: 8192},
		"mem load latency (weight_struct)": {SampleType: SampleIP | SampleTID | SampleTime | SampleAddr | SampleID | SampleCPU | SampleDataSrc | SampleWeightStruct | SamplePhysAddr | SampleDataPageSize},
		"group read":                       {SampleType: SampleIP | SampleRead | SampleID, ReadFormat: FormatGroup | FormatID | FormatLost | FormatTotalTimeEnabled | FormatTotalTimeRunning},
		"everything":                       {SampleType: SampleType(1<<sampleTypeKnownBits-1) &^ SampleWeight, ReadFormat: FormatID | FormatTotalTimeRunning, BranchSampleType: BranchHWIndex, SampleRegsUser: 0xff, SampleRegsIntr: 0x1},
	}
	for i := range sampleTypeKnownBits {
		bit := SampleType(1) << i
		a := Attr{SampleType: bit, ReadFormat: FormatID, SampleRegsUser: 0x3, SampleRegsIntr: 0x5}
		m["only "+bit.String()] = a
	}
	return m
}

func TestDecodeSampleLayouts(t *testing.T) {
	for name, a := range sampleLayouts() {
		t.Run(name, func(t *testing.T) {
			f, err := NewSampleFormat(a)
			if err != nil {
				t.Fatal(err)
			}
			want := keep(&a, fullSample(&a))
			raw := appendSample(&a, &want)
			want.Size = uint16(len(raw))
			var got Sample
			if err := f.DecodeSample(raw, &got); err != nil {
				t.Fatal(err)
			}
			// Compare printed: empty and nil slices are alike.
			if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
				t.Errorf("decoded\n %s\nwant\n %s", g, w)
			}
			if tm, ok := f.Time(raw); ok != (a.SampleType&SampleTime != 0) || ok && tm != want.Time {
				t.Errorf("Time = %d, %v", tm, ok)
			}
			checkLayout(t, f, &a, raw, &want)
			// Every shorter record fails with an error naming a field,
			// never a panic.
			for n := 8; n < len(raw); n++ {
				short := append([]byte(nil), raw[:n]...)
				lee.PutUint16(short[6:], uint16(n))
				err := f.DecodeSample(short, &got)
				var de *DecodeError
				if !errors.As(err, &de) || de.Field == "" || de.Offset < 8 || de.Offset > n {
					t.Fatalf("cut at %d: %v, want a DecodeError with the field and an offset", n, err)
				}
			}
		})
	}
}

func TestDecodeSampleReadFormats(t *testing.T) {
	for rf := ReadFormat(0); rf < 32; rf++ {
		a := Attr{SampleType: SampleTID | SampleRead, ReadFormat: rf}
		f, _ := NewSampleFormat(a)
		want := keep(&a, fullSample(&a))
		raw := appendSample(&a, &want)
		want.Size = uint16(len(raw))
		var got Sample
		if err := f.DecodeSample(raw, &got); err != nil {
			t.Fatalf("%v: %v", rf, err)
		}
		if fmt.Sprint(got.Read) != fmt.Sprint(want.Read) {
			t.Errorf("%v: read %+v, want %+v", rf, got.Read, want.Read)
		}
	}
}

func TestDecodeSampleReusesSlices(t *testing.T) {
	a := sampleLayouts()["raw+callchain+branch (3.4)"]
	f, _ := NewSampleFormat(a)
	s := fullSample(&a)
	raw := appendSample(&a, &s)
	var got Sample
	if err := f.DecodeSample(raw, &got); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := f.DecodeSample(raw, &got); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("DecodeSample allocates %.1f times per sample once warm", allocs)
	}
	if got.Branches[1].From != 0x402010 {
		t.Errorf("branches %+v", got.Branches)
	}
	// every layout, the register sets included (their field labels once
	// were built per sample)
	for name, a := range sampleLayouts() {
		f, _ := NewSampleFormat(a)
		s := fullSample(&a)
		raw := appendSample(&a, &s)
		var got Sample
		if err := f.DecodeSample(raw, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		allocs := testing.AllocsPerRun(20, func() { _ = f.DecodeSample(raw, &got) })
		if allocs != 0 {
			t.Errorf("%s: DecodeSample allocates %.1f times per sample once warm", name, allocs)
		}
	}
}

func TestBranchFlags(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		word                         uint64
		mispred, predicted, tx, abrt bool
		cycles                       uint16
		typ                          BranchType
		spec                         BranchSpec
		priv                         BranchPriv
	}{
		{"old LBR, no info", 0, false, false, false, false, 0, BrUnknown, BrSpecNA, BrPrivUnknown},
		{"predicted, 4 cycles (Skylake)", 0b10 | 4<<4, false, true, false, false, 4, BrUnknown, BrSpecNA, BrPrivUnknown},
		{"mispredicted", 0b01, true, false, false, false, 0, BrUnknown, BrSpecNA, BrPrivUnknown},
		{"in TSX, aborted", 0b1100, false, false, true, true, 0, BrUnknown, BrSpecNA, BrPrivUnknown},
		{"max cycles", 0xffff << 4, false, false, false, false, 0xffff, BrUnknown, BrSpecNA, BrPrivUnknown},
		{"saved type call", uint64(BrCall) << 20, false, false, false, false, 0, BrCall, BrSpecNA, BrPrivUnknown},
		{"saved type ret", uint64(BrRet) << 20, false, false, false, false, 0, BrRet, BrSpecNA, BrPrivUnknown},
		{"AMD Zen 4 spec correct path", 0b10 | 3<<24, false, true, false, false, 0, BrUnknown, BrSpecCorrectPath, BrPrivUnknown},
		{"AMD spec wrong path mispredicted", 0b01 | 1<<24, true, false, false, false, 0, BrUnknown, BrSpecWrongPath, BrPrivUnknown},
		{"new type fault data (Arm BRBE)", uint64(BrExtendABI)<<20 | 1<<26, false, false, false, false, 0, BrNewFaultData, BrSpecNA, BrPrivUnknown},
		{"priv user (arch LBR)", 1 << 30, false, false, false, false, 0, BrUnknown, BrSpecNA, BrPrivUser},
		{"priv hv, reserved bits set", 3<<30 | 0x7fff_fffe<<33, false, false, false, false, 0, BrUnknown, BrSpecNA, BrPrivHV},
	} {
		f := BranchFlags(tc.word)
		if f.Mispred() != tc.mispred || f.Predicted() != tc.predicted || f.InTX() != tc.tx || f.Abort() != tc.abrt ||
			f.Cycles() != tc.cycles || f.FullType() != tc.typ || f.Spec() != tc.spec || f.Priv() != tc.priv {
			t.Errorf("%s: %#x: mispred %v predicted %v in_tx %v abort %v cycles %d type %v spec %v priv %v", tc.name, tc.word,
				f.Mispred(), f.Predicted(), f.InTX(), f.Abort(), f.Cycles(), f.FullType(), f.Spec(), f.Priv())
		}
	}
	if BrCondCall.String() != "COND_CALL" || BrNewArch5.String() != "ARCH_5" || BrUnknown.String() != "" {
		t.Errorf("names: %q %q %q", BrCondCall, BrNewArch5, BrUnknown)
	}
}

func TestSplitCallchain(t *testing.T) {
	k, u := ContextKernel, ContextUser
	for _, tc := range []struct {
		name  string
		chain []uint64
		want  CallchainParts
	}{
		{"kernel then user", []uint64{k, 1, 2, u, 3, 4}, CallchainParts{Kernel: []uint64{1, 2}, User: []uint64{3, 4}}},
		{"user only (exclude_kernel)", []uint64{u, 3, 4}, CallchainParts{User: []uint64{3, 4}}},
		{"kernel only (kernel thread)", []uint64{k, 1}, CallchainParts{Kernel: []uint64{1}}},
		{"empty markers", []uint64{k, u}, CallchainParts{Kernel: []uint64{}, User: []uint64{}}},
		{"no markers (synthesized)", []uint64{5, 6}, CallchainParts{Unmarked: []uint64{5, 6}}},
		{"guest", []uint64{ContextGuest, ContextGuestKernel, 7, ContextGuestUser, 8, k, 1}, CallchainParts{GuestKernel: []uint64{7}, GuestUser: []uint64{8}, Kernel: []uint64{1}}},
		{"hypervisor", []uint64{ContextHV, 9, k, 1}, CallchainParts{HV: []uint64{9}, Kernel: []uint64{1}}},
		{"kernel twice keeps the first", []uint64{k, 1, u, 2, k, 3}, CallchainParts{Kernel: []uint64{1}, User: []uint64{2}}},
		{"nil", nil, CallchainParts{}},
	} {
		if got := SplitCallchain(tc.chain); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if CallchainContextName(ContextUser) != "PERF_CONTEXT_USER" || CallchainContextName(0x401000) != "" {
		t.Error("CallchainContextName")
	}
}

func TestRegsGet(t *testing.T) {
	r := Regs{ABI: RegsABI64, Mask: RegsUserX86_64}
	for i := range popcount(r.Mask) {
		r.Values = append(r.Values, uint64(i))
	}
	if v, ok := r.Get(RegSP); !ok || v != RegSP {
		t.Errorf("sp = %d, %v", v, ok)
	}
	if v, ok := r.Get(RegR8); !ok || v != RegR8-4 { // DS, ES, FS, GS are not sampled
		t.Errorf("r8 = %d, %v", v, ok)
	}
	if _, ok := r.Get(RegDS); ok {
		t.Error("DS is not in the mask")
	}
	r.ABI = RegsABINone
	if _, ok := r.Get(RegSP); ok {
		t.Error("ABI none has no registers")
	}
}

func TestEventOf(t *testing.T) {
	ident := SampleIdentifier | SampleIP | SampleTID | SampleTime | SampleCPU
	withID := SampleIP | SampleTID | SampleTime | SampleID | SampleCPU | SamplePeriod
	a := Attr{SampleType: ident, Flags: FlagSampleIDAll}
	b := Attr{SampleType: ident | SamplePeriod | SampleBranchStack, Flags: FlagSampleIDAll}
	f, err := NewSampleFormat()
	if err != nil {
		t.Fatal(err)
	}
	f.Add(a, []uint64{10, 11})
	f.Add(b, []uint64{20})
	sa := Sample{Identifier: 11, Time: 5}
	sb := Sample{Identifier: 20, Time: 6}
	if i, err := f.EventOf(appendSample(&a, &sa)); i != 0 || err != nil {
		t.Errorf("sample of a: %d %v", i, err)
	}
	if i, err := f.EventOf(appendSample(&b, &sb)); i != 1 || err != nil {
		t.Errorf("sample of b: %d %v", i, err)
	}
	comm := rec(RecordComm, 0, appendTrailer(cstr(make([]byte, 8), "x"), ident, &Trailer{Identifier: 20, Time: 77}))
	if i, err := f.EventOf(comm); i != 1 || err != nil {
		t.Errorf("trailer of b: %d %v", i, err)
	}
	if tm, ok := f.Time(comm); !ok || tm != 77 {
		t.Errorf("trailer time %d %v", tm, ok)
	}
	sa.Identifier = 99
	if _, err := f.EventOf(appendSample(&a, &sa)); !errors.Is(err, ErrUnknownID) {
		t.Errorf("unknown id with differing layouts: %v", err)
	}
	sa.Identifier = 0
	if i, err := f.EventOf(appendSample(&a, &sa)); i != 0 || err != nil {
		t.Errorf("id 0 (synthesized): %d %v", i, err)
	}
	// Same layout: an unknown id still decodes, as event -1.
	g, _ := NewSampleFormat(Attr{SampleType: withID}, Attr{SampleType: withID, Config: 1})
	g.AddIDs(1, []uint64{5})
	s := Sample{ID: 6, IP: 0x10}
	var got Sample
	if err := g.DecodeSample(appendSample(g.Attr(0), &s), &got); err != nil || got.Attr != -1 || got.IP != 0x10 {
		t.Errorf("unknown id, uniform: attr %d ip %#x err %v", got.Attr, got.IP, err)
	}
	s.ID = 5
	if err := g.DecodeSample(appendSample(g.Attr(0), &s), &got); err != nil || got.Attr != 1 {
		t.Errorf("id 5: attr %d err %v", got.Attr, err)
	}
	// Ids at different places cannot be told apart: refused, as perf does.
	if _, err := NewSampleFormat(Attr{SampleType: withID}, Attr{SampleType: withID | SampleAddr}); err == nil {
		t.Error("different id positions accepted")
	}
	if _, err := NewSampleFormat(Attr{SampleType: SampleIP}, Attr{SampleType: SampleIP}); err == nil {
		t.Error("two events without ids accepted")
	}
}

func TestDecodeKernelRecords(t *testing.T) {
	st := SampleTID | SampleTime | SampleCPU | SampleIdentifier
	f, _ := NewSampleFormat(Attr{SampleType: st | SampleIP, Flags: FlagSampleIDAll})
	tr := Trailer{Present: st, PID: 7, TID: 8, Time: 99, CPU: 2, Identifier: 0}
	body := func(b []byte) []byte { return appendTrailer(b, st, &tr) }
	u32s := func(v ...uint32) []byte {
		var b []byte
		for _, x := range v {
			b = lee.AppendUint32(b, x)
		}
		return b
	}
	u64s := func(b []byte, v ...uint64) []byte {
		for _, x := range v {
			b = lee.AppendUint64(b, x)
		}
		return b
	}
	buildID := append(append([]byte{4, 0, 0, 0}, 0xde, 0xad, 0xbe, 0xef), make([]byte, 16)...)
	for _, tc := range []struct {
		name string
		raw  []byte
		want Record
	}{
		{"mmap", rec(RecordMmap, MiscUser, body(cstr(u64s(u32s(7, 8), 0x400000, 0x1000, 0), "/bin/ls"))),
			&Mmap{PID: 7, TID: 8, Addr: 0x400000, Len: 0x1000, Filename: "/bin/ls"}},
		{"mmap2", rec(RecordMmap2, MiscUser, body(cstr(append(u64s(append(u64s(u32s(7, 8), 0x400000, 0x1000, 0x200), u32s(8, 1)...), 1234, 1), u32s(5, 2)...), "/bin/ls"))),
			&Mmap2{PID: 7, TID: 8, Addr: 0x400000, Len: 0x1000, PgOff: 0x200, Maj: 8, Min: 1, Ino: 1234, InoGeneration: 1, Prot: 5, Flags: 2, Filename: "/bin/ls"}},
		{"mmap2 build-id", rec(RecordMmap2, MiscUser|MiscMmapBuildID, body(cstr(append(append(u64s(u32s(7, 8), 0x400000, 0x1000, 0), buildID...), u32s(5, 2)...), "/bin/ls"))),
			&Mmap2{PID: 7, TID: 8, Addr: 0x400000, Len: 0x1000, BuildID: []byte{0xde, 0xad, 0xbe, 0xef}, Prot: 5, Flags: 2, Filename: "/bin/ls"}},
		{"comm exec", rec(RecordComm, MiscCommExec, body(cstr(u32s(7, 8), "sort"))), &Comm{PID: 7, TID: 8, Comm: "sort"}},
		{"fork", rec(RecordFork, 0, body(u64s(u32s(9, 7, 9, 8), 50))), &Fork{PID: 9, PPID: 7, TID: 9, PTID: 8, Time: 50}},
		{"exit", rec(RecordExit, 0, body(u64s(u32s(9, 7, 9, 8), 60))), &Fork{PID: 9, PPID: 7, TID: 9, PTID: 8, Time: 60}},
		{"lost", rec(RecordLost, 0, body(u64s(nil, 3, 17))), &Lost{ID: 3, Lost: 17}},
		{"lost samples", rec(RecordLostSamples, 0, body(u64s(nil, 5))), &LostSamples{Lost: 5}},
		{"throttle", rec(RecordThrottle, 0, body(u64s(nil, 70, 3, 4))), &Throttle{Time: 70, ID: 3, StreamID: 4}},
		{"unthrottle", rec(RecordUnthrottle, 0, body(u64s(nil, 71, 3, 4))), &Throttle{Time: 71, ID: 3, StreamID: 4}},
		{"read", rec(RecordRead, 0, body(u64s(u32s(7, 8), 12345))), &Read{PID: 7, TID: 8, Values: ReadValues{Values: []ReadValue{{Value: 12345}}}}},
		{"switch out", rec(RecordSwitch, MiscSwitchOut, body(nil)), &Switch{}},
		{"switch cpu wide", rec(RecordSwitchCPUWide, 0, body(u32s(11, 12))), &SwitchCPUWide{NextPrevPID: 11, NextPrevTID: 12}},
		{"namespaces", rec(RecordNamespaces, 0, body(u64s(u32s(7, 8), 2, 1, 0xf0000001, 1, 0xf0000002))),
			&Namespaces{PID: 7, TID: 8, Links: []NamespaceLink{{1, 0xf0000001}, {1, 0xf0000002}}}},
		{"ksymbol", rec(RecordKsymbol, 0, body(cstr(append(u64s(nil, 0xffffffffc0000000), u32s(4096, 1)...), "bpf_prog_x"))),
			&Ksymbol{Addr: 0xffffffffc0000000, Len: 4096, KsymType: 1, Name: "bpf_prog_x"}},
		{"bpf event", rec(RecordBPFEvent, 0, body(append(u32s(1, 42), 1, 2, 3, 4, 5, 6, 7, 8))),
			&BPFEvent{EventType: 1, ID: 42, Tag: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}},
		{"cgroup", rec(RecordCgroup, 0, body(cstr(u64s(nil, 3), "/user.slice"))), &Cgroup{ID: 3, Path: "/user.slice"}},
		{"text poke", rec(RecordTextPoke, 0, body(append(u64s(nil, 0xffffffff81000000), 2, 0, 1, 0, 0x90, 0x90, 0xcc, 0, 0, 0, 0, 0))),
			&TextPoke{Addr: 0xffffffff81000000, Old: []byte{0x90, 0x90}, New: []byte{0xcc}}},
		{"aux", rec(RecordAux, 0, body(u64s(nil, 0x1000, 0x800, 1))), &Aux{AuxOffset: 0x1000, AuxSize: 0x800, Flags: 1}},
		{"itrace start", rec(RecordItraceStart, 0, body(u32s(7, 8))), &ItraceStart{PID: 7, TID: 8}},
		{"aux output hw id", rec(RecordAuxOutputHWID, 0, body(u64s(nil, 6))), &AuxOutputHWID{HWID: 6}},
	} {
		got, err := f.Decode(tc.raw)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		// Fill in the header and trailer the table leaves out.
		want := reflect.ValueOf(tc.want).Elem()
		h, _ := ParseHeader(tc.raw)
		want.FieldByName("RecordHeader").Set(reflect.ValueOf(h))
		if tf := want.FieldByName("Trailer"); tf.IsValid() {
			tf.Set(reflect.ValueOf(tr))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
		if tm, ok := f.Time(tc.raw); !ok || tm != 99 {
			t.Errorf("%s: Time %d %v", tc.name, tm, ok)
		}
		// Cut records fail with a DecodeError, never a panic.
		for n := 8; n < len(tc.raw); n += 4 {
			short := append([]byte(nil), tc.raw[:n]...)
			lee.PutUint16(short[6:], uint16(n))
			if _, err := f.Decode(short); err != nil && !errors.As(err, new(*DecodeError)) {
				t.Errorf("%s cut at %d: %v", tc.name, n, err)
			}
		}
	}
	if r, _ := f.Decode(rec(RecordComm, MiscCommExec, body(cstr(u32s(7, 8), "sort")))); !r.(*Comm).Exec() {
		t.Error("comm exec flag")
	}
	if r, _ := f.Decode(rec(RecordType(30), 0, []byte("12345678"))); r.(*Unknown).Type != 30 {
		t.Error("unknown kernel record")
	}
}

func TestDecodeUserRecords(t *testing.T) {
	u64s := func(v ...uint64) []byte {
		var b []byte
		for _, x := range v {
			b = lee.AppendUint64(b, x)
		}
		return b
	}
	attr136 := (&Attr{Type: TypeHardware, Size: AttrSizeVer8, SampleType: SampleIP, Config3: 7}).Marshal()
	attr64 := (&Attr{Type: TypeSoftware, Size: AttrSizeVer0, SampleType: SampleIP | SampleTID}).Marshal()
	attrBig := append((&Attr{Type: TypeRaw, Size: 160, Config: 0x1c4}).Marshal(), 0)[:160]
	bid := append(append(lee.AppendUint32(nil, uint32(0xffffffff)), 0xab, 0xcd), make([]byte, 18)...)
	bid = append(bid, 2, 0, 0, 0)
	bidRec := cstr(bid, "/usr/lib/libc.so.6")
	for _, tc := range []struct {
		name  string
		raw   []byte
		check func(Record) bool
	}{
		{"attr 136 bytes (perf 6.3+) with ids", rec(RecordHeaderAttr, 0, append(attr136, u64s(5, 6)...)), func(r Record) bool {
			m := r.(*HeaderAttr)
			return m.Attr.Config3 == 7 && reflect.DeepEqual(m.IDs, []uint64{5, 6})
		}},
		{"attr 64 bytes (oldest)", rec(RecordHeaderAttr, 0, append(attr64, u64s(9)...)), func(r Record) bool {
			m := r.(*HeaderAttr)
			return m.Attr.SampleType == SampleIP|SampleTID && reflect.DeepEqual(m.IDs, []uint64{9})
		}},
		{"attr of 160 bytes, newer than known", rec(RecordHeaderAttr, 0, append(attrBig, u64s(1)...)), func(r Record) bool {
			m := r.(*HeaderAttr)
			return m.Attr.Config == 0x1c4 && m.Attr.Size == 160 && reflect.DeepEqual(m.IDs, []uint64{1})
		}},
		{"event type", rec(RecordHeaderEventType, 0, append(u64s(33), cstr(make([]byte, 0, 64), "sched:sched_switch")[:64]...)), func(r Record) bool {
			m := r.(*HeaderEventType)
			return m.EventID == 33 && m.Name == "sched:sched_switch"
		}},
		{"tracing data", rec(RecordHeaderTracing, 0, lee.AppendUint32(lee.AppendUint32(nil, 4096), 0)), func(r Record) bool { return r.(*HeaderTracingData).Size == 4096 }},
		{"build id with size", rec(RecordHeaderBuildID, MiscBuildIDSize|MiscUser, bidRec), func(r Record) bool {
			m := r.(*HeaderBuildID)
			return m.PID == -1 && string(m.BuildID) == "\xab\xcd" && m.Filename == "/usr/lib/libc.so.6"
		}},
		{"finished round", rec(RecordFinishedRound, 0, nil), func(r Record) bool { _, ok := r.(*FinishedRound); return ok }},
		{"finished init", rec(RecordFinishedInit, 0, nil), func(r Record) bool { _, ok := r.(*FinishedInit); return ok }},
		{"id index", rec(RecordIDIndex, 0, u64s(2, 10, 0, 0, 100, 11, 1, 1, 101)), func(r Record) bool {
			m := r.(*IDIndex)
			return len(m.Entries) == 2 && m.Entries[1] == IDIndexEntry{11, 1, 1, 101}
		}},
		{"auxtrace info", rec(RecordAuxtraceInfo, 0, append(lee.AppendUint32(lee.AppendUint32(nil, 1), 0), u64s(4, 5)...)), func(r Record) bool {
			m := r.(*AuxtraceInfo)
			return m.AuxType == 1 && len(m.Priv) == 2
		}},
		{"auxtrace", rec(RecordAuxtrace, 0, append(u64s(0x1000, 0, 7), 0, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0)), func(r Record) bool {
			m := r.(*Auxtrace)
			return m.Size == 0x1000 && m.Reference == 7 && m.TID == 5 && m.CPU == 2
		}},
		{"thread map", rec(RecordThreadMap, 0, append(u64s(1, 42), cstr(nil, "worker-thread12")...)), func(r Record) bool {
			m := r.(*ThreadMap)
			return len(m.Entries) == 1 && m.Entries[0] == ThreadMapEntry{42, "worker-thread12"}
		}},
		{"cpu map list", rec(RecordCPUMap, 0, []byte{0, 0, 3, 0, 0, 0, 2, 0, 5, 0, 0, 0, 0, 0, 0, 0}), func(r Record) bool {
			return reflect.DeepEqual(r.(*CPUMap).CPUs, []uint32{0, 2, 5})
		}},
		{"cpu map mask32", rec(RecordCPUMap, 0, []byte{1, 0, 1, 0, 4, 0, 0x0b, 0, 0, 0, 0, 0, 0, 0, 0, 0}), func(r Record) bool {
			return reflect.DeepEqual(r.(*CPUMap).CPUs, []uint32{0, 1, 3})
		}},
		{"cpu map mask64", rec(RecordCPUMap, 0, append([]byte{1, 0, 1, 0, 8, 0, 0, 0, 0, 0}, 0x06, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0)), func(r Record) bool {
			return reflect.DeepEqual(r.(*CPUMap).CPUs, []uint32{1, 2, 63})
		}},
		{"cpu map range", rec(RecordCPUMap, 0, []byte{2, 0, 1, 0, 4, 0, 6, 0}), func(r Record) bool {
			m := r.(*CPUMap)
			return m.Any && reflect.DeepEqual(m.CPUs, []uint32{4, 5, 6})
		}},
		{"stat config", rec(RecordStatConfig, 0, u64s(1, 2, 3)), func(r Record) bool { return r.(*StatConfig).Entries[0] == StatConfigEntry{2, 3} }},
		{"stat", rec(RecordStat, 0, append(u64s(5), append([]byte{1, 0, 0, 0, 2, 0, 0, 0}, u64s(10, 20, 30)...)...)), func(r Record) bool {
			m := r.(*Stat)
			return m.ID == 5 && m.CPU == 1 && m.Thread == 2 && m.Run == 30
		}},
		{"stat round", rec(RecordStatRound, 0, u64s(1, 99)), func(r Record) bool { return r.(*StatRound).Time == 99 }},
		{"event update name", rec(RecordEventUpdate, 0, cstr(u64s(EventUpdateName, 76), "cycles:u")), func(r Record) bool {
			m := r.(*EventUpdate)
			return m.ID == 76 && m.Name == "cycles:u"
		}},
		{"event update scale", rec(RecordEventUpdate, 0, u64s(EventUpdateScale, 1, math.Float64bits(0.5))), func(r Record) bool { return r.(*EventUpdate).Scale == 0.5 }},
		{"time conv (old)", rec(RecordTimeConv, 0, u64s(31, 5, 100)), func(r Record) bool {
			m := r.(*TimeConv)
			return m.TimeShift == 31 && m.TimeZero == 100 && !m.Full
		}},
		{"time conv (5.10+)", rec(RecordTimeConv, 0, append(u64s(31, 5, 100, 7, 0xff), 1, 1, 0, 0, 0, 0, 0, 0)), func(r Record) bool {
			m := r.(*TimeConv)
			return m.Full && m.TimeMask == 0xff && m.CapUserTimeZero && m.CapUserTimeShort
		}},
		{"feature", rec(RecordHeaderFeature, 0, append(u64s(3), "host"...)), func(r Record) bool {
			m := r.(*HeaderFeature)
			return m.FeatID == 3 && string(m.Data) == "host"
		}},
		{"compressed", rec(RecordCompressed, 0, []byte("zstd....")), func(r Record) bool { return string(r.(*Compressed).Data) == "zstd...." }},
		{"compressed2", rec(RecordCompressed2, 0, append(u64s(5), "zstd\x01\x00\x00\x00"...)), func(r Record) bool { return string(r.(*Compressed).Data) == "zstd\x01" }},
		{"unknown type 99", rec(RecordType(99), 0, []byte("whatever")), func(r Record) bool { return string(r.(*Unknown).Data) == "whatever" }},
	} {
		got, err := (*SampleFormat)(nil).Decode(tc.raw)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !tc.check(got) {
			t.Errorf("%s: %+v", tc.name, got)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	f, _ := NewSampleFormat(Attr{SampleType: SampleIP | SampleCallchain | SampleBranchStack})
	huge := rec(RecordSample, 0, append(lee.AppendUint64(nil, 1), lee.AppendUint64(nil, 1<<40)...))
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"short header", "\x09\x00\x00", "header"},
		{"size field disagrees", string(rec(RecordSample, 0, make([]byte, 8))[:12]), "size"},
		{"callchain nr too large", string(huge), "callchain nr at byte 16: 1099511627776 entries"},
	} {
		_, err := f.Decode([]byte(tc.raw))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	var s Sample
	err := f.DecodeSample(rec(RecordSample, 0, lee.AppendUint64(nil, 1)), &s)
	if !errors.Is(err, ErrShortRecord) || !strings.Contains(err.Error(), "callchain nr at byte 16") {
		t.Errorf("short sample: %v", err)
	}
	if err := f.DecodeSample(rec(RecordMmap, 0, nil), &s); err == nil {
		t.Error("DecodeSample accepted an MMAP")
	}
}

func BenchmarkDecodeSample(b *testing.B) {
	for _, name := range []string{"perf record -g", "lbr hw_index (5.7+)", "raw+callchain+branch (3.4)"} {
		a := sampleLayouts()[name]
		f, _ := NewSampleFormat(a)
		s := fullSample(&a)
		s.Callchain = make([]uint64, 64)
		s.Branches = make([]BranchEntry, 32)
		raw := appendSample(&a, &s)
		b.Run(strings.Fields(name)[0], func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			var got Sample
			for b.Loop() {
				if err := f.DecodeSample(raw, &got); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSampleFormatClone: what is added to a format after Clone is not in
// the clone, which still resolves and decodes as before.
func TestSampleFormatClone(t *testing.T) {
	a := Attr{SampleType: SampleIdentifier | SampleIP | SampleTID | SampleTime}
	f, err := NewSampleFormat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add(a, []uint64{7}); err != nil {
		t.Fatal(err)
	}
	c := f.Clone()
	if _, err := f.Add(a, []uint64{9}); err != nil {
		t.Fatal(err)
	}
	f.AddIDs(0, []uint64{11})
	if c.Len() != 1 || f.Len() != 2 {
		t.Fatalf("clone has %d events, format %d; want 1 and 2", c.Len(), f.Len())
	}
	for id, want := range map[uint64]bool{7: true, 9: false, 11: false} {
		if _, ok := c.EventOfID(id); ok != want {
			t.Errorf("clone knows id %d: %v, want %v", id, ok, want)
		}
	}
	if i, ok := f.EventOfID(9); !ok || i != 1 {
		t.Errorf("format: id 9 is event %d (%v), want 1", i, ok)
	}
}

// checkLayout checks that SampleLayout's offsets read what DecodeSample
// decodes.
func checkLayout(t *testing.T, f *SampleFormat, a *Attr, raw []byte, want *Sample) {
	t.Helper()
	_, l, err := f.Layout(raw)
	if err != nil {
		t.Fatal(err)
	}
	st := a.SampleType
	at := func(field string, off int, bit SampleType, want uint64) {
		if (off >= 0) != (st&bit != 0) {
			t.Errorf("layout %s at %d, sample_type %v", field, off, st)
			return
		}
		if off >= 0 && lee.Uint64(raw[off:]) != want {
			t.Errorf("layout %s at %d reads %#x, want %#x", field, off, lee.Uint64(raw[off:]), want)
		}
	}
	at("ip", l.IP, SampleIP, want.IP)
	at("tid", l.TID, SampleTID, uint64(want.TID)<<32|uint64(want.PID))
	at("time", l.Time, SampleTime, want.Time)
	at("period", l.Period, SamplePeriod, want.Period)
	switch {
	case st&SampleCallchain == 0 || st&SampleRead != 0:
		if l.Callchain >= 0 {
			t.Errorf("layout callchain at %d, sample_type %v", l.Callchain, st)
		}
	case l.Callchain < 0:
		t.Errorf("layout has no callchain, sample_type %v", st)
	default:
		n := int(lee.Uint64(raw[l.Callchain:]))
		if n != len(want.Callchain) {
			t.Fatalf("layout callchain nr %d, want %d", n, len(want.Callchain))
		}
		for i, w := range want.Callchain {
			if g := lee.Uint64(raw[l.Callchain+8+8*i:]); g != w {
				t.Errorf("layout callchain[%d] %#x, want %#x", i, g, w)
			}
		}
	}
}
