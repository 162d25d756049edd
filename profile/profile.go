package profile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/ccmap"
)

// A Profile is one recording folded by function.
type Profile struct {
	// Map is folded by function: every FuncID is an index into Funcs.
	// Sampled stacks are in Self/Total (weighted by each sample's period);
	// call-edge events (LBR estimates, probe hits, call samples) in Calls.
	Map   *ccmap.Map
	Funcs []Func
	// Sites describes the call sites of Map's edges (CallSite.Addr is the
	// call instruction's address in its object's address space).
	Sites map[ccmap.CallSite]Site
	// Leaves splits the self weight of functions whose sampled
	// instructions lie in code inlined into them, by the inlined frames
	// of those instructions: for each such function (by FuncID), one
	// LeafChain per distinct chain of source frames, heaviest first,
	// whose Self weights sum to the function's self weight in Map. Set
	// only when the profile was loaded with source positions (engine's
	// SiteLines) and debug information gives inlined frames; nil
	// otherwise. A merge (Merger) adds up the chains of an address.
	Leaves map[ccmap.FuncID][]LeafChain
	// Instrs are the sampled instructions: the self weight sampled at
	// each address, with its source frames. Set only when the profile
	// was loaded with them (engine's Instrs, which takes source
	// positions too); a merge (Merger) leaves them out.
	Instrs []Instr
	// Executed and BranchCalls are what an LBR recording loaded with
	// Instrs gives sample-based FDO, counted in branch-stack entries as
	// AutoFDO counts them: how often each instruction ran (in the
	// stretches of code between two taken branches; Instr.Self is the
	// count), and each call taken (from the call instruction at
	// BranchCall.Site, Site.Self times). Empty for other recordings.
	Executed    []Instr
	BranchCalls []BranchCall
	// Branches are the taken branches of an LBR recording loaded with
	// Instrs whose source is in an object's code (the target may be
	// anywhere), and the conditional branches not taken between two
	// entries, as BOLT counts them, in address order. Empty for other
	// recordings.
	Branches []Branch
	// OffCPU is the time threads spent off the CPU, for a recording made
	// with `record --off-cpu` (nil otherwise): folded by function as Map
	// is, each interval the stack its thread left the CPU with, weighted
	// by the interval's length in nanoseconds (Self, Total; Stacks counts
	// the intervals). An interval whose thread was preempted while
	// runnable ends in the frame Preempted; one without a stack (not
	// sampled, or the recording could not sample the kernel) is the one
	// frame NoOffCPUStack. Recording.OffCPU has its totals.
	OffCPU *ccmap.Map
	// Measure says what Map's weights are: the sampled weight (zero), or,
	// for a profile report.Weighted made, the time off the CPU or the wall
	// time (on and off the CPU) in nanoseconds.
	Measure Measure
	// HasCalls says whether a source that counts calls (lbr, calls,
	// exact) gave samples: then edge counts are Calls; for timer there are
	// no call counts.
	HasCalls  bool
	Recording Recording
	// Warnings are every problem found while loading, once each (objects
	// that could not be symbolized, records the reader skipped, the error
	// that stopped reading), for the report to show (see
	// Recording.Incomplete).
	Warnings []string
}

// Func is one function: its display name (demangled, without parameter
// lists; "[object+0xoffset]" or "[unknown]" when no symbol covers it) and
// the object it lives in.
type Func struct {
	Name   string
	Object string // path of the object as recorded ("" when unknown)
	// LinkName is the symbol's name as in the symbol table (mangled);
	// "" when no symbol covers the function.
	LinkName string
	// Local is, for a function whose symbol is local to its object (a C
	// static function), its number among the object's local function
	// symbols of its name in address order, from 1; 0 otherwise.
	Local int
	// Start is the function's first address in its object (its symbol's
	// start; the address of an unnamed "[object+0x...]" function); 0 when
	// unknown.
	Start uint64
	// File and StartLine are the source file and the line where the
	// function is declared (DWARF, or a Go binary's pclntab), when the
	// profile was loaded with source positions (engine's SiteLines);
	// "" and 0 otherwise.
	File      string
	StartLine int
	// ObjectID is set in merged profiles (Merger): the build-id the
	// function's object was known by ("go:" and the Go build-id for a Go
	// one), or "path:" and its path when it had none. Merges line functions up
	// by it, so that one path with different build-ids in different
	// recordings stays different objects when merged profiles are merged
	// again.
	ObjectID string
}

