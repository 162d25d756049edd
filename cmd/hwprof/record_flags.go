package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/hwprof/hwprof/internal/objcache"
	"github.com/hwprof/hwprof/internal/perfflags"
	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/tuning"
)

// recordFlags are the options of `hwprof record`: perf's event options
// (event.RecordConfig) and the recorder's own.
type recordFlags struct {
	cfg       event.RecordConfig
	output    string
	pids      string
	all       bool // -a: system-wide
	duration  time.Duration
	mmap      string
	printAttr bool
	quiet     bool
	adaptive  adaptiveFlag
	planned   bool            // the events' periods are a hardware source's plan, not the user's
	source    string          // --source: lbr, calls, timer, exact ("" = perf's -e, or the default source)
	cpu       string          // --cpu: plan the hardware sources for this CPU model (with --print-attr)
	exact     exactFlags      // the exact source's options
	maxStack  uint            // --max-stack: frames per stack (0: the kernel's limit)
	leafCopy  uint            // --leaf-copy: bytes of user stack per frame-pointer sample, -e's too (0: none)
	noCache   bool            // --no-buildid-cache
	cacheDir  string          // --buildid-dir
	offCPU    bool            // --off-cpu: also the time threads spend off the CPU (package offcpu)
	set       map[string]bool // the flags given on the command line
	otlp      recordOTLP      // --otlp and its options (record_otlp.go)
	// trying: building the events for hwprof check to try, so a source
	// judged not to work is built all the same (check.go)
	trying bool
}

// adaptiveFlag is --adaptive[=min,max,budget] and --no-adaptive.
type adaptiveFlag struct {
	set    bool   // given on the command line
	off    bool   // --no-adaptive
	policy string // the value of --adaptive=..., "" for the defaults
	err    error  // what is wrong with policy (see check)
}

func (a *adaptiveFlag) String() string { return a.policy }

// Set keeps the value and what is wrong with it for check: an error
// returned here would reach the user as the flag package's "invalid
// boolean value".
func (a *adaptiveFlag) Set(v string) error {
	a.set = true
	if v == "true" {
		v = ""
	}
	a.policy, a.err = v, nil
	if v != "" {
		_, a.err = tuning.ParsePolicy(v)
	}
	return nil
}

// check returns a usage error for a bad --adaptive value, and for a
// policy written after a space (--adaptive 2%,20%,5%), which the flag
// package takes as the first word of the command; args are the
// command line, rest what is left after the flags.
func (a *adaptiveFlag) check(args, rest []string) error {
	if a.err != nil {
		return fmt.Errorf("bad --adaptive=%s: %w", a.policy, a.err)
	}
	if !a.set || a.policy != "" || len(rest) == 0 || len(rest) == len(args) {
		return nil
	}
	prev := args[len(args)-len(rest)-1]
	if prev != "-adaptive" && prev != "--adaptive" {
		return nil
	}
	if _, err := tuning.ParsePolicy(rest[0]); err != nil {
		return nil
	}
	return fmt.Errorf("%s %s: the policy goes after an equals sign: write --adaptive=%s", prev, rest[0], rest[0])
}

func (a *adaptiveFlag) IsBoolFlag() bool { return true }

