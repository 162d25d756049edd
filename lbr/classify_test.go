package lbr_test

import (
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
)

func TestDecodeKind(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		want lbr.Kind
	}{
		{"call rel32", []byte{0xe8, 0x10, 0x00, 0x00, 0x00}, lbr.KindCall},
		{"call *%rax", []byte{0xff, 0xd0}, lbr.KindIndCall},
		{"call *0x8(%rip) (PLT-less call through GOT)", []byte{0xff, 0x15, 0x08, 0, 0, 0}, lbr.KindIndCall},
		{"call *0x10(%rbx) (virtual call)", []byte{0xff, 0x53, 0x10}, lbr.KindIndCall},
		{"call *%r11 (REX.B)", []byte{0x41, 0xff, 0xd3}, lbr.KindIndCall},
		{"notrack call *%rax (CET)", []byte{0x3e, 0xff, 0xd0}, lbr.KindIndCall},
		{"bnd call rel32 (MPX prefix)", []byte{0xf2, 0xe8, 0, 0, 0, 0}, lbr.KindCall},
		{"lcall *(%rax) (far)", []byte{0xff, 0x18}, lbr.KindIndCall},
		{"jmp rel32 (tail call: not a call)", []byte{0xe9, 0, 0, 0, 0}, lbr.KindOther},
		{"jmp *%rax", []byte{0xff, 0xe0}, lbr.KindOther},
		{"jne rel8", []byte{0x75, 0x05}, lbr.KindOther},
		{"ret", []byte{0xc3}, lbr.KindOther},
		{"syscall", []byte{0x0f, 0x05}, lbr.KindOther},
		{"truncated call rel32", []byte{0xe8, 0x10}, lbr.KindUnknown},
		{"no bytes", nil, lbr.KindUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lbr.DecodeKind(tt.code); got != tt.want {
				t.Errorf("DecodeKind(% x) = %v, want %v", tt.code, got, tt.want)
			}
		})
	}
}

// fakeCode serves fixed bytes per address and counts reads.
type fakeCode struct {
	code  map[addrspace.Addr][]byte
	reads int
}

func (f *fakeCode) Code(pid uint32, a addrspace.Addr) ([]byte, bool) {
	f.reads++
	b, ok := f.code[a]
	return b, ok
}

// flags builds perf_branch_entry flag words: mispred:1 predicted:1 in_tx:1
// abort:1 cycles:16 type:4 spec:2 new_type:4 priv:3.
func flags(mispred bool, cycles uint16, typ perf.BranchType, priv perf.BranchPriv) perf.BranchFlags {
	var f uint64
	if mispred {
		f |= 1
	} else {
		f |= 2
	}
	f |= uint64(cycles) << 4
	f |= uint64(typ&0xf) << 20
	f |= uint64(priv) << 30
	return perf.BranchFlags(f)
}

func TestClassify(t *testing.T) {
	code := &fakeCode{code: map[addrspace.Addr][]byte{
		0x401000: {0xe8, 0, 0, 0, 0}, // call rel32
		0x401010: {0xff, 0xd0},       // call *%rax
		0x401020: {0xc3},             // ret
		0x401030: {0xe9, 0, 0, 0, 0}, // jmp rel32
	}}
	tests := []struct {
		name  string
		saved bool
		e     perf.BranchEntry
		want  lbr.Kind
	}{
		{"direct call decoded", false, perf.BranchEntry{From: 0x401000, To: 0x402000}, lbr.KindCall},
		{"indirect call decoded", false, perf.BranchEntry{From: 0x401010, To: 0x402100}, lbr.KindIndCall},
		{"return decoded", false, perf.BranchEntry{From: 0x401020, To: 0x401005}, lbr.KindOther},
		{"tail jump decoded", false, perf.BranchEntry{From: 0x401030, To: 0x402200}, lbr.KindOther},
		{"object not mapped", false, perf.BranchEntry{From: 0x7f0000001000, To: 0x401000}, lbr.KindUnknown},
		{"kernel from (sysret)", false, perf.BranchEntry{From: 0xffffffff81000000, To: 0x401000}, lbr.KindKernel},
		{"kernel to (syscall)", false, perf.BranchEntry{From: 0x401000, To: 0xffffffff81000000}, lbr.KindKernel},
		{"kernel by priv", true, perf.BranchEntry{From: 0x401000, To: 0x402000, Flags: flags(false, 0, perf.BrCall, perf.BrPrivKernel)}, lbr.KindKernel},
		{"saved call over bytes of a jmp", true, perf.BranchEntry{From: 0x401030, To: 0x402000, Flags: flags(false, 0, perf.BrCall, perf.BrPrivUser)}, lbr.KindCall},
		{"saved indirect call, unmapped", true, perf.BranchEntry{From: 0x7f0000001000, To: 0x402000, Flags: flags(false, 0, perf.BrIndCall, perf.BrPrivUser)}, lbr.KindIndCall},
		{"saved return over bytes of a call", true, perf.BranchEntry{From: 0x401000, To: 0x402000, Flags: flags(false, 0, perf.BrRet, perf.BrPrivUser)}, lbr.KindOther},
		{"saved unknown falls back to decoding", true, perf.BranchEntry{From: 0x401010, To: 0x402000, Flags: flags(false, 0, perf.BrUnknown, perf.BrPrivUser)}, lbr.KindIndCall},
		{"type bits ignored without TYPE_SAVE", false, perf.BranchEntry{From: 0x401020, To: 0x402000, Flags: flags(false, 0, perf.BrCall, 0)}, lbr.KindOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := lbr.NewDecoder(code)
			d.SavedType = tt.saved
			if got := d.Classify(7, tt.e); got != tt.want {
				t.Errorf("Classify(%#x -> %#x) = %v, want %v", tt.e.From, tt.e.To, got, tt.want)
			}
		})
	}
}

