package unwind

import (
	"encoding/binary"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/regnum"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
)

// stackOf lays out 8-byte words from sp0 up.
func stackOf(sp0 uint64, words ...uint64) *stack {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return &stack{sp0: sp0, data: b}
}

func regsOf(pairs ...uint64) *regs {
	var r regs
	for i := 0; i+1 < len(pairs); i += 2 {
		r.v[pairs[i]], r.known[pairs[i]] = pairs[i+1], true
	}
	return &r
}

const (
	rsp = regnum.AMD64_Rsp
	rbp = regnum.AMD64_Rbp
	rbx = regnum.AMD64_Rbx
	rip = regnum.AMD64_Rip
)

// pltCFA is the CFA expression GNU ld writes for .plt entries:
// rsp + 8 + ((rip & 15) >= 11 ? 8 : 0).
var pltCFA = []byte{0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}

func rowWith(cfa rule, set map[int]rule) *row {
	r := &row{cfa: cfa, ra: rip}
	for i, ru := range set {
		r.regs[i] = ru
	}
	return r.index() // as establish leaves its rows
}

func TestStep(t *testing.T) {
	const sp = 0x7ffd0000
	raAtCFAm8 := rule{kind: ruleOffset, off: -8}
	tests := []struct {
		name    string
		cur     *regs
		row     *row
		st      *stack
		stop    *StopReason
		wantRIP uint64
		wantRSP uint64
		wantRBP uint64
		wantRBX uint64
	}{
		{
			name:    "function without a frame pointer: CFA = rsp+8, return address at CFA-8",
			cur:     regsOf(rip, 0x401010, rsp, sp, rbp, 0x1234),
			row:     rowWith(rule{kind: ruleCFA, reg: rsp, off: 8}, map[int]rule{rip: raAtCFAm8}),
			st:      stackOf(sp, 0x402005),
			wantRIP: 0x402005, wantRSP: sp + 8, wantRBP: 0x1234,
		},
		{
			name: "frame-pointer function: CFA = rbp+16, rbp saved at CFA-16",
			cur:  regsOf(rip, 0x401010, rsp, sp, rbp, sp+0x20),
			row: rowWith(rule{kind: ruleCFA, reg: rbp, off: 16},
				map[int]rule{rip: raAtCFAm8, rbp: {kind: ruleOffset, off: -16}}),
			st:      stackOf(sp, 0, 0, 0, 0, sp+0x80, 0x402005),
			wantRIP: 0x402005, wantRSP: sp + 0x30, wantRBP: sp + 0x80,
		},
		{
			name:    "PLT entry before the push: CFA expression gives rsp+8",
			cur:     regsOf(rip, 0x401026, rsp, sp),
			row:     rowWith(rule{kind: ruleCFAExpression, expr: pltCFA}, map[int]rule{rip: raAtCFAm8}),
			st:      stackOf(sp, 0x402005, 0x999),
			wantRIP: 0x402005, wantRSP: sp + 8,
		},
		{
			name:    "PLT entry after the push (rip&15 >= 11): CFA expression gives rsp+16",
			cur:     regsOf(rip, 0x40102b, rsp, sp),
			row:     rowWith(rule{kind: ruleCFAExpression, expr: pltCFA}, map[int]rule{rip: raAtCFAm8}),
			st:      stackOf(sp, 0x777, 0x402005),
			wantRIP: 0x402005, wantRSP: sp + 16,
		},
		{
			name: "register saved at an expression address (CFA pushed first): CFA-8",
			cur:  regsOf(rip, 0x401010, rsp, sp),
			row: rowWith(rule{kind: ruleCFA, reg: rsp, off: 16},
				map[int]rule{rip: raAtCFAm8, rbx: {kind: ruleExpression, expr: []byte{0x10, 0x10, 0x1c}}}),
			st:      stackOf(sp, 0xb0b, 0x402005),
			wantRIP: 0x402005, wantRSP: sp + 16, wantRBX: 0xb0b,
		},
		{
			name: "value rules: val_offset and register",
			cur:  regsOf(rip, 0x401010, rsp, sp, rbx, 0xabc),
			row: rowWith(rule{kind: ruleCFA, reg: rsp, off: 8},
				map[int]rule{rip: raAtCFAm8, rbp: {kind: ruleValOffset, off: -100}, rbx: {kind: ruleRegister, reg: rbx}}),
			st:      stackOf(sp, 0x402005),
			wantRIP: 0x402005, wantRSP: sp + 8, wantRBP: sp + 8 - 100, wantRBX: 0xabc,
		},
		{
			name: "return address undefined: the outermost frame (_start, clone)",
			cur:  regsOf(rip, 0x401010, rsp, sp),
			row:  rowWith(rule{kind: ruleCFA, reg: rsp, off: 8}, map[int]rule{rip: {kind: ruleUndefined}}),
			st:   stackOf(sp, 0x402005),
			stop: ptr(StopOutermost),
		},
		{
			name: "return address beyond the stack copy",
			cur:  regsOf(rip, 0x401010, rsp, sp),
			row:  rowWith(rule{kind: ruleCFA, reg: rsp, off: 64}, map[int]rule{rip: raAtCFAm8}),
			st:   stackOf(sp, 0x402005),
			stop: ptr(StopStackEnd),
		},
		{
			name: "zero return address",
			cur:  regsOf(rip, 0x401010, rsp, sp),
			row:  rowWith(rule{kind: ruleCFA, reg: rsp, off: 8}, map[int]rule{rip: raAtCFAm8}),
			st:   stackOf(sp, 0),
			stop: ptr(StopZeroReturn),
		},
		{
			name: "CFA from a register whose value is unknown",
			cur:  regsOf(rip, 0x401010, rsp, sp),
			row:  rowWith(rule{kind: ruleCFA, reg: rbp, off: 16}, map[int]rule{rip: raAtCFAm8}),
			st:   stackOf(sp, 0x402005),
			stop: ptr(StopBadCFI),
		},
		{
			name: "malformed CFA expression",
			cur:  regsOf(rip, 0x401010, rsp, sp),
			row:  rowWith(rule{kind: ruleCFAExpression, expr: []byte{0x22}}, map[int]rule{rip: raAtCFAm8}),
			st:   stackOf(sp, 0x402005),
			stop: ptr(StopBadCFI),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, stop := step(tt.cur, tt.row, tt.st)
			if (stop == nil) != (tt.stop == nil) || (stop != nil && *stop != *tt.stop) {
				t.Fatalf("stop = %v, want %v", deref(stop), deref(tt.stop))
			}
			if stop != nil {
				return
			}
			if next.v[rip] != tt.wantRIP || next.v[rsp] != tt.wantRSP || (tt.wantRBP != 0 && next.v[rbp] != tt.wantRBP) {
				t.Errorf("caller rip %#x rsp %#x rbp %#x; want %#x %#x %#x", next.v[rip], next.v[rsp], next.v[rbp], tt.wantRIP, tt.wantRSP, tt.wantRBP)
			}
			if tt.wantRBX != 0 && (next.v[rbx] != tt.wantRBX || !next.known[rbx]) {
				t.Errorf("caller rbx %#x (known %v), want %#x", next.v[rbx], next.known[rbx], tt.wantRBX)
			}
		})
	}
}

