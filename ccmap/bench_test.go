package ccmap

import (
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRate reports ops per wall-clock second and per CPU second of the
// process (the benchmarks run one goroutine and allocate little, so CPU
// time is the fold's own; it does not grow when other processes take the
// cores, wall-clock time does).
func reportRate(b *testing.B, cpu0 time.Duration, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit+"/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), unit+"/cpu-s")
	}
}

// benchAddStack folds depth-frame stacks drawn Zipf-like (s = 1.1) from
// nstacks distinct stacks of a 2000-function synthetic program, into a map
// that already holds them (steady state), and reports samples per second
// on one goroutine.
func benchAddStack(b *testing.B, nstacks, depth int) {
	stacks, seq := zipfStacks(1, 2000, nstacks, depth, 1<<16)
	m := New()
	for _, i := range seq {
		m.AddStack(stacks[i], 1)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		m.AddStack(stacks[seq[i&(len(seq)-1)]], 1000)
	}
	reportRate(b, cpu0, "samples")
	b.ReportMetric(float64(m.Size().Contexts), "contexts")
}

// BenchmarkAddStack is the target case: 16 frames, 4096 distinct stacks.
func BenchmarkAddStack(b *testing.B) { benchAddStack(b, 4096, 16) }

// BenchmarkAddStackWide draws from 65536 distinct stacks: more than the
// stack cache holds, so more samples take the lookup per frame.
func BenchmarkAddStackWide(b *testing.B) { benchAddStack(b, 65536, 16) }

// BenchmarkAddStackDeep: 64-frame stacks.
func BenchmarkAddStackDeep(b *testing.B) { benchAddStack(b, 4096, 64) }

// BenchmarkAddStackNew folds stacks that are almost all new (random walks
// in a 50000-function program): the cost of creating nodes.
func BenchmarkAddStackNew(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	p := newProgram(r, 50000)
	stacks := make([][]Frame, 1<<15)
	for i := range stacks {
		stacks[i] = p.stack(r, 16)
	}
	m := New()
	b.ReportAllocs()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		if i&(len(stacks)-1) == 0 {
			m = New()
		}
		m.AddStack(stacks[i&(len(stacks)-1)], 1)
	}
	reportRate(b, cpu0, "samples")
}

func BenchmarkAddEdge(b *testing.B) {
	stacks, seq := zipfStacks(1, 2000, 4096, 16, 1<<16)
	m := New()
	b.ReportAllocs()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		s := stacks[seq[i&(len(seq)-1)]]
		m.AddEdge(CallSite{Caller: s[1].Func, Addr: s[1].Site}, s[0].Func, 1)
	}
	reportRate(b, cpu0, "edges")
}

func BenchmarkAddEdgeInContext(b *testing.B) {
	stacks, seq := zipfStacks(1, 2000, 4096, 16, 1<<16)
	m := New()
	b.ReportAllocs()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		s := stacks[seq[i&(len(seq)-1)]]
		m.AddEdgeInContext(s[1:], CallSite{Caller: s[1].Func, Addr: s[1].Site}, s[0].Func, 1)
	}
	reportRate(b, cpu0, "edges")
}

// BenchmarkMerge merges a shard of 1<<16 samples into a map holding
// another such shard (the pipeline's end-of-run or snapshot merge).
func BenchmarkMerge(b *testing.B) {
	stacks, seq := zipfStacks(1, 2000, 4096, 16, 1<<17)
	x, y := New(), New()
	for i, s := range seq {
		if i&1 == 0 {
			x.AddStack(stacks[s], 1)
		} else {
			y.AddStack(stacks[s], 1)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		m := x.Clone()
		m.Merge(y)
	}
	b.ReportMetric(float64(y.Size().Contexts), "contexts")
}

func BenchmarkCCTView(b *testing.B) {
	stacks, seq := zipfStacks(1, 2000, 4096, 16, 1<<16)
	m := New()
	for _, s := range seq {
		m.AddStack(stacks[s], 1)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.CCT(Self)
	}
	b.ReportMetric(float64(m.Size().Contexts), "contexts")
}

// BenchmarkMemoryPerContext builds a map of at least 1M context nodes from
// random 16-frame stacks and reports the live heap per context node, as
// runtime.MemStats measures it (everything: node slices with their spare
// capacity, the child index map, CallSiteRefs, general nodes and their
// maps), and its parts: the context and CallSiteRef slices (capacity
// times struct size) and the child index map alone (a map of as many
// entries, measured the same way). Run it with -benchtime 1x.
func BenchmarkMemoryPerContext(b *testing.B) {
	const want = 1 << 20
	r := rand.New(rand.NewPCG(3, 3))
	p := newProgram(r, 20000)
	var m *Map
	var heap, index uint64
	for b.Loop() {
		m = nil
		heap = liveHeap(func() any {
			m = New()
			for m.Size().Contexts < want {
				m.AddStack(p.stack(r, 16), 1)
			}
			m.cache = nil // the fixed 64 KiB stack cache is not per node
			return m
		})
		index = liveHeap(func() any { return m.kids.clone() })
	}
	s := m.Size()
	n := float64(s.Contexts)
	slices := cap(m.ctxs)*int(unsafe.Sizeof(ctxNode{})) + cap(m.ctxl)*int(unsafe.Sizeof(ctxLinks{})) + cap(m.srefs)*int(unsafe.Sizeof(siteRefNode{}))
	b.ReportMetric(float64(heap)/n, "B/context")
	b.ReportMetric(float64(slices)/n, "B/context-slices")
	b.ReportMetric(float64(index)/float64(m.kids.n), "B/index-entry")
	b.ReportMetric(float64(unsafe.Sizeof(ctxNode{})+unsafe.Sizeof(ctxLinks{})), "B/context-struct")
	b.ReportMetric(float64(unsafe.Sizeof(siteRefNode{})), "B/CallSiteRef-struct")
	b.ReportMetric(float64(s.CallSiteRefs)/n, "CallSiteRefs/context")
	b.ReportMetric(n, "contexts")
	runtime.KeepAlive(m)
}

// liveHeap returns how much the live heap grew by what build returns.
func liveHeap(build func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(x)
	return after.HeapAlloc - before.HeapAlloc
}
