package event

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/perf"
)

// Target says what a recording watches; it changes the attrs (a command
// is enabled on exec, CPU-wide recording samples CPU).
type Target int

const (
	TargetCommand Target = iota // fork and exec a program (perf record -- cmd)
	TargetPIDs                  // attach to running processes (perf record -p)
	TargetCPUs                  // every process on every CPU (perf record -a)
)

func (t Target) String() string {
	switch t {
	case TargetCommand:
		return "command"
	case TargetPIDs:
		return "pids"
	case TargetCPUs:
		return "cpus"
	}
	return "Target(" + strconv.Itoa(int(t)) + ")"
}

// FreqMax as RecordConfig.Freq asks for the highest rate the kernel
// allows (perf record -F max).
const FreqMax = ^uint64(0)

// DefaultFreq is the sampling frequency perf uses when neither -c nor -F
// is given.
const DefaultFreq = 4000

// RecordConfig is the part of a `perf record` command line that decides
// the attrs of its events.
type RecordConfig struct {
	Events       []string // -e values as given; each may hold several events ("a,b")
	Period       uint64   // -c (0 = unset)
	Freq         uint64   // -F (0 = unset; FreqMax = "max"); default when neither: DefaultFreq
	CallGraph    string   // "" none, "fp", "fp,MAXSTACK", "dwarf", "dwarf,SIZE", "lbr" (-g means "fp")
	BranchFilter string   // -j value, e.g. "any_call,u"; -b sets "any"
	NoInherit    bool     // --no-inherit
	Target       Target
	PMUs         map[string]*PMU // from DiscoverPMUs; nil = discover from SysfsPMURoot when a pmu/.../ event needs it
	// Limits are the kernel.perf_event_* sysctls perf consults (-F is
	// lowered to the maximum sample rate, fp,N is ignored above the
	// maximum stack depth). nil = read them from /proc/sys; a zero field
	// means no limit.
	Limits *perf.KernelLimits
}

// callchainMode mirrors enum perf_call_graph_mode in perf's callchain.h.
type callchainMode int

const (
	callchainNone callchainMode = iota
	callchainFP
	callchainDWARF
	callchainLBR
)

// callchainParam mirrors the parts of perf's struct callchain_param that
// reach the attr.
type callchainParam struct {
	enabled  bool
	mode     callchainMode
	dumpSize uint32 // sample_stack_user for dwarf
	maxStack uint16 // sample_max_stack
}

const (
	defaultStackDump = 8192
	maxStackDump     = 65528 // USHRT_MAX rounded down to 8
)

// recordOpts mirrors the parts of perf's struct record_opts that BuildAttrs
// needs, after perf's own checks (record_opts__config).
type recordOpts struct {
	freq          uint64 // opts->freq: 0 means period mode
	interval      uint64 // opts->default_interval
	userFreq      bool
	userInterval  bool
	callchain     callchainParam
	branchStack   perf.BranchSampleType
	sampleAddress bool // dwarf call graphs also sample data addresses
	noInherit     bool
	target        Target
}

// BuildAttrs returns the events and attrs `perf record` (6.1) opens for c,
// in perf's order: the events of c.Events as written, then, for
// TargetCPUs, the dummy event perf adds to track mmaps and comms. The
// attrs equal what `perf record -vv` prints for the same options (see
// perf.FprintAttr), including perf's quirks: the first event alone tracks
// mmap/comm/task, several events with different sample types get
// IDENTIFIER, a dwarf call graph also samples ADDR and DATA_SRC.
func BuildAttrs(c RecordConfig) ([]perf.Event, error) {
	opts, err := configOpts(c)
	if err != nil {
		return nil, err
	}
	r := resolver{pmus: c.PMUs}
	var evsels []*evsel
	for _, arg := range c.Events {
		list, err := SplitList(arg)
		if err != nil {
			return nil, err
		}
		for _, text := range list {
			e, err := r.resolve(text)
			if err != nil {
				return nil, err
			}
			evsels = append(evsels, e)
		}
	}
	if len(evsels) == 0 {
		return nil, errors.New("build attrs: no events")
	}
	// The first event tracks mmaps, comms and tasks; CPU-wide recording
	// uses a dummy event for that, enabled at once (record__open).
	tracking := evsels[0]
	if opts.target == TargetCPUs {
		if !tracking.isDummy() {
			tracking = systemWideDummy()
			evsels = append(evsels, tracking)
		}
		tracking.immediate = true
	}
	tracking.tracking = true
	for _, e := range evsels {
		if err := e.config(opts); err != nil {
			return nil, err
		}
	}
	configSampleID(evsels)
	out := make([]perf.Event, len(evsels))
	for i, e := range evsels {
		out[i] = perf.Event{Name: e.name, Attr: e.attr}
	}
	return out, nil
}

// configOpts checks c the way perf record checks its options and turns it
// into recordOpts.
func configOpts(c RecordConfig) (recordOpts, error) {
	o := recordOpts{noInherit: c.NoInherit, target: c.Target}
	if c.Target < TargetCommand || c.Target > TargetCPUs {
		return o, fmt.Errorf("build attrs: unknown target %v", c.Target)
	}
	limits := perf.KernelLimits{}
	if c.Limits != nil {
		limits = *c.Limits
	} else if l, err := perf.ReadKernelLimits(); err == nil {
		limits = l
	}
	if err := o.configFreq(c, limits); err != nil {
		return o, err
	}
	if c.CallGraph != "" {
		p, err := parseCallGraph(c.CallGraph, limits)
		if err != nil {
			return o, err
		}
		o.callchain = p
		o.sampleAddress = p.mode == callchainDWARF
	}
	if c.BranchFilter != "" {
		b, err := ParseBranchFilter(c.BranchFilter)
		if err != nil {
			return o, err
		}
		o.branchStack = b
	}
	return o, nil
}

