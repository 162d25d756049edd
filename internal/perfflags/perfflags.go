package perfflags

import (
	"errors"
	"flag"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/perf/event"
)

// Register binds perf record's event flags to fs, writing into c:
//
//	-e, --event EVENT         add events (repeatable; "a,b" adds two)
//	-c, --count N             sample every N events
//	-F, --freq N|max          sample N times a second
//	-g                        record call graphs (frame pointers unless --call-graph says otherwise)
//	--call-graph MODE         fp[,MAXSTACK], dwarf[,SIZE] or lbr
//	-j, --branch-filter LIST  sample branch stacks: any_call,u ...
//	-b, --branch-any          sample branch stacks of any branch
//	--no-inherit              do not follow child tasks
//
// perf's -i (--no-inherit) is left to the caller, which may want -i for an
// input file. Values are checked as they are parsed; -c and -F together,
// and whether an event exists, are checked by event.BuildAttrs.
func Register(fs *flag.FlagSet, c *event.RecordConfig) {
	// both names of a flag, with one usage
	both := func(v flag.Value, short, long, usage string) {
		fs.Var(v, short, usage)
		fs.Var(v, long, usage)
	}
	both((*eventsFlag)(c), "e", "event", "event `spec` to sample: cycles, cpu-clock, rNNNN, pmu/terms/ with :modifiers (repeatable)")
	both((*countFlag)(c), "c", "count", "sample every `N` events (period)")
	both((*freqFlag)(c), "F", "freq", "sample `N` times a second, or max (default 4000)")
	fs.Var((*gFlag)(c), "g", "record call graphs (frame pointers unless --call-graph is given)")
	fs.Var((*callGraphFlag)(c), "call-graph", "call graph `mode`: fp[,MAXSTACK], dwarf[,SIZE] or lbr")
	b := &branch{c: c}
	both(&branchFilterFlag{b}, "j", "branch-filter", "sample branch stacks, filtered by comma-separated `words`: any, any_call, any_ret, ind_call, ind_jmp, call, cond, u, k, hv, ...")
	both(&branchAnyFlag{b}, "b", "branch-any", "sample branch stacks of any branch (same as -j any)")
	fs.BoolVar(&c.NoInherit, "no-inherit", c.NoInherit, "do not count or sample child tasks")
}

type eventsFlag event.RecordConfig

func (f *eventsFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.Events, ",")
}

func (f *eventsFlag) Set(s string) error {
	if _, err := event.SplitList(s); err != nil {
		return err
	}
	f.Events = append(f.Events, s)
	return nil
}

type countFlag event.RecordConfig

func (f *countFlag) String() string {
	if f == nil || f.Period == 0 {
		return ""
	}
	return strconv.FormatUint(f.Period, 10)
}

func (f *countFlag) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return errors.New("want a positive decimal period")
	}
	f.Period = n
	return nil
}

type freqFlag event.RecordConfig

func (f *freqFlag) String() string {
	switch {
	case f == nil || f.Freq == 0:
		return ""
	case f.Freq == event.FreqMax:
		return "max"
	}
	return strconv.FormatUint(f.Freq, 10)
}

func (f *freqFlag) Set(s string) error {
	if strings.EqualFold(s, "max") {
		f.Freq = event.FreqMax
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 32) // perf keeps the frequency in an unsigned int
	if err != nil || n == 0 {
		return errors.New("want a positive decimal frequency or max")
	}
	f.Freq = n
	return nil
}

// gFlag is -g: frame pointers, unless --call-graph chose a mode (in
// either order).
type gFlag event.RecordConfig

func (f *gFlag) String() string   { return "" }
func (f *gFlag) IsBoolFlag() bool { return true }

func (f *gFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	if on && f.CallGraph == "" {
		f.CallGraph = "fp"
	}
	if !on {
		f.CallGraph = ""
	}
	return nil
}

type callGraphFlag event.RecordConfig

func (f *callGraphFlag) String() string {
	if f == nil {
		return ""
	}
	return f.CallGraph
}

func (f *callGraphFlag) Set(s string) error {
	if err := event.CheckCallGraph(s); err != nil {
		return err
	}
	f.CallGraph = s
	return nil
}

// branch is what -j and -b share: perf refuses -b with -j, and -j twice.
type branch struct {
	c   *event.RecordConfig
	set bool
}

type branchFilterFlag struct{ b *branch }

func (f *branchFilterFlag) String() string {
	if f == nil || f.b == nil {
		return ""
	}
	return f.b.c.BranchFilter
}

func (f *branchFilterFlag) Set(s string) error {
	if f.b.set {
		return errors.New("cannot use --branch-any (-b) with --branch-filter (-j), or -j twice")
	}
	if _, err := event.ParseBranchFilter(s); err != nil {
		return err
	}
	f.b.c.BranchFilter, f.b.set = s, true
	return nil
}

type branchAnyFlag struct{ b *branch }

func (f *branchAnyFlag) String() string   { return "" }
func (f *branchAnyFlag) IsBoolFlag() bool { return true }

func (f *branchAnyFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil || !on {
		return errors.New("-b takes no value")
	}
	if f.b.set {
		return errors.New("cannot use --branch-any (-b) with --branch-filter (-j)")
	}
	f.b.c.BranchFilter, f.b.set = "any", true
	return nil
}
