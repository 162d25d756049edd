package unwind

import (
	"slices"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// LBR call-stack samples are synthetic: no machine here has LBR.
func TestAppendLBR(t *testing.T) {
	// main (0x401000..) calls a at 0x401050; a calls b at 0x402020; b calls
	// c at 0x403030; the sample is in c at 0x404044.
	calls := []perf.BranchEntry{
		{From: 0x403030, To: 0x404000}, // newest: b → c
		{From: 0x402020, To: 0x403000}, // a → b
		{From: 0x401050, To: 0x402000}, // main → a
	}
	tests := []struct {
		name     string
		mode     uint16
		ip       uint64
		chain    []uint64
		branches []perf.BranchEntry
		want     []want
	}{
		{
			name: "user sample: IP then the call sites", mode: perf.MiscUser, ip: 0x404044,
			chain:    []uint64{perf.ContextUser, 0x404044, 0x403035},
			branches: calls,
			want: []want{
				{0x404044, FrameIP, false, 0x403044},
				{0x403030, FrameCallSite, false, 0x402030},
				{0x402020, FrameCallSite, false, 0x401020},
				{0x401050, FrameCallSite, false, 0x400050},
			},
		},
		{
			name: "kernel sample: kernel frames, then the user IP from the callchain, then the call sites",
			mode: perf.MiscKernel, ip: kIP,
			chain:    []uint64{perf.ContextKernel, kIP, kRA1, perf.ContextUser, 0x404044, 0x403035},
			branches: calls,
			want: []want{
				{kIP, FrameIP, true, kIP},
				{kRA1, FrameReturn, true, kRA1},
				{0x404044, FrameIP, false, 0x403044},
				{0x403030, FrameCallSite, false, 0x402030},
				{0x402020, FrameCallSite, false, 0x401020},
				{0x401050, FrameCallSite, false, 0x400050},
			},
		},
		{
			name: "kernel sample without a user callchain: the newest call's target stands for the leaf",
			mode: perf.MiscKernel, ip: kIP,
			chain:    []uint64{perf.ContextKernel, kIP},
			branches: calls[:1],
			want: []want{
				{kIP, FrameIP, true, kIP},
				{0x404000, FrameIP, false, 0x403000},
				{0x403030, FrameCallSite, false, 0x402030},
			},
		},
		{
			name: "empty branch stack: the IP alone", mode: perf.MiscUser, ip: 0x404044,
			chain: []uint64{perf.ContextUser, 0x404044},
			want:  []want{{0x404044, FrameIP, false, 0x403044}},
		},
		{
			name: "zeroed entries end the stack", mode: perf.MiscUser, ip: 0x404044,
			chain:    []uint64{perf.ContextUser, 0x404044},
			branches: []perf.BranchEntry{calls[0], {}, {}},
			want: []want{
				{0x404044, FrameIP, false, 0x403044},
				{0x403030, FrameCallSite, false, 0x402030},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &perf.Sample{RecordHeader: perf.RecordHeader{Type: perf.RecordSample, Misc: tt.mode},
				Present: perf.SampleIP | perf.SampleTID | perf.SampleCallchain | perf.SampleBranchStack,
				IP:      tt.ip, PID: 1, TID: 1, Callchain: tt.chain}
			s.Branches = tt.branches
			frames := AppendLBR(nil, s, fakeMaps{})
			if g := got(frames); !slices.Equal(g, tt.want) {
				t.Errorf("frames\n got %+v\nwant %+v", g, tt.want)
			}
			u := New(Options{Method: MethodLBR})
			if f2, stop := u.Unwind(s, fakeMaps{}); !slices.Equal(got(f2), tt.want) || stop != StopChainEnd {
				t.Errorf("Unwind with MethodLBR differs from AppendLBR (stop %v)", stop)
			}
		})
	}
}

func TestMethodFor(t *testing.T) {
	tests := []struct {
		name string
		attr perf.Attr
		want Method
	}{
		{"--call-graph lbr", perf.Attr{SampleType: perf.SampleIP | perf.SampleCallchain | perf.SampleBranchStack,
			BranchSampleType: perf.BranchUser | perf.BranchCallStack}, MethodLBR},
		{"-j any_call with a callchain is not a call stack", perf.Attr{SampleType: perf.SampleIP | perf.SampleCallchain | perf.SampleBranchStack,
			BranchSampleType: perf.BranchUser | perf.BranchAnyCall}, MethodFP},
		{"--call-graph dwarf", perf.Attr{SampleType: perf.SampleIP | perf.SampleCallchain | perf.SampleRegsUser | perf.SampleStackUser,
			Flags: perf.FlagExcludeCallchainUser}, MethodDWARF},
		{"dwarf without a callchain", perf.Attr{SampleType: perf.SampleIP | perf.SampleRegsUser | perf.SampleStackUser}, MethodDWARF},
		{"fp with a leaf stack copy", perf.Attr{SampleType: perf.SampleIP | perf.SampleCallchain | perf.SampleRegsUser | perf.SampleStackUser}, MethodFP},
		{"--call-graph fp", perf.Attr{SampleType: perf.SampleIP | perf.SampleCallchain}, MethodFP},
		{"no stacks", perf.Attr{SampleType: perf.SampleIP}, MethodAuto},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if g := MethodFor(&tt.attr); g != tt.want {
				t.Errorf("MethodFor = %v, want %v", g, tt.want)
			}
		})
	}
}
