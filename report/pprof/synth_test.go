package pprof

import "fmt"

// synthetic returns a small profile of a C++ program shaped like a real
// recording: the program and libc with build-ids, a function inlined into
// another, a mangled name, an unmapped kernel frame, recursion, a call edge
// with an unknown call site, and an adaptive period (the time of a sample
// is not a fixed multiple of its count).
func synthetic() *Profile {
	return &Profile{
		Mappings: []Mapping{
			{Path: "/usr/bin/app", BuildID: "4f2a9c0e77d1b3a5", Start: 0x400000, Limit: 0x480000, Offset: 0},
			{Path: "/usr/lib/x86_64-linux-gnu/libc.so.6", BuildID: "c0ffee12345678aa", Start: 0x7f0000000000, Limit: 0x7f0000100000, Offset: 0x28000},
		},
		Functions: []Function{
			{Name: "main", File: "app.cc", StartLine: 10},     // 0
			{Name: "process", File: "app.cc", StartLine: 30},  // 1
			{Name: "parse", File: "app.cc", StartLine: 60},    // 2
			{Name: "checksum", File: "app.cc", StartLine: 90}, // 3
			{Name: "memcpy"}, // 4
			{Name: "std::vector<int, std::allocator<int> >::push_back", SystemName: "_ZNSt6vectorIiSaIiEE9push_backERKi", File: "/usr/include/c++/12/bits/stl_vector.h", StartLine: 1187}, // 5
			{Name: "entry_SYSCALL_64"}, // 6
		},
		Locations: []Location{
			{Mapping: 0, Address: 0x401010, Lines: []Line{{0, 15}}},           // 0 main calls process
			{Mapping: 0, Address: 0x401020, Lines: []Line{{0, 16}}},           // 1 main calls parse
			{Mapping: 0, Address: 0x402100, Lines: []Line{{3, 95}, {1, 40}}},  // 2 checksum inlined into process
			{Mapping: 0, Address: 0x402200, Lines: []Line{{1, 42}}},           // 3 process calls memcpy
			{Mapping: 1, Address: 0x7f0000001234, Lines: []Line{{4, 0}}},      // 4 in memcpy
			{Mapping: 0, Address: 0x403000, Lines: []Line{{2, 70}}},           // 5 in parse
			{Mapping: 0, Address: 0x403100, Lines: []Line{{2, 72}}},           // 6 parse calls push_back
			{Mapping: 0, Address: 0x404000, Lines: []Line{{5, 1190}}},         // 7 in push_back
			{Mapping: 0, Address: 0x403200, Lines: []Line{{2, 75}}},           // 8 parse calls parse
			{Mapping: -1, Address: 0xffffffff81000040, Lines: []Line{{6, 0}}}, // 9 kernel entry
			{Mapping: 0, Address: 0x403300, Lines: []Line{{2, 77}}},           // 10 parse calls read (syscall)
		},
		Samples: []Sample{
			{Stack: []int{2, 0}, Samples: 50, TimeNS: 50e6},
			{Stack: []int{4, 3, 0}, Samples: 20, TimeNS: 20e6},
			{Stack: []int{5, 1}, Samples: 15, TimeNS: 30e6},
			{Stack: []int{7, 6, 1}, Samples: 10, TimeNS: 10e6},
			{Stack: []int{3, 0}, Samples: 5, TimeNS: 5e6},
			{Stack: []int{5, 8, 1}, Samples: 4, TimeNS: 8e6},
			{Stack: []int{9, 10, 8, 1}, Samples: 2, TimeNS: 2e6},
		},
		Edges: []Edge{
			{Caller: 0, Callee: 1, Site: 0, Calls: 1},
			{Caller: 0, Callee: 2, Site: 1, Calls: 1},
			{Caller: 1, Callee: 4, Site: 3, Calls: 1000},
			{Caller: 2, Callee: 5, Site: 6, Calls: 250000},
			{Caller: 2, Callee: 2, Site: 8, Calls: 40},
			{Caller: 0, Callee: 4, Site: -1, Calls: 7},
		},
		Comments:   []string{"command: ./app input.txt", "source: lbr", "lost samples: 0"},
		PeriodNS:   1e6,
		StartNS:    1_700_000_000_000_000_000,
		DurationNS: 2e9,
		HasTime:    true,
		HasCalls:   true,
	}
}

// frame is one frame of an expanded stack: a function and a line.
type frame struct {
	fn   string
	line int
}

// frames expands a stack of the input model into frames, leaf first, each
// location's inlined frames innermost first.
func (p *Profile) frames(stack []int) []frame {
	var out []frame
	for _, l := range stack {
		for _, ln := range p.Locations[l].Lines {
			out = append(out, frame{p.Functions[ln.Function].Name, ln.Line})
		}
	}
	return out
}

// pair is a caller frame (function and line) and the function it calls:
// what pprof and the Go compiler weigh as a call-graph edge.
type pair struct {
	caller string
	line   int
	callee string
}

func (pr pair) String() string { return fmt.Sprintf("%s:%d -> %s", pr.caller, pr.line, pr.callee) }

// addPairs adds w to every adjacent pair of frames.
func addPairs(m map[pair]int64, fs []frame, w int64) {
	if w == 0 {
		return
	}
	for i := 0; i+1 < len(fs); i++ {
		m[pair{fs[i+1].fn, fs[i+1].line, fs[i].fn}] += w
	}
}

// wantEdgePairs is what the measured edges of p should weigh as adjacent
// pairs: each edge's calls, on (caller at its call-site line, callee).
func wantEdgePairs(p *Profile) map[pair]int64 {
	m := map[pair]int64{}
	for _, e := range p.Edges {
		line := 0
		if e.Site >= 0 {
			line = p.Locations[e.Site].Lines[0].Line
		}
		if e.Calls != 0 {
			m[pair{p.Functions[e.Caller].Name, line, p.Functions[e.Callee].Name}] += e.Calls
		}
	}
	return m
}

// wantStackPairs is what p's sampled stacks weigh as adjacent pairs under
// time.
func wantStackPairs(p *Profile) map[pair]int64 {
	m := map[pair]int64{}
	for _, s := range p.Samples {
		addPairs(m, p.frames(s.Stack), s.TimeNS)
	}
	return m
}