func (f *recordFlags) register(fs *flag.FlagSet) {
	perfflags.Register(fs, &f.cfg)
	f.otlp.register(fs)
	for _, n := range []string{"o", "output"} {
		fs.StringVar(&f.output, n, "hwprof.data", "write the recording to `FILE` (an existing regular file becomes FILE.old; - is standard output; standard output, a device or a FIFO gets pipe-mode data)")
	}
	for _, n := range []string{"p", "pid"} {
		fs.StringVar(&f.pids, n, "", "attach to running processes `PID[,PID...]`; a CMD given too runs meanwhile, unrecorded, and its end ends the recording (-p PID -- sleep 5)")
	}
	for _, n := range []string{"a", "all-cpus"} {
		fs.BoolVar(&f.all, n, false, "record every process on every CPU (system-wide), until --duration, Ctrl-C or the end of CMD if one is given")
	}
	fs.DurationVar(&f.duration, "duration", 0, "stop after `D` (e.g. 10s; the program gets SIGTERM, processes attached to go on, and hwprof exits 0); default: when the program or processes exit, or on Ctrl-C")
	for _, n := range []string{"m", "mmap-pages"} {
		fs.StringVar(&f.mmap, n, "", "ring buffer size per event and CPU: `PAGES` (a power of two) or a size like 512K or 4M (default 512K)")
	}
	fs.BoolVar(&f.noCache, "no-buildid-cache", false, "do not copy the objects that had samples into the build-id cache (see --buildid-dir)")
	fs.StringVar(&f.cacheDir, "buildid-dir", "", "keep a copy of every object the recorded processes mapped, by build-id, in `DIR` (default $HWPROF_BUILDID_DIR, else ~/.cache/hwprof/buildid), for report to read later or elsewhere")
	fs.BoolVar(&f.printAttr, "print-attr", false, "print each perf_event_attr as `perf record -vv` does and exit")
	for _, n := range []string{"q", "quiet"} {
		fs.BoolVar(&f.quiet, n, false, "print nothing but errors")
	}
	fs.Var(&f.adaptive, "adaptive", "tune the sampling period while recording (the default unless -c or -F is given); "+
		"by default its samples cost the program what perf's default 4000 Hz would and the period never grows past perf's for accuracy; "+
		"--adaptive=MIN,MAX,BUDGET sets the repetition band (default 1%,15%) and a hard budget for the cost per sample (kernel and hwprof), "+
		"under which the repetition band moves the period freely, e.g. --adaptive=1%,15%,2%")
	fs.BoolVar(&f.adaptive.off, "no-adaptive", false, "keep the source's period (perf's default 4000 Hz for the timer) instead of tuning it")
	fs.StringVar(&f.source, "source", "", "sample `SOURCE`: lbr (calls event + LBR call branch stack), calls (precise calls event), "+
		"timer (cpu-clock), exact (uprobes on every function); default: lbr where it works, else calls, else timer (see hwprof check). "+
		"-c/-F/-g replace the source's period and call graph, -j the lbr source's branch filter; -e and --source exclude each other")
	fs.StringVar(&f.cpu, "cpu", "", "with --print-attr: plan the lbr and calls sources for CPU `VENDOR-FAMILY-MODEL` (perf's mapfile form, e.g. GenuineIntel-6-5E) instead of this machine's")
	fs.UintVar(&f.maxStack, "max-stack", 0, "walk call graphs up to `N` frames (kernel and user; default: the kernel's limit kernel.perf_event_max_stack, 127 unless raised). "+
		"N may not exceed that limit: as root, raise it first with sysctl -w kernel.perf_event_max_stack=N")
	fs.UintVar(&f.leafCopy, "leaf-copy", source.LeafStackBytes, "copy `BYTES` of user stack (a multiple of 8) with the user registers into each sample of a frame-pointer call graph "+
		"(the sources' and -e's with -g), to restore the caller of a function sampled before its frame is set up, and for the adaptive period's activation key; "+
		"0: no copy, perf's attr exactly, smaller samples, such callers lost as in perf (with -c, -F or --no-adaptive)")
	fs.BoolVar(&f.offCPU, "off-cpu", false, "also record where threads wait: every interval a thread spends off the CPU, with the stack it blocked in "+
		"(the stacks need perf_event_paranoid 1 or CAP_PERFMON; at 2, the intervals alone); report --weight off-cpu or wall shows them")
	f.exact.register(fs)
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// given reports whether any of the flags names was on the command line,
// and which.
func (f *recordFlags) given(names ...string) (string, bool) {
	for _, n := range names {
		if f.set[n] {
			return "-" + n, true
		}
	}
	return "", false
}

// Flags that choose events, periods, call graphs and branch stacks the way
// perf record's do.
var (
	eventFlags  = []string{"e", "event"}
	periodFlags = []string{"c", "count", "F", "freq"}
	graphFlags  = []string{"g", "call-graph"}
	branchFlags = []string{"j", "branch-filter", "b", "branch-any"}
)

// request is what the command line asks of the source policy
// (internal/source.Decide).
func (f *recordFlags) request() source.Request {
	first := func(names []string) string { fl, _ := f.given(names...); return fl }
	return source.Request{Source: f.source, Events: first(eventFlags), Period: first(periodFlags),
		Graph: first(graphFlags), Branch: first(branchFlags), SystemWide: f.all, Lenient: f.printAttr || f.trying}
}

// facts are this machine's, or with --cpu another CPU model's.
func (f *recordFlags) facts() (source.Facts, error) {
	facts := source.Gather()
	if f.cpu != "" {
		id, err := event.ParseCPUID(f.cpu)
		if err != nil {
			return facts, err
		}
		facts.CPU, facts.CPUErr = id, nil
	}
	return facts, nil
}

// target fills in what to record (a command, -p PIDs or -a), the duration,
// the output and the ring size.
func (f *recordFlags) target(argv []string) (record.Options, error) {
	o := record.Options{Argv: argv, Duration: f.duration, Output: f.output}
	if f.pids != "" && f.all {
		return o, errors.New("give either -p PID or -a, not both")
	}
	if f.pids != "" || f.all {
		// perf's idiom: a command given with -p or -a only says how long
		// to record (-p PID -- sleep 5); it is not recorded itself.
		o.Timer, o.Argv = argv, nil
	}
	var err error
	switch {
	case f.all:
		o.SystemWide = true
		f.cfg.Target = event.TargetCPUs
	case f.pids != "":
		if o.PIDs, err = perfflags.ParsePIDs(f.pids); err != nil {
			return o, err
		}
		f.cfg.Target = event.TargetPIDs
	case len(argv) == 0 && !f.printAttr:
		return o, errors.New("nothing to record: give a command (hwprof record -- ./app), -p PID or -a")
	}
	if f.mmap != "" {
		o.DataPages, err = perfflags.ParseRingSize(f.mmap)
	}
	return o, err
}

// buildIDCache is the build-id cache record fills: --buildid-dir, else
// objcache.DefaultDir; nil with --no-buildid-cache or when no directory
// is known.
func (f *recordFlags) buildIDCache() *objcache.Cache {
	dir := f.cacheDir
	if dir == "" {
		dir = objcache.DefaultDir()
	}
	if f.noCache || dir == "" {
		return nil
	}
	return &objcache.Cache{Dir: dir}
}
