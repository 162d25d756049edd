package lbr_test

import (
	"fmt"

	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
)

// A recording made with -j any (no saved branch types): the decoder reads
// the instruction at each from address through the caller's CodeReader
// (here fixed bytes; FileCode reads ELF files), keeps the calls, and the
// profile weights them by the sample's period over the window depth.
func ExampleDecoder() {
	code := &fakeCode{code: map[lbr.Addr][]byte{
		0x401000: {0xe8, 0xfb, 0x0f, 0x00, 0x00}, // call 0x402000
		0x402010: {0xc3},                         // ret
	}}
	dec := lbr.NewDecoder(code)
	prof := lbr.NewProfile(lbr.Estimator{Depth: 4})
	window := []perf.BranchEntry{ // newest first
		{From: 0x402010, To: 0x401005},
		{From: 0x401000, To: 0x402000},
		{From: 0xffffffff81000000, To: 0x401000}, // return from a syscall
		{From: 0x401000, To: 0x402000},
	}
	calls := dec.Decode(nil, 42, window)
	prof.Add(42, 100, calls) // period 100 branches, depth 4: each appearance stands for 25
	for _, e := range prof.Edges() {
		fmt.Printf("%#x -> %#x: %d appearances, %.0f calls\n", e.Site, e.Callee, e.Appearances, e.Calls)
	}
	fmt.Println("dropped:", dec.Count(lbr.KindOther), "non-call,", dec.Count(lbr.KindKernel), "kernel")
	// Output:
	// 0x401000 -> 0x402000: 2 appearances, 50 calls
	// dropped: 1 non-call, 1 kernel
}
