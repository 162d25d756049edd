package lbr_test

import (
	"encoding/binary"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
)

// bytesCode serves the same bytes at every user address.
type bytesCode []byte

func (b bytesCode) Code(pid uint32, a addrspace.Addr) ([]byte, bool) { return b, len(b) > 0 }

// FuzzDecode feeds arbitrary instruction bytes and branch entries (24
// bytes each: from, to, flags) to a Decoder: it must not panic, and every
// call it returns is a call-kind user entry at its own index.
func FuzzDecode(f *testing.F) {
	entry := func(from, to, flags uint64) []byte {
		b := binary.LittleEndian.AppendUint64(nil, from)
		b = binary.LittleEndian.AppendUint64(b, to)
		return binary.LittleEndian.AppendUint64(b, flags)
	}
	f.Add([]byte{0xe8, 0, 0, 0, 0}, entry(0x401000, 0x402000, 0), false)
	f.Add([]byte{0xff, 0xd0}, entry(0x401000, 0xffffffff81000000, 4<<20), true)
	f.Add([]byte{0x3e}, append(entry(1, 2, 5<<20|1<<30), entry(0x401000, 0x402000, 2<<30)...), true)
	f.Fuzz(func(t *testing.T, code, raw []byte, saved bool) {
		var window []perf.BranchEntry
		for len(raw) >= 24 {
			window = append(window, perf.BranchEntry{
				From:  binary.LittleEndian.Uint64(raw),
				To:    binary.LittleEndian.Uint64(raw[8:]),
				Flags: perf.BranchFlags(binary.LittleEndian.Uint64(raw[16:])),
			})
			raw = raw[24:]
		}
		d := lbr.NewDecoder(bytesCode(code))
		d.SavedType = saved
		calls := d.Decode(nil, 1, window)
		if len(calls) > len(window) {
			t.Fatalf("%d calls from %d entries", len(calls), len(window))
		}
		for _, c := range calls {
			e := window[c.Index]
			if !c.Kind.IsCall() || addrspace.Addr(e.From) != c.Site || addrspace.Addr(e.To) != c.Callee || c.Site >= lbr.KernelStart || c.Callee >= lbr.KernelStart {
				t.Fatalf("call %+v from entry %+v", c, e)
			}
		}
	})
}

// BenchmarkDecode is the per-sample cost: a 32-entry window of which a
// quarter are calls, classified from the cache.
func BenchmarkDecode(b *testing.B) {
	code := &fakeCode{code: map[addrspace.Addr][]byte{}}
	window := make([]perf.BranchEntry, 32)
	for i := range window {
		from := addrspace.Addr(0x401000 + 16*i)
		if i%4 == 0 {
			code.code[from] = []byte{0xe8, 0, 0, 0, 0}
		} else {
			code.code[from] = []byte{0x75, 0x05}
		}
		window[i] = perf.BranchEntry{From: uint64(from), To: uint64(0x402000 + 64*(i%5))}
	}
	d := lbr.NewDecoder(code)
	var calls []lbr.Call
	b.ReportAllocs()
	for b.Loop() {
		calls = d.Decode(calls[:0], 1, window)
	}
}
