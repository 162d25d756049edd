package lbr

import (
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
)

// memCode is a CodeReader over a few byte regions of one process.
type memCode map[addrspace.Addr][]byte

func (m memCode) Code(pid uint32, addr addrspace.Addr) ([]byte, bool) {
	for base, b := range m {
		if addr >= base && addr < base+addrspace.Addr(len(b)) {
			off := addr - base
			return b[off:min(len(b), int(off)+MaxInstLen)], true
		}
	}
	return nil, false
}

// callsCode lays out a caller with four call sites, a callee and a
// grandparent calling the caller:
//
//	0x1000 caller:  0x1010 call 0x2000 (E8, 5 bytes, returns to 0x1015)
//	                0x1020 call *%rax (FF D0, returns to 0x1022)
//	                0x1030 call *0x8(%r12) (41 FF 54 24 08, returns to 0x1035)
//	                0x1040 call *0x100(%rip) (FF 15, 6 bytes, returns to 0x1046)
//	0x2000 callee:  push %rbp; mov %rsp,%rbp; ...
//	0x3000 grand:   call 0x1000 (returns to 0x3005)
func callsCode() memCode {
	caller := make([]byte, 0x50)
	for i := range caller {
		caller[i] = 0x90 // nop
	}
	copy(caller[0x10:], []byte{0xe8, 0xeb, 0x0f, 0x00, 0x00}) // 0x1015 + 0xfeb = 0x2000
	copy(caller[0x20:], []byte{0xff, 0xd0})
	copy(caller[0x30:], []byte{0x41, 0xff, 0x54, 0x24, 0x08})
	copy(caller[0x40:], []byte{0xff, 0x15, 0x00, 0x01, 0x00, 0x00})
	callee := []byte{0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x5d, 0xc3}
	grand := []byte{0xe8, 0xfb, 0xdf, 0xff, 0xff, 0xc3} // 0x3005 - 0x2005 = 0x1000
	return memCode{0x1000: caller, 0x2000: callee, 0x3000: grand}
}

