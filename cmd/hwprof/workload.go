package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// workloadArg makes hwprof run its built-in workload instead of a command:
// the program `hwprof demo` records, so the demo needs no compiler.
const workloadArg = "--hwprof-internal-workload"

// runWorkload runs a small call-heavy program with known call structure:
// a hot loop of short calls, an interface call site with two targets,
// a recursion, and a phase of long non-call work followed by two short
// calls (the shape that misleads timer sampling), in slices of about 10
// ms (a round is 100 slices, about a second on a current x86-64 core).
//
// The argument says how long: a duration ("1s", "300ms") runs slices until
// the process has used that much CPU time, so a recording of it has the
// same number of clock samples on a fast or slow, idle or loaded machine;
// a bare number N runs N rounds, a fixed amount of work (what benchmarks
// of a recorder's slowdown time). The default is one second. It prints
// how many slices it ran.
func runWorkload(args []string) {
	d, rounds := time.Second, 0
	if len(args) > 0 {
		if n, err := strconv.Atoi(args[0]); err == nil && n > 0 {
			rounds = n
		} else if v, err := time.ParseDuration(args[0]); err == nil && v > 0 {
			d = v
		}
	}
	var sum uint64
	slices := 0
	for ; rounds > 0 && slices < 100*rounds || rounds == 0 && processCPU() < d; slices++ {
		sum += hotLoop(800_000)
		sum += shapes(200_000)
		if slices%100 == 0 {
			sum += fib(30)
		}
		sum += longThenShort(15)
	}
	fmt.Fprintf(os.Stdout, "workload done: %d slices, %d\n", slices, sum%1000)
}

// processCPU is the CPU time the process has used.
func processCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
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
