// Command pgobench is the workload of scripts/bench-pgo.sh: a call-heavy
// loop where Go's profile-guided optimization can matter and where call
// counts and CPU time name different call targets as the hot ones.
//
//	pgobench DURATION|rounds=N [square|circle]
//
// Each round walks 1000 shapes: 990 of the input's kind (square, the
// default, or circle), cheap to measure, and 10 polygons, each about as
// costly as a hundred squares. The interface call s.Area() in round thus
// goes to the input's kind in 99% of the calls but to the polygons for
// most of its time: a profile weighted by calls makes PGO devirtualize
// (and inline) the cheap, frequent target, one weighted by time the
// costly, rare one. Every shape also goes through tag, small on its hot
// path but over the inliner's ordinary budget (its cold path is long), so
// only a profile marking the call hot gets it inlined.
//
// With DURATION (a time.ParseDuration string) it runs rounds until it has
// used that much CPU time (so that a profile of it holds as many samples
// on a loaded machine as on an idle one); with rounds=N it runs exactly N
// rounds, for timing a fixed amount of work. It prints the rounds, the work loop's
// CPU time (the thread's own clock: the loop runs on one locked thread
// and allocates nothing) and wall time (monotonic clock) in nanoseconds,
// and a checksum. With PGOBENCH_CPUPROFILE=FILE in its environment it
// writes the Go runtime's own CPU profile (runtime/pprof) to FILE.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

type Shape interface{ Area() float64 }

type Square struct{ side float64 }

func (s *Square) Area() float64 { return s.side * s.side }

type Circle struct{ r float64 }

func (c *Circle) Area() float64 { return 3.14159 * c.r * c.r }

// Polygon's area is the shoelace sum over its vertices: costly.
type Polygon struct{ x, y [polyVertices]float64 }

const polyVertices = 128

func (p *Polygon) Area() float64 {
	var a float64
	j := len(p.x) - 1
	for i := range p.x {
		a += (p.x[j] + p.x[i]) * (p.y[j] - p.y[i])
		j = i
	}
	return a / 2
}

var table [1024]uint64

// tag returns a small hash of x: from table when x is in it (always, in
// this program), computed the long way otherwise.
func tag(x uint64) uint64 {
	if x < uint64(len(table)) {
		return table[x]
	}
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

// round calls Area and tag once per shape.
//
//go:noinline
func round(shapes []Shape, area float64, h uint64) (float64, uint64) {
	for i, s := range shapes {
		area += s.Area()
		h += tag(uint64(i))
	}
	return area, h
}

// bench runs limit rounds, or with limit < 0 rounds until the thread's
// CPU clock passed end (checked every 256 rounds: a system call).
//
//go:noinline
func bench(shapes []Shape, limit int64, end int64) (rounds int64, area float64, h uint64) {
	for limit < 0 && (rounds%256 != 0 || threadCPU() < end) || rounds < limit {
		area, h = round(shapes, area, h)
		rounds++
	}
	return rounds, area, h
}

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() int64 {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return -1
	}
	return ts.Nano()
}

func fail(msg string, code int) {
	os.Stderr.WriteString("pgobench: " + msg + "\n")
	os.Exit(code)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: pgobench DURATION|rounds=N [square|circle]", 2)
	}
	var d time.Duration
	limit, err := int64(-1), error(nil)
	if n, ok := strings.CutPrefix(os.Args[1], "rounds="); ok {
		limit, err = strconv.ParseInt(n, 10, 64)
		if err == nil && limit < 0 {
			err = strconv.ErrRange
		}
	} else {
		d, err = time.ParseDuration(os.Args[1])
	}
	if err != nil {
		fail(err.Error(), 2)
	}
	kind := "square"
	if len(os.Args) > 2 {
		kind = os.Args[2]
	}
	shapes := make([]Shape, 1000)
	for i := range shapes {
		switch {
		case i%100 == 50:
			p := &Polygon{}
			for v := range p.x {
				p.x[v] = float64(i + v%7)
				p.y[v] = float64(v*v%13 + i)
			}
			shapes[i] = p
		case kind == "square":
			shapes[i] = &Square{side: float64(i)}
		case kind == "circle":
			shapes[i] = &Circle{r: float64(i)}
		default:
			fail("unknown shape "+strconv.Quote(kind)+" (square or circle)", 2)
		}
	}
	for i := range table {
		table[i] = uint64(i) * 0x9e3779b97f4a7c15 >> 40
	}
	if path := os.Getenv("PGOBENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fail(err.Error(), 1)
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fail(err.Error(), 1)
			}
		}()
	}
	runtime.LockOSThread()
	start, cpu0 := time.Now(), threadCPU()
	rounds, area, h := bench(shapes, limit, cpu0+d.Nanoseconds())
	cpu, wall := threadCPU()-cpu0, time.Since(start)
	os.Stdout.WriteString("rounds " + strconv.FormatInt(rounds, 10) +
		" cpu_ns " + strconv.FormatInt(cpu, 10) + " wall_ns " + strconv.FormatInt(wall.Nanoseconds(), 10) +
		" area " + strconv.FormatFloat(area, 'g', -1, 64) + " hash " + strconv.FormatUint(h, 16) + "\n")
}