func TestCallFromSample(t *testing.T) {
	code := callsCode()
	for _, tc := range []struct {
		name string
		s    CallSample
		code CodeReader
		want CallEdge
		ok   bool
	}{
		{"eventing ip, direct call", CallSample{IP: 0x1010, Meaning: IPCallInsn, Chain: []addrspace.Addr{0x2001, 0x3005}}, code,
			CallEdge{Site: 0x1010, Return: 0x1015, Callee: 0x2000, CalleeEntry: true, Kind: KindCall, SiteChecked: true}, true},
		{"eventing ip, indirect, callee's frame set up", CallSample{IP: 0x1020, Meaning: IPCallInsn, Chain: []addrspace.Addr{0x2008, 0x1022, 0x3005}}, code,
			CallEdge{Site: 0x1020, Return: 0x1022, Callee: 0x2008, Kind: KindIndCall}, true},
		{"eventing ip, indirect, callee deeper at the interrupt", CallSample{IP: 0x1030, Meaning: IPCallInsn, Chain: []addrspace.Addr{0x4444, 0x2010, 0x1035, 0x3005}}, code,
			CallEdge{Site: 0x1030, Return: 0x1035, Callee: 0x2010, Kind: KindIndCall}, true},
		{"eventing ip, indirect, before the callee's prologue", CallSample{IP: 0x1020, Meaning: IPCallInsn, Chain: []addrspace.Addr{0x2001, 0x3005}}, code,
			CallEdge{Site: 0x1020, Return: 0x1022, Kind: KindIndCall}, true},
		{"eventing ip that is no call", CallSample{IP: 0x1000, Meaning: IPCallInsn}, code, CallEdge{}, false},
		{"eventing ip without code", CallSample{IP: 0x1010, Meaning: IPCallInsn}, nil, CallEdge{}, false},
		{"target ip, direct call found in the chain", CallSample{IP: 0x2000, Meaning: IPTarget, Chain: []addrspace.Addr{0x2008, 0x1015, 0x3005}}, code,
			CallEdge{Site: 0x1010, Return: 0x1015, Callee: 0x2000, CalleeEntry: true, Kind: KindCall, SiteChecked: true}, true},
		{"target ip, direct call two frames up", CallSample{IP: 0x2000, Meaning: IPTarget, Chain: []addrspace.Addr{0x4444, 0x2010, 0x1015}}, code,
			CallEdge{Site: 0x1010, Return: 0x1015, Callee: 0x2000, CalleeEntry: true, Kind: KindCall, SiteChecked: true}, true},
		{"target ip before the prologue: caller missing", CallSample{IP: 0x2000, Meaning: IPTarget, Chain: []addrspace.Addr{0x2001, 0x3005}}, code,
			CallEdge{Callee: 0x2000, CalleeEntry: true}, true},
		{"target ip, indirect register call", CallSample{IP: 0x2000, Meaning: IPTarget, Chain: []addrspace.Addr{0x2008, 0x1022, 0x3005}}, code,
			CallEdge{Site: 0x1020, Return: 0x1022, Callee: 0x2000, CalleeEntry: true, Kind: KindIndCall}, true},
		{"target ip, indirect 5-byte memory call", CallSample{IP: 0x2000, Meaning: IPTarget, Chain: []addrspace.Addr{0x2008, 0x1035}}, code,
			CallEdge{Site: 0x1030, Return: 0x1035, Callee: 0x2000, CalleeEntry: true, Kind: KindIndCall}, true},
		{"target ip, indirect rip-relative call", CallSample{IP: 0x2000, Meaning: IPTarget, Chain: []addrspace.Addr{0x2008, 0x1046}}, code,
			CallEdge{Site: 0x1040, Return: 0x1046, Callee: 0x2000, CalleeEntry: true, Kind: KindIndCall}, true},
		{"target ip without code", CallSample{IP: 0x2000, Meaning: IPTarget, Chain: []addrspace.Addr{0x2008, 0x1015}}, nil,
			CallEdge{Callee: 0x2000, CalleeEntry: true}, true},
		{"skid, direct call on top of the stack", CallSample{IP: 0x2009, Meaning: IPSkid, Chain: []addrspace.Addr{0x2009, 0x1015, 0x3005}}, code,
			CallEdge{Site: 0x1010, Return: 0x1015, Callee: 0x2000, CalleeEntry: true, Kind: KindCall}, true},
		{"skid, indirect call on top of the stack", CallSample{IP: 0x2009, Meaning: IPSkid, Chain: []addrspace.Addr{0x2009, 0x1022}}, code,
			CallEdge{Site: 0x1020, Return: 0x1022, Callee: 0x2009, Kind: KindIndCall}, true},
		{"skid, no caller frame", CallSample{IP: 0x2009, Meaning: IPSkid, Chain: []addrspace.Addr{0x2009}}, code, CallEdge{}, false},
		{"skid, return address after no call", CallSample{IP: 0x2009, Meaning: IPSkid, Chain: []addrspace.Addr{0x2009, 0x1008}}, code, CallEdge{}, false},
		{"return address at the bottom of memory", CallSample{IP: 0x1, Meaning: IPSkid, Chain: []addrspace.Addr{0x1, 0x2}}, code, CallEdge{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := CallFromSample(tc.s, tc.code)
			if ok != tc.ok || got != tc.want {
				t.Errorf("got %+v, %v\nwant %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSampleIPMeaning(t *testing.T) {
	for _, tc := range []struct {
		precise uint8
		misc    uint16
		want    IPMeaning
	}{
		{0, perf.MiscUser, IPSkid},
		{0, perf.MiscUser | perf.MiscExactIP, IPSkid},
		{1, perf.MiscUser, IPTarget},
		{2, perf.MiscUser, IPTarget}, // fixup failed on pre-Haswell PEBS
		{2, perf.MiscUser | perf.MiscExactIP, IPCallInsn},
		{3, perf.MiscUser | perf.MiscExactIP, IPCallInsn},
	} {
		if got := SampleIPMeaning(tc.precise, tc.misc); got != tc.want {
			t.Errorf("precise %d misc %#x: %v, want %v", tc.precise, tc.misc, got, tc.want)
		}
	}
}

// maxInsnLen is the longest x86 instruction (Intel SDM vol. 2, 2.3.11).
const maxInsnLen = 15

// FuzzCallFromSample: any code bytes, IP and callchain give an answer
// without panicking, and a found site is a call whose return address is in
// the chain or is the IP, at most one instruction's length after it (a call
// with prefixes and SIB+disp32 is longer than the 7 bytes callBefore
// searches back: 41 ff 94 24 00 01 00 00 is call *0x100(%r12), 8 bytes).
func FuzzCallFromSample(f *testing.F) {
	f.Add([]byte{0xe8, 0xeb, 0x0f, 0x00, 0x00, 0xff, 0xd0}, uint64(0x1000), uint64(0x1005), uint8(1))
	f.Add([]byte{0x41, 0xff, 0x54, 0x24, 0x08}, uint64(0x1000), uint64(0x1005), uint8(2))
	f.Add([]byte{0x41, 0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00}, uint64(0x1000), uint64(0x1008), uint8(2))
	f.Add([]byte{0x41, 0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00}, uint64(0x1000), uint64(0x1008), uint8(1))
	f.Add([]byte{}, uint64(0), uint64(1), uint8(0))
	f.Fuzz(func(t *testing.T, code []byte, ip, ret uint64, meaning uint8) {
		mem := memCode{0x1000: code}
		s := CallSample{IP: addrspace.Addr(ip), Meaning: IPMeaning(meaning % 3), Chain: []addrspace.Addr{addrspace.Addr(ip), addrspace.Addr(ret), 0x1000 + addrspace.Addr(len(code))}}
		e, ok := CallFromSample(s, mem)
		if !ok || e.Site == 0 {
			return
		}
		if e.Kind != KindCall && e.Kind != KindIndCall {
			t.Errorf("site %#x with kind %v", e.Site, e.Kind)
		}
		if e.Return <= e.Site || e.Return-e.Site > maxInsnLen {
			t.Errorf("site %#x, return %#x", e.Site, e.Return)
		}
		if e.SiteChecked && (e.Kind != KindCall || !e.CalleeEntry) {
			t.Errorf("checked site without a direct callee: %+v", e)
		}
	})
}