// configFreq mirrors record_opts__config_freq.
func (o *recordOpts) configFreq(c RecordConfig, l perf.KernelLimits) error {
	o.userFreq, o.userInterval = c.Freq != 0, c.Period != 0
	if o.userFreq && o.userInterval {
		return errors.New("build attrs: cannot set frequency (-F) and period (-c) at the same time")
	}
	o.freq = DefaultFreq
	if o.userFreq {
		o.freq = c.Freq
		if c.Freq == FreqMax {
			if l.MaxSampleRate == 0 {
				return errors.New("build attrs: -F max: kernel.perf_event_max_sample_rate is unknown")
			}
			o.freq = l.MaxSampleRate
		}
	}
	if o.userInterval {
		o.interval, o.freq = c.Period, 0
		return nil
	}
	o.interval = o.freq
	if l.MaxSampleRate != 0 && o.freq > l.MaxSampleRate {
		o.freq = l.MaxSampleRate // perf warns and throttles
	}
	return nil
}

// CheckCallGraph reports whether s is a --call-graph value perf accepts
// (fp, fp,MAXSTACK, dwarf, dwarf,SIZE or lbr), before the kernel's limits
// apply.
func CheckCallGraph(s string) error {
	_, err := parseCallGraph(s, perf.KernelLimits{})
	return err
}

// parseCallGraph mirrors parse_callchain_record_opt for --call-graph.
func parseCallGraph(s string, l perf.KernelLimits) (callchainParam, error) {
	p := callchainParam{enabled: true}
	mode, arg, hasArg := strings.Cut(s, ",")
	bad := func(msg string) (callchainParam, error) {
		return callchainParam{}, fmt.Errorf("call graph %q: %s", s, msg)
	}
	switch mode {
	case "fp":
		p.mode = callchainFP
		if hasArg {
			n, err := strconv.ParseUint(arg, 0, 16)
			if err != nil {
				return bad(fmt.Sprintf("bad maximum stack depth %q", arg))
			}
			if l.MaxStack == 0 || n < l.MaxStack { // perf ignores depths at or over the sysctl
				p.maxStack = uint16(n)
			}
		}
	case "dwarf":
		p.mode, p.dumpSize = callchainDWARF, defaultStackDump
		if hasArg {
			n, err := strconv.ParseUint(arg, 0, 32)
			n = (n + 7) &^ 7
			if err != nil || n == 0 || n > maxStackDump {
				return bad(fmt.Sprintf("bad stack dump size %q (want 1-%d bytes)", arg, maxStackDump))
			}
			p.dumpSize = uint32(n)
		}
	case "lbr":
		p.mode = callchainLBR
		if hasArg {
			return bad("lbr takes no argument")
		}
	default:
		return bad("unknown mode (want fp, fp,MAXSTACK, dwarf, dwarf,SIZE or lbr)")
	}
	return p, nil
}

// branchWords are the words of -j and branch_type=
// (tools/perf/util/parse-branch-options.c); hw_index and counter come from
// later perf versions.
var branchWords = []struct {
	word string
	bit  perf.BranchSampleType
}{
	{"u", perf.BranchUser}, {"k", perf.BranchKernel}, {"hv", perf.BranchHV},
	{"any", perf.BranchAny}, {"any_call", perf.BranchAnyCall}, {"any_ret", perf.BranchAnyReturn},
	{"ind_call", perf.BranchIndCall}, {"abort_tx", perf.BranchAbortTX}, {"in_tx", perf.BranchInTX},
	{"no_tx", perf.BranchNoTX}, {"cond", perf.BranchCond}, {"ind_jmp", perf.BranchIndJump},
	{"call", perf.BranchCall}, {"save_type", perf.BranchTypeSave}, {"stack", perf.BranchCallStack},
	{"priv", perf.BranchPrivSave}, {"hw_index", perf.BranchHWIndex}, {"counter", perf.BranchCounters},
}

// ParseBranchFilter reads a -j value: comma-separated words, case
// insensitive. As in perf, a filter of privilege levels only (u, k, hv)
// becomes ANY and loses the levels: the kernel then takes them from the
// event's exclude_* bits.
func ParseBranchFilter(s string) (perf.BranchSampleType, error) {
	return orBranchFilter(0, s)
}

// orBranchFilter mirrors parse_branch_str: it ORs the words into mode and
// turns a mode without any branch type into ANY.
func orBranchFilter(mode perf.BranchSampleType, s string) (perf.BranchSampleType, error) {
	for _, w := range strings.Split(s, ",") {
		bit, ok := branchWord(w)
		if !ok {
			names := make([]string, len(branchWords))
			for i, bw := range branchWords {
				names[i] = bw.word
			}
			return 0, fmt.Errorf("branch filter %q: unknown word %q (accepted: %s)", s, w, strings.Join(names, ", "))
		}
		mode |= bit
	}
	if mode&^perf.BranchPlmAll == 0 {
		mode = perf.BranchAny
	}
	return mode, nil
}

func branchWord(w string) (perf.BranchSampleType, bool) {
	for _, bw := range branchWords {
		if strings.EqualFold(w, bw.word) {
			return bw.bit, true
		}
	}
	return 0, false
}

// configSampleID mirrors the end of evlist__config: several events all
// carry a sample id, IDENTIFIER when their sample types differ.
func configSampleID(evsels []*evsel) {
	if len(evsels) < 2 {
		return
	}
	identifier := false
	for _, e := range evsels[1:] {
		if e.attr.SampleType != evsels[0].attr.SampleType {
			identifier = true
		}
	}
	for _, e := range evsels {
		e.setSampleID(identifier)
	}
}
