package flamegraph

import "fmt"

// Kind is what kind of object a frame's code belongs to; the page colours
// frames by kind.
type Kind uint8

const (
	Unknown Kind = iota // object not known
	Program             // the profiled program's own executable
	Library             // a shared library
	Kernel              // the kernel or a kernel module
	JIT                 // code generated at run time (perf map, JIT dump)
	Broken              // stands for a broken or truncated part of a stack
	numKinds
)

var kindNames = [numKinds]string{"unknown", "program", "library", "kernel", "jit", "broken"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Frame is one function on a stack.
type Frame struct {
	Name   string // function name as shown; never empty for a real frame
	Object string // file of the object holding the code; "" when unknown
	Kind   Kind
}

// Stack is one calling context and its weights. Identical stacks may occur
// more than once; their weights add up.
type Stack struct {
	Frames  []Frame // root (outermost caller) first, leaf last
	Time    float64 // samples × period, in nanoseconds
	Samples uint64  // samples whose stack this is
	Calls   float64 // estimated calls into the leaf in this context; 0 when unknown
	// OffCPU is the time, in nanoseconds, threads spent off the CPU with
	// this stack (they left the CPU in its leaf); 0 for a profile without
	// time off the CPU. A context may have both weights.
	OffCPU float64
}

// Meta says what was recorded; the page's header shows it.
type Meta struct {
	Title     string // page title; "" gives "hwprof flame graph"
	Command   string // the profiled command line
	Source    string // sample source: lbr, calls, timer, exact
	Samples   uint64 // samples recorded
	Lost      uint64 // samples the kernel lost
	Throttled uint64 // samples throttled away
	HasTime   bool   // Stack.Time is meaningful
	HasCalls  bool   // Stack.Calls is meaningful
	HasOffCPU bool   // Stack.OffCPU is meaningful (a recording of the time off the CPU)
	// HasWall says that Stack.Time is nanoseconds on the CPU (samples of a
	// clock event), so that Time + OffCPU is wall time; with HasOffCPU.
	HasWall  bool
	Warnings []string
}

// Weight selects which of a Stack's weights a frame's width shows.
type Weight uint8

const (
	WeightTime    Weight = iota // Stack.Time (ns)
	WeightCalls                 // Stack.Calls
	WeightSamples               // Stack.Samples
	WeightOffCPU                // Stack.OffCPU (ns)
	WeightWall                  // Stack.Time + Stack.OffCPU (ns): on and off the CPU
)

func (w Weight) String() string {
	switch w {
	case WeightTime:
		return "time"
	case WeightCalls:
		return "calls"
	case WeightSamples:
		return "samples"
	case WeightOffCPU:
		return "off-cpu"
	case WeightWall:
		return "wall"
	}
	return fmt.Sprintf("weight(%d)", uint8(w))
}

// of returns the stack's weight w.
func (w Weight) of(s *Stack) float64 {
	switch w {
	case WeightCalls:
		return s.Calls
	case WeightSamples:
		return float64(s.Samples)
	case WeightOffCPU:
		return s.OffCPU
	case WeightWall:
		return s.Time + s.OffCPU
	}
	return s.Time
}

// DefaultMinShare is the share of the whole below which sibling frames are
// merged: 0.1 pixel of a 1200-pixel-wide graph, flamegraph.pl's default
// minimum width at its default width.
const DefaultMinShare = 0.1 / 1200

// Options control the pages.
type Options struct {
	// Weight is the weight shown first: WeightTime, WeightCalls,
	// WeightOffCPU or WeightWall. A weight the profile lacks (Meta.HasTime,
	// HasCalls, HasOffCPU, HasWall) falls back to time, else calls.
	Weight Weight
	// Icicle draws the root at the top (an icicle graph) instead of the
	// bottom.
	Icicle bool
	// MinShare is the share of the whole under every weight shown below
	// which a frame is merged with its narrow siblings; 0 means
	// DefaultMinShare, a negative value merges nothing.
	MinShare float64
}
