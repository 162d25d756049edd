package flamegraph

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
)

// Synthetic profiles for the tests, each shaped like something real
// profiles do. period is the sampling period the times are made from.
const period = 250000 // ns: cpu-clock at 4 kHz

func timed(frames []Frame, samples uint64, calls float64) Stack {
	return Stack{Frames: frames, Samples: samples, Time: float64(samples) * period, Calls: calls}
}

func prog(names ...string) []Frame {
	fs := make([]Frame, len(names))
	for i, n := range names {
		fs[i] = Frame{Name: n, Object: "/usr/local/bin/server", Kind: Program}
	}
	return fs
}

func with(fs []Frame, more ...Frame) []Frame {
	return append(append([]Frame(nil), fs...), more...)
}

var (
	libc = func(n string) Frame {
		return Frame{Name: n, Object: "/usr/lib/x86_64-linux-gnu/libc.so.6", Kind: Library}
	}
	kernel = func(n string) Frame { return Frame{Name: n, Object: "[kernel.kallsyms]", Kind: Kernel} }
	jit    = func(n string) Frame { return Frame{Name: n, Object: "/tmp/perf-4242.map", Kind: JIT} }
)

// serverProfile is a small server-like profile with every kind of frame,
// a broken stack, and calls that differ from time: hash_lookup is cheap
// and called very often, compress is expensive and called rarely.
func serverProfile() (Meta, []Stack) {
	m := prog("_start", "__libc_start_main", "main")
	req := with(m, prog("serve", "handle_request")...)
	stacks := []Stack{
		timed(with(req, prog("parse_header")...), 900, 120000),
		timed(with(req, prog("parse_header", "hash_lookup")...), 300, 2400000),
		timed(with(req, prog("parse_body", "json_decode")...), 1400, 90000),
		timed(with(req, prog("parse_body", "json_decode", "hash_lookup")...), 500, 1800000),
		timed(with(req, prog("compress", "deflate_block")...), 4200, 800),
		timed(with(req, prog("compress")...), 600, 200),
		timed(with(req, libc("memcpy")), 700, 300000),
		timed(with(req, libc("malloc"), libc("_int_malloc")), 450, 600000),
		timed(with(req, libc("write"), kernel("entry_SYSCALL_64"), kernel("ksys_write"), kernel("tcp_sendmsg")), 1100, 40000),
		timed(with(m, prog("serve")...), 150, 1000),
		timed(with(m, prog("serve", "run_script")...), 80, 500),
		timed([]Frame{{Name: "[truncated stack]", Kind: Broken}, {Name: "deflate_block", Object: "/usr/local/bin/server", Kind: Program}}, 160, 0),
		timed([]Frame{{Name: "[unknown]", Kind: Unknown}, {Name: "[broken stack]", Kind: Broken}}, 40, 0),
		timed(with(with(m, prog("serve", "run_script")...), jit("LuaJIT:trace_17"), jit("LuaJIT:trace_23")), 700, 5000),
		timed(with(with(m, prog("serve", "run_script")...), jit("LuaJIT:trace_17")), 300, 4000),
	}
	var samples uint64
	for _, s := range stacks {
		samples += s.Samples
	}
	return Meta{
		Command: "./server --port 8080 --workers 4", Source: "lbr", Samples: samples, Lost: 12, Throttled: 3,
		HasTime: true, HasCalls: true,
		Warnings: []string{"2 stacks were truncated at 127 frames (kernel.perf_event_max_stack)"},
	}, stacks
}

// deepProfile is a recursive descent 300 frames deep with side branches.
func deepProfile() (Meta, []Stack) {
	var stacks []Stack
	path := prog("main")
	for d := 0; d < 300; d++ {
		path = with(path, Frame{Name: fmt.Sprintf("eval_%d", d%7), Object: "/usr/local/bin/interp", Kind: Program})
		if d%10 == 0 {
			stacks = append(stacks, timed(with(path, libc("memset")), uint64(20+d), 0))
		}
	}
	stacks = append(stacks, timed(path, 5000, 0))
	return meta("timer", stacks, false), stacks
}

// wideProfile has 3000 leaf functions under one caller with a long-tailed
// (Zipf-like) distribution: most of them are too narrow to draw.
func wideProfile() (Meta, []Stack) {
	var stacks []Stack
	for i := 1; i <= 3000; i++ {
		n := uint64(math.Ceil(200000 / math.Pow(float64(i), 1.3)))
		stacks = append(stacks, timed(with(prog("main", "dispatch"), Frame{Name: fmt.Sprintf("handler_%04d", i), Object: "/usr/local/bin/server", Kind: Program}), n, float64(n*3)))
	}
	return meta("calls", stacks, true), stacks
}

// largePage is largeProfile(50000, 1000000) and its page with the
// default options, made once per test process: TestLargePageSize and
// TestBrowserLarge both read them (and must not change them).
var largePage = sync.OnceValues(func() (large, error) {
	meta, stacks := largeProfile(50000, 1000000)
	var b bytes.Buffer
	err := WriteHTML(&b, meta, stacks, Options{})
	return large{meta, stacks, b.Bytes()}, err
})

type large struct {
	meta   Meta
	stacks []Stack
	html   []byte
}

// largeProfile has nStacks distinct stacks and about nSamples samples: random
// walks down a call tree of 4000 functions in a few objects, sample counts
// long-tailed over the stacks.
func largeProfile(nStacks, nSamples int) (Meta, []Stack) {
	r := rand.New(rand.NewPCG(1, 2))
	objs := []struct {
		path string
		kind Kind
	}{{"/usr/local/bin/db", Program}, {"/usr/lib/x86_64-linux-gnu/libc.so.6", Library}, {"/usr/lib/x86_64-linux-gnu/libssl.so.3", Library}, {"[kernel.kallsyms]", Kernel}}
	fns := make([]Frame, 4000)
	for i := range fns {
		o := objs[0]
		switch {
		case i%10 == 7:
			o = objs[1]
		case i%10 == 8:
			o = objs[2]
		case i%20 == 9:
			o = objs[3]
		}
		fns[i] = Frame{Name: fmt.Sprintf("ns::Component%d::method_%d(int, std::string const&)", i/16, i), Object: o.path, Kind: o.kind}
	}
	seen := map[string]bool{}
	var stacks []Stack
	weights := make([]float64, 0, nStacks)
	sum := 0.0
	for len(stacks) < nStacks {
		depth := 4 + r.IntN(22)
		fs := []Frame{{Name: "main", Object: objs[0].path, Kind: Program}}
		f := r.IntN(8)
		var key []byte
		for d := 0; d < depth; d++ {
			// Children of f are a few functions near it: a tree-like call graph.
			f = (f*7 + 1 + r.IntN(3+d)) % len(fns)
			fs = append(fs, fns[f])
			key = strconv.AppendInt(append(key, ','), int64(f), 10)
		}
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		stacks = append(stacks, Stack{Frames: fs})
		w := 1 / math.Pow(float64(len(stacks)), 0.9)
		weights = append(weights, w)
		sum += w
	}
	for i := range stacks {
		n := uint64(math.Max(1, math.Round(weights[i]/sum*float64(nSamples))))
		stacks[i].Samples = n
		stacks[i].Time = float64(n) * period
		stacks[i].Calls = float64(n) * float64(1+r.IntN(50))
	}
	return meta("lbr", stacks, true), stacks
}

func meta(source string, stacks []Stack, calls bool) Meta {
	var n uint64
	for _, s := range stacks {
		n += s.Samples
	}
	return Meta{Command: "./workload --synthetic", Source: source, Samples: n, HasTime: true, HasCalls: calls}
}