// Site is one call site: the call instruction's object and offset in it,
// and its source position when debug information has one.
type Site struct {
	Object string
	Offset uint64
	File   string // "" without debug information
	Line   int
	// Frames are the source frames of the call instruction, innermost
	// first, when the profile was loaded with source positions and debug
	// information has them: one per function inlined there, the last the
	// caller itself (File and Line above are the first's). Empty
	// otherwise.
	Frames []SourceFrame
}

// LeafChain is the part of a function's self weight sampled at
// instructions with one chain of source frames.
type LeafChain struct {
	// Addr is the address, in the function's object, of the chain's
	// heaviest sampled instruction.
	Addr uint64
	// Frames are the chain's source frames, innermost first: one per
	// function inlined there, the last the function itself; a single
	// frame (or none, without debug information) for instructions of
	// the function's own code. The innermost frame's Line is that of
	// the instruction at Addr.
	Frames []SourceFrame
	Self   uint64 // self weight sampled with this chain
}

// SourceFrame is one source-level frame of a code address: the function
// (by name; inlined functions have no Func of their own) and the position.
type SourceFrame struct {
	Name      string
	File      string
	Line      int
	StartLine int // line where the function is declared; 0 when unknown
	// LinkName is the function's linkage name (mangled, as in DWARF's
	// DW_AT_linkage_name or the symbol table); Discriminator tells apart
	// the blocks of one Line (0 when none).
	LinkName      string
	Discriminator int
}

// BranchCall is a call taken from a call site, counted in branch stacks.
type BranchCall struct {
	Site   Instr // the call instruction; Self counts the calls
	Callee ccmap.FuncID
}

// Branch is a branch counted in branch stacks: a taken one (each entry),
// or a conditional branch not taken (one in the code run straight
// through between two entries: FallThrough, To the next instruction).
type Branch struct {
	From, To         ccmap.FuncID // the functions of the two ends
	FromAddr, ToAddr uint64       // their addresses in their objects
	Count, Mispreds  uint64       // in entries; mispredicted ones of them
	FallThrough      bool
}

// Instr is the self weight sampled at one instruction.
type Instr struct {
	Func ccmap.FuncID // the function the instruction is in
	Addr uint64       // its address in the function's object
	// Frames are its source frames, innermost first, as LeafChain's:
	// one per function inlined there, the last the function itself.
	Frames []SourceFrame
	Self   uint64 // self weight (summed periods) sampled there
}

// Recording holds the facts of the recording a profile was read from.
type Recording struct {
	File    string
	Command []string // from the cmdline feature, when present
	// Source is the one source of the events that gave samples (Mixed
	// when they have several; with no samples, that of the events).
	Source     Source
	Events     []Event
	Samples    uint64
	Lost       uint64 // samples the kernel reported lost (LOST, LOST_SAMPLES) and sample records that did not decode
	Throttled  uint64
	DurationNS uint64
	// Periods is the period history: each event's first period and every
	// change after it, in time order, read from the samples' PERIOD field.
	Periods []PeriodChange
	// ThreadPeriods lists, for each event whose threads' last samples
	// carry different periods (an adaptive change reaches the events the
	// recorder opened, not the copies threads that existed then
	// inherited, and such threads may sample through either in turns),
	// each thread's last period, by event and thread id. Empty when no
	// event's threads differ.
	ThreadPeriods []ThreadPeriod
	// Processes are the processes whose samples were kept, busiest
	// first, with their shares of the sampled weight.
	Processes []Process
	// Sampled, for a profile read with a filter of processes or threads,
	// lists every thread with samples in the recording, kept or not,
	// busiest first: what a filter that keeps little or nothing can be
	// told the recording has. Empty without a filter.
	Sampled []SampledThread
	// Leaf is what the repair of frameless first frames found.
	Leaf LeafStats
	// Stacks counts the sampled stacks that are not whole.
	Stacks StackStats
	// OffCPU is what the recording says of the time threads spent off
	// the CPU (zero without switch records: not recorded --off-cpu).
	OffCPU OffCPUStats
	// BuildIDs are the build-ids the recording gives its objects (its
	// build-id table and MMAP2 records), by object path as recorded;
	// objects without a known build-id are absent.
	BuildIDs map[string]buildid.ID
	// Incomplete says that records of the file were lost, skipped or cut
	// off while it was read (a warning in Profile.Warnings says which):
	// the profile is of what could be read.
	Incomplete bool
	// GoBuildIDs are the Go build-ids (the .note.go.buildid note, as
	// `go tool buildid` prints it) of the objects with functions in the
	// profile that have no GNU build-id, by object path, when the profile
	// was loaded with source positions.
	GoBuildIDs map[string]string
}

