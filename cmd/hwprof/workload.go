package main

import (
	"fmt"
	"os"
	"strconv"
)

// workloadArg makes hwprof run its built-in workload instead of a command:
// the program `hwprof demo` records, so the demo needs no compiler.
const workloadArg = "--hwprof-internal-workload"

// runWorkload runs a small call-heavy program with known call structure:
// a hot loop of short calls, an interface call site with two targets,
// a recursion, and a phase of long non-call work followed by two short
// calls (the shape that misleads timer sampling). The optional argument
// scales the work (default 1, about a second on a current x86-64 core).
func runWorkload(args []string) {
	scale := 1
	if len(args) > 0 {
		if n, err := strconv.Atoi(args[0]); err == nil && n > 0 {
			scale = n
		}
	}
	var sum uint64
	for range scale {
		sum += hotLoop(80_000_000)
		sum += shapes(20_000_000)
		sum += fib(30)
		sum += longThenShort(1500)
	}
	fmt.Fprintf(os.Stdout, "workload done: %d\n", sum%1000)
}

//go:noinline
func hotLoop(n int) uint64 {
	var s uint64
	for i := range n {
		s += leafA(uint64(i))
		if i&3 == 0 {
			s += leafB(uint64(i))
		}
	}
	return s
}

//go:noinline
func leafA(x uint64) uint64 { return x*2654435761 ^ x>>7 }

//go:noinline
func leafB(x uint64) uint64 { return x*x + 1 }

type shape interface{ area() uint64 }

type square struct{ side uint64 }

type rect struct{ w, h uint64 }

//go:noinline
func (s square) area() uint64 { return s.side * s.side }

//go:noinline
func (r rect) area() uint64 { return r.w * r.h }

// shapes calls area through an interface: one call site, two targets,
// square three times as often as rect.
//
//go:noinline
func shapes(n int) uint64 {
	all := []shape{square{3}, rect{2, 5}, square{4}, square{5}}
	var s uint64
	for i := range n {
		s += all[i&3].area()
	}
	return s
}

//go:noinline
func fib(n int) uint64 {
	if n < 2 {
		return uint64(n)
	}
	return fib(n-1) + fib(n-2)
}

// longThenShort is Figure 1 of the counter-based sampling paper: a long
// stretch of work without calls, then two short calls, per iteration.
//
//go:noinline
func longThenShort(n int) uint64 {
	var s uint64
	for i := range n {
		x := uint64(i)
		for range 200_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		s += shortA(x) + shortB(x)
	}
	return s
}

//go:noinline
func shortA(x uint64) uint64 { return x >> 3 }

//go:noinline
func shortB(x uint64) uint64 { return x << 1 }
