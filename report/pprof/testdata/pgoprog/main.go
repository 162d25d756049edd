// Command pgoprog is a call-heavy workload for the go build -pgo test of
// package pprof: an interface call with one hot target and a small hot
// function called in a loop. It runs for the time given with -d and prints
// how often each call edge ran, counted per loop iteration (never inside
// the callees, so the counting does not change what the compiler sees).
package main

import (
	"flag"
	"fmt"
	"time"
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

// run calls Area on every shape and mix once per shape, round after round,
// until d has passed; it returns how many rounds ran.
//
//go:noinline
func run(shapes []Shape, d time.Duration) (rounds int64, area float64, h uint64) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i, s := range shapes {
			area += s.Area()
			h = mix(h + uint64(i))
		}
		rounds++
	}
	return rounds, area, h
}

func main() {
	d := flag.Duration("d", time.Second, "how long to run")
	flag.Parse()
	// 1 circle in 1000 shapes: the interface call has one hot target.
	shapes := make([]Shape, 1000)
	for i := range shapes {
		if i == 500 {
			shapes[i] = &Circle{r: float64(i)}
		} else {
			shapes[i] = &Square{side: float64(i)}
		}
	}
	rounds, area, h := run(shapes, *d)
	fmt.Printf("rounds %d squares %d circles %d mix %d area %g hash %x\n",
		rounds, rounds*999, rounds, rounds*1000, area, h)
}
