package lbr_test

import (
	"fmt"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
)

// A recording made with -j any (no saved branch types): the decoder reads
// the instruction at each from address through the caller's CodeReader
// (here fixed bytes), keeps the calls, and the estimator weights each
// appearance by the sample's period over the window depth.
func ExampleDecoder() {
	code := &fakeCode{code: map[addrspace.Addr][]byte{
		0x401000: {0xe8, 0xfb, 0x0f, 0x00, 0x00}, // call 0x402000
		0x402010: {0xc3},                         // ret
	}}
	dec := lbr.NewDecoder(code)
	est := lbr.Estimator{Depth: 4}
	window := []perf.BranchEntry{ // newest first
		{From: 0x402010, To: 0x401005},
		{From: 0x401000, To: 0x402000},
		{From: 0xffffffff81000000, To: 0x401000}, // return from a syscall
		{From: 0x401000, To: 0x402000},
	}
	for _, c := range dec.Decode(nil, 42, window) {
		// period 100 branches, depth 4: each appearance stands for 25
		fmt.Printf("%#x -> %#x at entry %d: %.0f calls\n", c.Site, c.Callee, c.Index, est.Weight(100, c.Index))
	}
	fmt.Println("dropped:", dec.Count(lbr.KindOther), "non-call,", dec.Count(lbr.KindKernel), "kernel")
	// Output:
	// 0x401000 -> 0x402000 at entry 1: 25 calls
	// 0x401000 -> 0x402000 at entry 3: 25 calls
	// dropped: 1 non-call, 1 kernel
}