func ptr(s StopReason) *StopReason { return &s }

func deref(s *StopReason) string {
	if s == nil {
		return "none"
	}
	return s.String()
}

// TestFramePointerFallback unwinds a JIT frame (no object file, no CFI)
// through its frame pointer when asked to, and stops there otherwise.
func TestFramePointerFallback(t *testing.T) {
	const sp = 0x7ffd0000
	// JIT code at 0x20001000 (unmapped for fakeMaps: no object), its frame:
	// [rbp] = caller's rbp, [rbp+8] = return address 0x20002005, also JIT.
	// The caller's frame: [rbp2] = 0, [rbp2+8] = 0 (end).
	st := []uint64{0, 0, sp + 0x20, 0x20002005, 0, 0, 0, 0, 0, 0}
	words := make([]byte, 8*len(st))
	for i, w := range st {
		binary.LittleEndian.PutUint64(words[8*i:], w)
	}
	regs := make([]uint64, 20)
	regs[6], regs[7], regs[8] = sp+0x10, sp, 0x20001000 // BP, SP, IP in mask order
	s := &perf.Sample{RecordHeader: perf.RecordHeader{Type: perf.RecordSample, Misc: perf.MiscUser},
		Present: perf.SampleIP | perf.SampleTID | perf.SampleRegsUser | perf.SampleStackUser, IP: 0x20001000,
		RegsUser:  perf.Regs{ABI: 2, Mask: perf.RegsUserX86_64, Values: regs},
		StackUser: perf.StackUser{Data: words, DynSize: uint64(len(words))}}
	jit := jitMaps{}
	frames, stop := New(Options{}).Unwind(s, jit)
	if len(frames) != 1 || stop != StopNoObject {
		t.Errorf("without the fallback: %d frames, %v; want 1, %v", len(frames), stop, StopNoObject)
	}
	frames, stop = New(Options{FramePointerFallback: true}).Unwind(s, jit)
	if len(frames) != 2 || frames[1].Addr != 0x20002005 || frames[1].Kind != FrameReturn || stop != StopZeroReturn {
		t.Errorf("with the fallback: %+v, %v; want the JIT caller at 0x20002005, then %v", frames, stop, StopZeroReturn)
	}
}

// jitMaps maps [0x20000000, 0x30000000) as anonymous executable memory.
type jitMaps struct{}

var jitObj = &addrspace.Object{Path: "//anon", Kind: addrspace.KindJIT}

func (jitMaps) Lookup(pid, tid uint32, t uint64, a addrspace.Addr) (addrspace.Mapping, addrspace.ObjAddr, bool) {
	if m := (addrspace.Mapping{Start: 0x20000000, End: 0x30000000, Object: jitObj}); m.Contains(a) {
		return m, m.ObjAddr(a, nil), true
	}
	return addrspace.Mapping{}, 0, false
}
