package unwind

import (
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
)

// FuzzCFI feeds arbitrary bytes to the .eh_frame parser and the CFA
// program interpreter (delve's, guarded): no panic may escape, and every
// FDE it accepts either yields a row or an error.
func FuzzCFI(f *testing.F) {
	// a CIE ("zR", pcrel sdata4, def_cfa rsp+8, offset ra at cfa-8) and an FDE with
	// advance_loc 1; def_cfa_offset 16
	f.Add([]byte{
		0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0,
		0x14, 0, 0, 0, 0x1c, 0, 0, 0, 0xe8, 0xff, 0xff, 0xff, 0x20, 0, 0, 0, 0, 0x41, 0x0e, 0x10, 0, 0,
	})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		fdes, err := parseCFIBytes(data, 0x2000)
		if err != nil {
			return
		}
		for _, fde := range fdes {
			for _, pc := range []uint64{fde.Begin(), fde.Begin() + 1, fde.End() - 1} {
				if r, err := establish(fde, pc); err == nil && r == nil {
					t.Fatalf("establish(%#x) = nil, nil", pc)
				}
			}
		}
	})
}

// FuzzUnwindStack unwinds arbitrary stack contents and registers with a
// fixed CFI table: the unwind must end, within MaxDepth, without a panic.
func FuzzUnwindStack(f *testing.F) {
	f.Add(uint64(0x401010), uint64(0x7ffd0000), []byte{5, 0x20, 0x40, 0, 0, 0, 0, 0})
	f.Add(uint64(0x401000), uint64(0xfffffffffffffff8), make([]byte, 64))
	// every PC in [0x400000, 0x402000) of the object has CFA = rsp+8, ra at CFA-8
	tbl := &table{rows: map[addrspace.ObjAddr]*row{}}
	for pc := addrspace.ObjAddr(0x3ff000); pc < 0x402000; pc++ {
		tbl.rows[pc] = rowWith(rule{kind: ruleCFA, reg: rsp, off: 8}, map[int]rule{rip: {kind: ruleOffset, off: -8}})
	}
	u := New(Options{MaxDepth: 64})
	e := &tableEntry{t: tbl}
	e.once.Do(func() {})
	u.tables.m[tableKey{path: progObj.Path}] = e
	f.Fuzz(func(t *testing.T, ip, sp uint64, stackBytes []byte) {
		regs := make([]uint64, 20)
		regs[6], regs[7], regs[8] = sp, sp, ip // BP, SP, IP in mask order
		s := &perf.Sample{RecordHeader: perf.RecordHeader{Type: perf.RecordSample, Misc: perf.MiscUser},
			Present: perf.SampleIP | perf.SampleTID | perf.SampleRegsUser | perf.SampleStackUser, IP: ip,
			RegsUser:  perf.Regs{ABI: 2, Mask: perf.RegsUserX86_64, Values: regs},
			StackUser: perf.StackUser{Data: stackBytes, DynSize: uint64(len(stackBytes))}}
		frames, stop := u.Unwind(s, fakeMaps{})
		if len(frames) > 64 {
			t.Fatalf("%d frames past MaxDepth 64 (%v)", len(frames), stop)
		}
	})
}
