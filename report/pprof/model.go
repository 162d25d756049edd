package pprof

import "fmt"

// Mapping is one object mapped into the profiled process: an executable, a
// shared library, the vdso. Start, Limit and Offset say where: runtime
// addresses [Start, Limit) hold the object's file bytes from Offset on.
type Mapping struct {
	Path    string // file of the object; "" when unknown
	BuildID string // build-id in lower-case hex; "" when unknown
	Start   uint64 // first runtime address
	Limit   uint64 // one past the last runtime address
	Offset  uint64 // file offset mapped at Start
}

// Function is one function of the program.
type Function struct {
	Name       string // name as shown (demangled)
	SystemName string // name as in the symbol table (mangled); "" when the same as Name
	File       string // source file; "" when unknown
	StartLine  int    // line of the function's declaration; 0 when unknown
}

// Line is one source position of a Location: a function and a line in it.
type Line struct {
	Function int // index into Profile.Functions
	Line     int // source line; 0 when unknown
}

// Location is one instruction address and the source positions it stands for.
type Location struct {
	Mapping int    // index into Profile.Mappings; -1 when the object is unknown
	Address uint64 // runtime address; inside the mapping's [Start, Limit) when Mapping >= 0
	// Lines are the source positions of the address, innermost first: an
	// address in code that was inlined has one Line per inlined function,
	// and the last Line is the function the code was compiled into (pprof's
	// order). Empty when the address was not symbolized.
	Lines []Line
}

// Sample is one sampled calling context and its weights.
type Sample struct {
	Stack   []int // indexes into Profile.Locations, leaf first
	Samples int64 // samples with this stack
	TimeNS  int64 // time they stand for, in nanoseconds (samples × period); used when Profile.HasTime
	// Weight is their summed period in events (cycles, calls retired)
	// when the sampling event is not a clock; used when
	// Profile.WeightType is set.
	Weight int64
	// OffCPUNS is the time threads spent off the CPU with this stack, in
	// nanoseconds; used when Profile.HasOffCPU. A sample has either
	// sampled weight or time off the CPU.
	OffCPUNS int64
}

// Edge is one measured call edge: how often Caller called Callee from one
// call site.
type Edge struct {
	Caller int // index into Profile.Functions
	Callee int // index into Profile.Functions
	// Site is the index into Profile.Locations of the call instruction in
	// the caller, -1 when the call site is not known. Its innermost Line's
	// function must be Caller.
	Site  int
	Calls int64 // calls measured (or estimated) over this edge
}

// Profile is what Write writes: a symbolized profile of one recording, or
// of several merged.
type Profile struct {
	// Mappings are the objects; the first is the profiled program's own
	// executable (pprof treats the first mapping as the main binary).
	Mappings  []Mapping
	Functions []Function
	Locations []Location
	Samples   []Sample // sampled stacks (the time profile)
	Edges     []Edge   // measured call edges; used when HasCalls

	// Comments are the recording facts (command, source, events, periods,
	// lost samples, machine); pprof shows them with -comments.
	Comments []string
	// PeriodNS is the nominal sampling period in nanoseconds (pprof's
	// period); 0 when unknown or when periods varied. Weights come from
	// Sample.TimeNS, never from this.
	PeriodNS int64
	// StartNS is when the recording started, Unix nanoseconds; 0 when
	// unknown. DurationNS is how long it ran; 0 when unknown.
	StartNS, DurationNS int64

	HasTime bool // Sample.TimeNS is meaningful (a time source)
	// WeightType, when set, names the event whose periods Sample.Weight
	// sums (a sample type WeightType/count, after samples/count): the
	// sampled weight of a source whose event is not a clock.
	WeightType string
	HasCalls   bool // Edges hold measured call counts (lbr, calls, exact)
	// HasOffCPU: Sample.OffCPUNS is meaningful (a recording made with
	// --off-cpu): the profile has the sample type off-cpu/nanoseconds,
	// and, with HasTime, wall/nanoseconds (time on and off the CPU).
	HasOffCPU bool
}

// Weight is what a profile's call-graph edges weigh: time or calls.
type Weight uint8

const (
	Time  Weight = iota // time: sampled stacks weighted by Sample.TimeNS
	Calls               // calls: measured call edges weighted by Edge.Calls
)

func (w Weight) String() string {
	switch w {
	case Time:
		return "time"
	case Calls:
		return "calls"
	}
	return fmt.Sprintf("weight(%d)", uint8(w))
}

// ParseWeight parses "time" or "calls", the values of a --pgo-weight flag.
func ParseWeight(s string) (Weight, error) {
	switch s {
	case "time":
		return Time, nil
	case "calls":
		return Calls, nil
	}
	return 0, fmt.Errorf("parse weight: %q is neither time nor calls", s)
}

// Options control Write.
type Options struct {
	// Weight is the sample type pprof shows first (its default sample
	// type) in an ordinary profile, and the edge weight of a PGO profile.
	// A weight the profile lacks is an error in a PGO profile; in an
	// ordinary profile the other weight is shown first.
	Weight Weight
	// PGO writes a profile for `go build -pgo` (see the package doc):
	// its first sample type is the chosen weight under a name the Go
	// compiler accepts.
	PGO bool
	// DefaultType, when set, is the sample type an ordinary profile shows
	// first ("off-cpu", "wall"), instead of the one Weight picks; a type
	// the profile lacks is ignored.
	DefaultType string
	// Warn, if set, is told what Write had to repair in the profile (see
	// Profile.Repair): a function without a name, a negative weight.
	Warn func(string)
}