// OffCPUStats are the totals of a recording's time off the CPU.
type OffCPUStats struct {
	// Recorded: the recording has switch records (record --off-cpu).
	Recorded bool
	// OnCPUTime: the on-CPU samples are of clock events (cpu-clock,
	// task-clock): their weights are nanoseconds, as the time off the CPU.
	OnCPUTime bool
	// NS is the time the kept threads spent off the CPU, in nanoseconds,
	// over Intervals intervals; PreemptedNS and Preempted are the part
	// spent preempted while runnable.
	NS, Intervals          uint64
	PreemptedNS, Preempted uint64
	// NoStack counts the intervals without the stack their thread left
	// the CPU with (no off-CPU event: a recording that could not sample
	// the kernel; or its sample lost), NoStackNS their time.
	NoStack, NoStackNS uint64
	// StackLost counts the intervals without a stack that had one
	// coming: a switch out seen whole, not a new thread's first wait, in
	// a recording with the off-CPU event (its sample was lost).
	StackLost uint64
	// Open counts the intervals the recording did not see whole: threads
	// off the CPU at its start (first seen coming in), at its end, or
	// when they exited.
	OpenAtStart, OpenAtEnd, EndedByExit uint64
	// Unmatched counts off-CPU stacks no switch record took (lost
	// records).
	Unmatched uint64
	// SwitchesLost counts the records the kernel lost from the ring of
	// the switch records (PERF_RECORD_LOST of their event).
	SwitchesLost uint64
	// Threads is each kept thread's life: on the CPU and off it.
	Threads []ThreadTime
}

// ThreadTime is one thread's life in a recording with switch records:
// from its creation (or the recording's start) to its exit (or the
// recording's end), its time on the CPU and off it, in nanoseconds.
type ThreadTime struct {
	PID, TID    uint32
	Comm        string
	LifeNS      uint64
	OnNS, OffNS uint64
}

// Measure is what a profile's Map weighs.
type Measure uint8

const (
	// Sampled: samples weighted by their period (time on the CPU in
	// nanoseconds for the software clocks, occurrences of a hardware
	// event), and calls.
	Sampled Measure = iota
	// OffCPUTime: nanoseconds off the CPU (Profile.OffCPU).
	OffCPUTime
	// WallTime: nanoseconds on the CPU (a clock event's samples) and off
	// it, together.
	WallTime
)

// String names the measure as --weight and the JSON's recording.measure
// do: "samples", "off-cpu", "wall".
func (m Measure) String() string {
	switch m {
	case OffCPUTime:
		return "off-cpu"
	case WallTime:
		return "wall"
	}
	return "samples"
}

// Preempted names the frame that ends the stacks of intervals spent
// preempted while runnable (off the CPU without blocking).
const Preempted = "[preempted]"

// NoOffCPUStack names the one frame of an interval off the CPU whose
// stack the recording does not have.
const NoOffCPUStack = "[off-CPU, no stack]"

// Process is one process of a recording and its share of the samples
// kept.
type Process struct {
	PID     uint32
	Comm    string // its last command name in the recording; "" when none was recorded
	Samples uint64
	Weight  uint64  // the samples' summed period
	Share   float64 // Weight as a share of all kept samples' weight
}

// SampledThread is one thread of a recording under one command name,
// and its samples.
type SampledThread struct {
	PID, TID uint32
	Comm     string // its process's command name at those samples; "" when none was recorded
	Samples  uint64
}