func TestDecodeWindow(t *testing.T) {
	code := &fakeCode{code: map[addrspace.Addr][]byte{
		0x401000: {0xe8, 0, 0, 0, 0},
		0x401020: {0xc3},
	}}
	d := lbr.NewDecoder(code)
	window := []perf.BranchEntry{ // newest first
		{From: 0x401020, To: 0x401005},
		{From: 0xffffffff81000000, To: 0x401020},
		{From: 0x401000, To: 0x402000, Flags: flags(true, 12, 0, 0)},
		{From: 0x401000, To: 0x402000, Flags: flags(false, 3, 0, 0)},
	}
	calls := d.Decode(nil, 7, window)
	want := []lbr.Call{
		{Site: 0x401000, Callee: 0x402000, Kind: lbr.KindCall, Index: 2, Mispred: true, Cycles: 12},
		{Site: 0x401000, Callee: 0x402000, Kind: lbr.KindCall, Index: 3, Cycles: 3},
	}
	if len(calls) != len(want) {
		t.Fatalf("Decode = %+v, want %+v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("call %d = %+v, want %+v", i, calls[i], want[i])
		}
	}
	if d.MaxWindow() != 4 {
		t.Errorf("MaxWindow = %d, want 4", d.MaxWindow())
	}
	if code.reads != 2 || d.Decoded() != 2 {
		t.Errorf("reads %d, decoded %d: want one per distinct address (2)", code.reads, d.Decoded())
	}
	d.Decode(nil, 7, window)
	if code.reads != 2 {
		t.Errorf("second window read code again (%d reads): cache per address broken", code.reads)
	}
	d.Forget(7)
	d.Decode(nil, 7, window)
	if code.reads != 4 {
		t.Errorf("after Forget: %d reads, want 4", code.reads)
	}
	for k, n := range map[lbr.Kind]uint64{lbr.KindCall: 6, lbr.KindOther: 3, lbr.KindKernel: 3} {
		if d.Count(k) != n {
			t.Errorf("Count(%v) = %d, want %d", k, d.Count(k), n)
		}
	}
}

func TestEstimatorWeight(t *testing.T) {
	tests := []struct {
		name   string
		est    lbr.Estimator
		period uint64
		index  int
		want   float64
	}{
		{"every entry, P < D", lbr.Estimator{Depth: 32}, 8, 31, 0.25},
		{"every entry, P > D", lbr.Estimator{Depth: 16}, 1009, 0, 1009.0 / 16},
		{"every entry, beyond depth", lbr.Estimator{Depth: 16}, 1009, 16, 0},
		{"newest period, inside the newest P", lbr.Estimator{Depth: 32, Mode: lbr.NewestPeriod}, 8, 7, 1},
		{"newest period, older than P", lbr.Estimator{Depth: 32, Mode: lbr.NewestPeriod}, 8, 8, 0},
		{"newest period, P = D", lbr.Estimator{Depth: 32, Mode: lbr.NewestPeriod}, 32, 31, 1},
		{"newest period, P > D", lbr.Estimator{Depth: 32, Mode: lbr.NewestPeriod}, 64, 31, 2},
		{"no depth: appearances", lbr.Estimator{}, 64, 3, 1},
		{"no period: appearances", lbr.Estimator{Depth: 32}, 0, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.est.Weight(tt.period, tt.index); got != tt.want {
				t.Errorf("Weight(%d, %d) = %g, want %g", tt.period, tt.index, got, tt.want)
			}
		})
	}
}
