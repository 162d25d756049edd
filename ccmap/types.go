package ccmap

import (
	"fmt"
	"math"
)

// A FuncID names one function. The caller assigns them (for example one id
// per symbolized function); the map never interprets them.
type FuncID uint32

// A CallSite is one call instruction: the calling function and the
// instruction's address (or an offset; the caller decides, consistently).
type CallSite struct {
	Caller FuncID
	Addr   uint64
}

func (s CallSite) String() string { return fmt.Sprintf("%d@%#x", s.Caller, s.Addr) }

// A Frame is one frame of a sampled stack.
type Frame struct {
	Func FuncID
	// Site is the address of the call in this frame that leads to the
	// frame below it (the next inner frame); 0 for the leaf.
	Site uint64
}

// String shows the function and, if any, the call site: "3@0x2010".
func (f Frame) String() string {
	if f.Site == 0 {
		return fmt.Sprintf("%d", f.Func)
	}
	return fmt.Sprintf("%d@%#x", f.Func, f.Site)
}

// A ContextID names one calling context: a node of the context tree (a
// root or a CalleeRef). IDs stay valid while nodes are only added
// (AddStack, AddEdgeInContext, Merge into the map); Prune renumbers them.
type ContextID int32

// NoContext is the ContextID of no context.
const NoContext ContextID = -1

// Measure selects one of the three weights every node carries.
type Measure uint8

const (
	// Self is sampled weight whose innermost frame (function), innermost
	// edge (call site, callee) or whole stack (context) is the node.
	Self Measure = iota
	// Total is inclusive sampled weight: stacks containing the node,
	// counted once per stack even when recursion repeats it.
	Total
	// Calls is the weight of call-edge events (AddEdge, AddEdgeInContext):
	// calls into a function, through a call site or edge, or in a context.
	Calls
)

var measureNames = [...]string{Self: "self", Total: "total", Calls: "calls"}

func (m Measure) String() string {
	if int(m) < len(measureNames) {
		return measureNames[m]
	}
	return fmt.Sprintf("Measure(%d)", uint8(m))
}

// Weights are the three counters of a node. Sampled stacks add their
// weight (the sample's period) to Self and Total, call-edge events to
// Calls.
type Weights struct {
	Self, Total, Calls uint64
}

// Get returns the weight m selects.
func (w Weights) Get(m Measure) uint64 {
	switch m {
	case Self:
		return w.Self
	case Total:
		return w.Total
	case Calls:
		return w.Calls
	}
	return 0
}

func (w *Weights) add(o Weights) {
	w.Self += o.Self
	w.Total += o.Total
	w.Calls += o.Calls
}

// Totals are the map's grand totals. Every fold adds to them, Merge adds
// them up, Prune leaves them unchanged.
type Totals struct {
	Samples uint64 // weight of all stacks added (AddStack)
	Stacks  uint64 // number of non-empty stacks added
	Calls   uint64 // weight of all call-edge events (AddEdge, AddEdgeInContext)
	Edges   uint64 // number of call-edge events
	// ContextCalls is the part of Calls that came with a context
	// (AddEdgeInContext).
	ContextCalls uint64
}

func (t *Totals) add(o Totals) {
	t.Samples += o.Samples
	t.Stacks += o.Stacks
	t.Calls += o.Calls
	t.Edges += o.Edges
	t.ContextCalls += o.ContextCalls
}

// Compensate scales an integer weight by 1/ratio without bias, as
// adaptive bursting compensates skipped samples: a sample folded with
// probability ratio must weigh weight/ratio. The fractional part is
// rounded up with probability equal to it, decided by u, a uniform random
// number in [0, 1) the caller draws, so the expectation is exactly
// weight/ratio while weights stay integers (which keeps Merge exact).
// A ratio outside (0, 1] returns weight unchanged.
func Compensate(weight uint64, ratio, u float64) uint64 {
	if !(ratio > 0 && ratio < 1) {
		return weight
	}
	x := float64(weight) / ratio
	if x >= math.MaxUint64 {
		return math.MaxUint64
	}
	f := math.Floor(x)
	w := uint64(f)
	if u < x-f {
		w++
	}
	return w
}