// Event is one recorded event: its name and its fixed period or frequency
// (one of them is zero).
type Event struct {
	Name   string
	Period uint64
	Freq   uint64
	// OffCPU: the off-CPU event (record --off-cpu), whose samples are
	// the stacks threads leave the CPU with (Profile.OffCPU's), not
	// weight of their own.
	OffCPU bool
	// Switches: an event that carries switch records and samples nothing
	// (the software dummy event of record --off-cpu, or perf's).
	Switches bool
}

// ThreadPeriod is the period of one thread's last sample of an event.
type ThreadPeriod struct {
	Event  string
	TID    uint32
	Period uint64
}

// PeriodsInForce says, for each event whose period changed, the period
// of its threads' last samples: "cpu-clock 2000000" when every thread
// ended at one, else "cpu-clock 2000000 (1 thread), 250000 (4 threads)",
// most threads first. "" when no period changed.
func (r *Recording) PeriodsInForce() string {
	last := map[string]uint64{}
	var names []string
	for _, c := range r.Periods {
		if _, ok := last[c.Event]; ok && !slices.Contains(names, c.Event) {
			names = append(names, c.Event)
		}
		last[c.Event] = c.Period
	}
	var parts []string
	for _, name := range names {
		type group struct {
			period  uint64
			threads int
		}
		var gs []group
		for _, tp := range r.ThreadPeriods {
			if tp.Event != name {
				continue
			}
			i := slices.IndexFunc(gs, func(g group) bool { return g.period == tp.Period })
			if i < 0 {
				gs, i = append(gs, group{period: tp.Period}), len(gs)
			}
			gs[i].threads++
		}
		if len(gs) < 2 {
			parts = append(parts, fmt.Sprintf("%s %d", name, last[name]))
			continue
		}
		slices.SortStableFunc(gs, func(a, b group) int { return cmp.Compare(b.threads, a.threads) })
		var ps []string
		for _, g := range gs {
			unit := "threads"
			if g.threads == 1 {
				unit = "thread"
			}
			ps = append(ps, fmt.Sprintf("%d (%d %s)", g.period, g.threads, unit))
		}
		parts = append(parts, name+" "+strings.Join(ps, ", "))
	}
	return strings.Join(parts, "; ")
}

// PeriodChange says that from TimeNS (since the recording's first sample)
// the event's samples carry Period.
type PeriodChange struct {
	TimeNS uint64
	Event  string
	Period uint64
}

// LeafStats counts what the leaf repair (unwind.RepairCallchain) found in
// the samples of frame-pointer events that carry a stack copy: samples
// checked, samples whose chain had skipped the caller of the running
// function (restored), and samples the CFI could not judge (kept as the
// kernel wrote them).
type LeafStats struct {
	Checked  uint64
	Inserted uint64
	Unknown  uint64
}

// BrokenStack names the one function that stands for every stack that
// cannot be real (StackStats.Broken): the samples keep their weight in
// the profile's total, as a root frame of their own without edges.
const BrokenStack = "[broken stack]"

// StackStats counts the sampled stacks that are not whole, and their
// weight (summed periods).
type StackStats struct {
	// Broken are stacks that cannot be real: a return address in no
	// executable code, or one that no call instruction ends at (a frame
	// pointer chain that ran into data). Each is folded as one BrokenStack
	// frame: out of the edges and contexts, in the total.
	Broken, BrokenWeight uint64
	// Cut are frame-pointer stacks that reached the kernel's depth limit
	// (MaxStack frames, kernel and user ones together: the event's
	// sample_max_stack, else the perf_event_max_stack sysctl): their
	// outer frames are missing, so their contexts are rooted in the
	// middle of the stack. They are folded as they are.
	Cut, CutWeight uint64
	MaxStack       uint64 // the depth limit of the cut stacks (the largest when events differ)
	// Unrooted are whole stacks with no way back to an entry: their
	// outermost function is no known thread or process entry and is
	// called elsewhere in the profile, so their outer frames were lost
	// (a frame-pointer walk that stopped in code without frame pointers).
	// They are folded as they are, their contexts rooted mid-stack.
	Unrooted, UnrootedWeight uint64
}
