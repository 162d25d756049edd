// Command pgoprog is the call-heavy Go workload of hwprof's PGO tests
// (scripts/bench-pgo.sh times testdata/go/pgobench): interface calls whose hot target depends on
// the input, and a small hot function over the inliner's ordinary budget.
//
//	pgoprog MS [SHAPE]
//
// runs rounds for MS milliseconds of the process's CPU time (at least one
// round) over 1000 shapes of which all but one are SHAPE (square, the
// default, or circle) and prints the rounds and the calls made: each round
// calls Area and mix once per shape. With MS given as a count of rounds
// (rounds=N) it runs exactly N rounds instead, for timing a fixed amount
// of work. With PGOPROG_CPUPROFILE=FILE in its environment it
// writes the Go runtime's own CPU profile (runtime/pprof) to FILE, the
// profile Go's PGO documentation starts from.
package main

import (
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
)

type Shape interface{ Area() float64 }

type Square struct{ side float64 }

func (s *Square) Area() float64 { return s.side * s.side }

type Circle struct{ r float64 }

func (c *Circle) Area() float64 { return 3.14159 * c.r * c.r }

// mix is small and hot, over the inliner's ordinary budget, so only a
// profile marking its call hot gets it inlined.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	x += 0x9e3779b97f4a7c15
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 32
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	x += 0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	x += 0x632be59bd9b4e019
	x ^= x >> 28
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 29
	return x
}

// round calls Area on every shape and mix once per shape.
//
//go:noinline
func round(shapes []Shape, area float64, h uint64) (float64, uint64) {
	for i, s := range shapes {
		area += s.Area()
		h = mix(h + uint64(i))
	}
	return area, h
}

func main() {
	if len(os.Args) < 2 {
		os.Stderr.WriteString("usage: pgoprog MS|rounds=N [square|circle]\n")
		os.Exit(2)
	}
	var ms int64
	limit, err := int64(-1), error(nil)
	if n, ok := strings.CutPrefix(os.Args[1], "rounds="); ok {
		limit, err = strconv.ParseInt(n, 10, 64)
	} else {
		ms, err = strconv.ParseInt(os.Args[1], 10, 64)
	}
	if err != nil {
		os.Stderr.WriteString("pgoprog: " + err.Error() + "\n")
		os.Exit(2)
	}
	circles := len(os.Args) > 2 && os.Args[2] == "circle"
	shapes := make([]Shape, 1000)
	for i := range shapes {
		if (i == 500) != circles {
			shapes[i] = &Circle{r: float64(i)}
		} else {
			shapes[i] = &Square{side: float64(i)}
		}
	}
	if path := os.Getenv("PGOPROG_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			os.Stderr.WriteString("pgoprog: " + err.Error() + "\n")
			os.Exit(1)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	var rounds int64
	var area float64
	var h uint64
	for limit < 0 || rounds < limit {
		area, h = round(shapes, area, h)
		rounds++
		if limit < 0 && rounds%16 == 0 && cpuMS() >= ms {
			break
		}
	}
	os.Stdout.WriteString("rounds " + strconv.FormatInt(rounds, 10) + " calls " + strconv.FormatInt(2000*rounds, 10) +
		" area " + strconv.FormatFloat(area, 'g', -1, 64) + " hash " + strconv.FormatUint(h, 16) + "\n")
}

// cpuMS returns the CPU time the process has used, in milliseconds: the
// program runs for the time its argument gives, on a fast or slow, idle
// or loaded machine.
func cpuMS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 1 << 62 // no clock: stop
	}
	return (ru.Utime.Nano() + ru.Stime.Nano()) / 1e6
}
