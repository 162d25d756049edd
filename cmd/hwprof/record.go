package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/tuning"
)

// recordFlags are the options of `hwprof record`: perf's event options
// (perf.RecordConfig) and the recorder's own.
type recordFlags struct {
	cfg       perf.RecordConfig
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
	set       map[string]bool // the flags given on the command line
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
	f.cfg.RegisterFlags(fs)
	for _, n := range []string{"o", "output"} {
		fs.StringVar(&f.output, n, "hwprof.data", "write the recording to `FILE` (an existing regular file becomes FILE.old; - is standard output; standard output, a device or a FIFO gets pipe-mode data)")
	}
	for _, n := range []string{"p", "pid"} {
		fs.StringVar(&f.pids, n, "", "attach to running processes `PID[,PID...]`; a CMD given too runs meanwhile, unrecorded, and its end ends the recording (-p PID -- sleep 5)")
	}
	for _, n := range []string{"a", "all-cpus"} {
		fs.BoolVar(&f.all, n, false, "record every process on every CPU (system-wide), until --duration, Ctrl-C or the end of CMD if one is given")
	}
	fs.DurationVar(&f.duration, "duration", 0, "stop after `D` (e.g. 10s); default: when the program or processes exit, or on Ctrl-C")
	for _, n := range []string{"m", "mmap-pages"} {
		fs.StringVar(&f.mmap, n, "", "ring buffer size per event and CPU: `PAGES` (a power of two) or a size like 512K or 4M (default 512K)")
	}
	fs.BoolVar(&f.printAttr, "print-attr", false, "print each perf_event_attr as `perf record -vv` does and exit")
	for _, n := range []string{"q", "quiet"} {
		fs.BoolVar(&f.quiet, n, false, "print nothing but errors")
	}
	fs.Var(&f.adaptive, "adaptive", "tune the sampling period while recording (the default unless -c or -F is given); "+
		"--adaptive=MIN,MAX,BUDGET sets the repetition band and the overhead budget, e.g. --adaptive=1%,15%,1%")
	fs.BoolVar(&f.adaptive.off, "no-adaptive", false, "keep the source's period (perf's default 4000 Hz for the timer) instead of tuning it")
	fs.StringVar(&f.source, "source", "", "sample `SOURCE`: lbr (calls event + LBR call branch stack), calls (precise calls event), "+
		"timer (cpu-clock), exact (uprobes on every function); default: lbr where it works, else calls, else timer (see hwprof check). "+
		"-c/-F/-g replace the source's period and call graph, -j the lbr source's branch filter; -e and --source exclude each other")
	fs.UintVar(&f.maxStack, "max-stack", 0, "walk call graphs up to `N` frames (kernel and user; default: the kernel's limit kernel.perf_event_max_stack, 127 unless raised). "+
		"N may not exceed that limit: as root, raise it first with sysctl -w kernel.perf_event_max_stack=N")
	fs.StringVar(&f.cpu, "cpu", "", "with --print-attr: plan the lbr and calls sources for CPU `VENDOR-FAMILY-MODEL` (perf's mapfile form, e.g. GenuineIntel-6-5E) instead of this machine's")
	f.exact.register(fs)
}

func cmdRecord(args []string, stdout, stderr io.Writer) int {
	// Catch SIGINT/SIGTERM from the start, so that one arriving while the
	// events are being set up still ends the recording cleanly.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	var f recordFlags
	fs := newFlagSet("record", "[options] [--] CMD [ARGS] | -p PID[,PID...] [-- CMD [ARGS]] | -a [-- CMD [ARGS]]", stderr)
	f.register(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	f.set = setFlags(fs)
	if err := f.adaptive.check(args, fs.Args()); err != nil {
		fmt.Fprintf(stderr, "hwprof record: %v\n", err)
		return exitUsage
	}
	if f.output == "-" && !f.printAttr && isTerminal(os.Stdout) {
		fmt.Fprintln(stderr, "hwprof record: -o -: standard output is a terminal: pipe the recording on (hwprof record -o - -- CMD | perf report -i -) or give a file")
		return exitUsage
	}
	o, note, err := f.sourceOptions(fs.Args(), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hwprof record: %v\n", err)
		return exitUsage
	}
	if note != "" && !f.quiet {
		fmt.Fprintln(stderr, "hwprof: "+note)
	}
	if f.printAttr {
		defer dropProbes() // --source exact defined them
		for _, ev := range o.Events {
			if err := perf.FprintAttr(stdout, &ev.Attr); err != nil {
				return fail(stderr, err)
			}
		}
		return 0
	}
	o.Interrupt = sig
	sl := newStatusLine(stderr) // status.go
	if !f.quiet {
		o.Notice = func(msg string) { fmt.Fprintln(sl, "hwprof: "+msg) }
		if sl.live() {
			o.Status = sl.show(o)
		}
	}
	return runRecord(o, f.quiet, sl)
}

// eventBuilder makes the events to record for the target (command mode:
// argv; attach mode: pids).
type eventBuilder func(argv []string, pids []int, target perf.Target) ([]perf.Event, error)

// options turns the flags into recorder options; errors are usage errors.
// build, when not nil, makes the events instead of perf's event flags
// (-e, -c, ...) alone.
func (f *recordFlags) options(argv []string, build eventBuilder) (record.Options, error) {
	o := record.Options{Argv: argv, Duration: f.duration, Output: f.output}
	if f.pids != "" && f.all {
		return o, errors.New("give either -p PID or -a, not both")
	}
	if f.pids != "" || f.all {
		// perf's idiom: a command given with -p or -a only says how long
		// to record (-p PID -- sleep 5); it is not recorded itself.
		o.Timer, o.Argv = argv, nil
	}
	if f.all {
		o.SystemWide = true
		f.cfg.Target = perf.TargetCPUs
	} else if f.pids != "" {
		pids, err := parsePIDs(f.pids)
		if err != nil {
			return o, err
		}
		o.PIDs = pids
		f.cfg.Target = perf.TargetPIDs
	} else if len(argv) == 0 && !f.printAttr {
		return o, errors.New("nothing to record: give a command (hwprof record -- ./app), -p PID or -a")
	}
	if f.mmap != "" {
		pages, err := parseMmapPages(f.mmap)
		if err != nil {
			return o, err
		}
		o.DataPages = pages
	}
	if build == nil {
		build = func([]string, []int, perf.Target) ([]perf.Event, error) {
			if len(f.cfg.Events) == 0 {
				f.cfg.Events = []string{"cpu-clock"}
			}
			return perf.BuildAttrs(f.cfg)
		}
	}
	events, err := build(o.Argv, o.PIDs, f.cfg.Target)
	if err != nil {
		return o, err
	}
	o.Events = events
	if f.maxStack > 0 {
		if err := setMaxStack(o.Events, f.maxStack, f.cfg.Limits); err != nil {
			return o, err
		}
	}
	periodGiven := f.cfg.Period != 0 || f.cfg.Freq != 0
	if f.adaptive.set && f.adaptive.off {
		return o, errors.New("--adaptive and --no-adaptive contradict each other")
	}
	if f.adaptive.set && periodGiven {
		return o, errors.New("--adaptive tunes the period itself: leave out -c and -F")
	}
	// The adaptive period is the default when no period was asked for
	// (-c, -F); it tunes the events at perf's default frequency and, for
	// the hardware sources, their planned prime period.
	if !f.adaptive.off && (f.adaptive.set || !periodGiven) {
		p, err := tuning.ParsePolicy(f.adaptive.policy)
		if err != nil {
			return o, err
		}
		prepare := record.PrepareAdaptive
		if f.planned {
			prepare = record.PrepareAdaptivePlanned
		}
		if o.Tuned, err = prepare(o.Events, p); err != nil {
			return o, err
		}
		if slices.Contains(o.Tuned, true) {
			o.Adaptive = &p
		} else {
			o.Tuned = nil
		}
	}
	return o, nil
}

// setMaxStack sets the depth of every event's call graph to n frames
// (attr.sample_max_stack), which the kernel refuses above its limit
// kernel.perf_event_max_stack (lim, or this machine's when nil).
func setMaxStack(events []perf.Event, n uint, lim *perf.KernelLimits) error {
	if lim == nil {
		l, err := perf.ReadKernelLimits()
		if err != nil {
			return fmt.Errorf("--max-stack: %w", err)
		}
		lim = &l
	}
	if lim.MaxStack != 0 && uint64(n) > lim.MaxStack {
		return fmt.Errorf("--max-stack %d: the kernel walks at most %d frames (kernel.perf_event_max_stack); "+
			"as root, raise the limit first: sysctl -w kernel.perf_event_max_stack=%d", n, lim.MaxStack, n)
	}
	if n > math.MaxUint16 {
		return fmt.Errorf("--max-stack %d: at most %d frames (attr.sample_max_stack is 16 bits)", n, math.MaxUint16)
	}
	set := false
	for i := range events {
		if events[i].Attr.SampleType&perf.SampleCallchain != 0 {
			events[i].Attr.SampleMaxStack = uint16(n)
			set = true
		}
	}
	if !set {
		return errors.New("--max-stack bounds call graphs, and no event records one: add -g")
	}
	return nil
}

func parsePIDs(s string) ([]int, error) {
	var pids []int
	for p := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad pid %q in -p %s", p, s)
		}
		pids = append(pids, n)
	}
	return pids, nil
}

// parseMmapPages reads -m: a page count (a power of two) or a size with a
// K, M or G suffix, rounded up to a power of two pages as perf does.
func parseMmapPages(s string) (int, error) {
	page := os.Getpagesize()
	mult := 0
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	num := s
	if mult != 0 {
		num = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("bad ring size -m %s: want pages (a power of two) or a size like 512K", s)
	}
	if mult == 0 {
		if n&(n-1) != 0 {
			return 0, fmt.Errorf("bad ring size -m %s: the number of pages must be a power of two", s)
		}
		return int(n), nil
	}
	pages := 1
	for uint64(pages*page) < n*uint64(mult) {
		pages <<= 1
	}
	return pages, nil
}

// runRecord records, prints what was recorded, and returns the exit code:
// the program's status in command mode.
func runRecord(o record.Options, quiet bool, stderr io.Writer) int {
	if o.Interrupt == nil {
		sig := make(chan os.Signal, 2)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(sig)
		o.Interrupt = sig
	}
	st, err := record.Record(o)
	if st.Events != nil {
		o.Events = st.Events // as opened (user only, where the kernel refused the kernel)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hwprof: %v\n", err)
		var ee *launch.ExecError
		if errors.As(err, &ee) {
			return ee.Code
		}
		if st.Records == 0 {
			return exitError
		}
	}
	if !quiet || st.Lost+st.LostSamples > 0 {
		printStats(stderr, o, st)
	}
	if err != nil {
		return exitError
	}
	if len(o.Argv) > 0 || len(o.Timer) > 0 {
		return st.ExitCode
	}
	return 0
}

// printStats reports a recording, loss included: loss is never silent.
// eventCounts lists the samples of each event; past a few events (the
// exact source opens one per probed function) the busiest ones and a
// count of the rest.
func eventCounts(events []perf.Event, samples []uint64) string {
	const show = 6
	idx := make([]int, len(events))
	for i := range idx {
		idx[i] = i
	}
	if len(events) > show {
		sort.SliceStable(idx, func(a, b int) bool { return samples[idx[a]] > samples[idx[b]] })
	}
	var per []string
	for k, i := range idx {
		if k == show && len(events) > show {
			per = append(per, fmt.Sprintf("and %d more events", len(events)-show))
			break
		}
		per = append(per, fmt.Sprintf("%s %d", events[i].Name, samples[i]))
	}
	return strings.Join(per, ", ")
}

func printStats(w io.Writer, o record.Options, st record.Stats) {
	fmt.Fprintf(w, "hwprof: recorded %d samples (%s) in %.2fs: %d records, %.1f MB in %s\n",
		st.Samples, eventCounts(o.Events, st.EventSamples), st.Duration.Seconds(), st.Records,
		float64(st.Bytes)/1e6, o.Output)
	loss := fmt.Sprintf("hwprof: lost %d samples (ring full: %d, kernel: %d), throttled %d times, unthrottled %d",
		st.Lost+st.LostSamples, st.Lost, st.LostSamples, st.Throttle, st.Unthrottle)
	if st.Lost > 0 {
		loss += "; use a bigger ring (-m) or a longer period (-c/-F)"
	}
	if st.RingErrors > 0 {
		loss += fmt.Sprintf("; %d corrupted ring reads skipped", st.RingErrors)
	}
	if st.Undecoded > 0 {
		loss += fmt.Sprintf("; %d records could not be decoded (kept in the file)", st.Undecoded)
	}
	fmt.Fprintln(w, loss)
	perSample := ""
	if st.Samples > 0 {
		perSample = fmt.Sprintf(", %.1f ms per 100k samples", st.CPU.Seconds()*1e3*1e5/float64(st.Samples))
	}
	fmt.Fprintf(w, "hwprof: own CPU time %.1f ms%s\n", st.CPU.Seconds()*1e3, perSample)
	if o.ShareRing {
		printAttach(w, st) // record_exact.go
	}
	if o.Adaptive != nil {
		printPeriods(w, o, st)
	}
}

// printPeriods shows the adaptive period's history: where each tuned event
// started and every change, with the time and the reason.
func printPeriods(w io.Writer, o record.Options, st record.Stats) {
	for i, ev := range o.Events {
		if o.Tuned != nil && !o.Tuned[i] {
			continue
		}
		fmt.Fprintf(w, "hwprof: %s: adaptive period, started at %d\n", ev.Name, ev.Attr.SamplePeriod)
	}
	last := map[int]uint64{}
	for _, c := range st.Periods {
		fmt.Fprintf(w, "hwprof:   %7.3fs %s period %d: %s\n", c.Time.Seconds(), o.Events[c.Event].Name, c.Period, c.Reason)
		last[c.Event] = c.Period
	}
	for i, ev := range o.Events {
		p, ok := last[i]
		if !ok {
			continue
		}
		hz := ""
		if record.KindOf(&ev.Attr) == tuning.Time && p > 0 {
			hz = fmt.Sprintf(" (%.0f Hz)", 1e9/float64(p))
		}
		fmt.Fprintf(w, "hwprof: %s: period %d%s in force at the end for the task and threads started after the last change; "+
			"threads that existed at a change keep the period they inherited (the report lists each period seen)\n", ev.Name, p, hz)
	}
	if st.AdaptiveErr != nil {
		fmt.Fprintf(w, "hwprof: warning: the kernel refused a period change: %v\n", st.AdaptiveErr)
	}
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

// sourceOptions decides what to record: the events of -e as perf would, or
// a sample source (--source, or the default one when neither -e nor
// --source is given) with -c/-F/-g/-j as overrides. It returns the options
// and a line saying which source was chosen and why ("" when the events
// come from -e).
//
// Rules: -e and --source exclude each other. With a source, -c or -F
// replace its period, -g/--call-graph its call graph, and -j/-b the lbr
// source's branch filter; -j/-b with calls or timer is an error (they
// would add a branch stack those sources do not have), and exact takes
// none of these flags. A source that does not work on this machine is an
// error naming what is missing and the sources that work, except with
// --print-attr, which only prints what would be opened.
func (f *recordFlags) sourceOptions(argv []string, stderr io.Writer) (record.Options, string, error) {
	if f.cpu != "" && !f.printAttr {
		return record.Options{}, "", errors.New("--cpu plans for another machine: it goes with --print-attr only")
	}
	if f.source == "" {
		if _, ok := f.given(eventFlags...); ok {
			o, err := f.options(argv, nil)
			return o, "", err
		}
	} else if fl, ok := f.given(eventFlags...); ok {
		return record.Options{}, "", fmt.Errorf("--source %s and %s both choose the events: give one of them", f.source, fl)
	}
	facts := source.Gather()
	if f.cpu != "" {
		id, err := perf.ParseCPUID(f.cpu)
		if err != nil {
			return record.Options{}, "", err
		}
		facts.CPU, facts.CPUErr = id, nil
	}
	verdicts := source.Assess(facts)
	var src source.Source
	var note string
	if f.source == "" {
		var why string
		src, why = source.Choose(verdicts)
		note = "source " + why
	} else {
		var err error
		if src, err = source.Parse(f.source); err != nil {
			return record.Options{}, "", err
		}
		v := verdicts[slices.IndexFunc(verdicts, func(v source.Verdict) bool { return v.Source == src })]
		if !v.OK {
			msg := fmt.Sprintf("source %s does not work here: %s; %s (hwprof check lists what this machine offers)", src, v.Why, v.Instead)
			if !f.printAttr && !f.trying {
				return record.Options{}, "", errors.New(msg)
			}
			note = "note: " + msg
		} else {
			note = fmt.Sprintf("source %s: %s", src, v.Why)
		}
	}
	build, desc, err := f.sourceBuilder(src, facts, stderr)
	if err != nil {
		return record.Options{}, "", err
	}
	if desc != "" {
		note += "; event " + desc
	}
	f.planned = src == source.LBR || src == source.Calls
	o, err := f.options(argv, build)
	if src == source.Exact {
		o.ShareRing = true
	}
	return o, note, err
}

// sourceBuilder returns how to build the events of source src with the
// command line's overrides, and a description of the event.
func (f *recordFlags) sourceBuilder(src source.Source, facts source.Facts, stderr io.Writer) (eventBuilder, string, error) {
	if src == source.Exact {
		if f.all {
			return nil, "", errors.New("--source exact probes the functions of a program: give a command or -p PID, not -a")
		}
		for _, group := range [][]string{periodFlags, graphFlags, branchFlags} {
			if fl, ok := f.given(group...); ok {
				return nil, "", fmt.Errorf("--source exact counts every call with uprobes: %s does not apply to it", fl)
			}
		}
		return func(argv []string, pids []int, _ perf.Target) ([]perf.Event, error) {
			w := stderr
			if f.quiet {
				w = io.Discard // -q: errors only
			}
			return f.exact.events(argv, pids, w)
		}, "", nil
	}
	if fl, ok := f.given(branchFlags...); ok && src != source.LBR {
		return nil, "", fmt.Errorf("%s adds a branch stack, which the %s source does not have: use --source lbr, or -e EVENT with %s", fl, src, fl)
	}
	setup, err := source.Plan(src, facts)
	if err != nil {
		return nil, "", err
	}
	cfg := setup.Config
	if _, ok := f.given(periodFlags...); ok {
		cfg.Period, cfg.Freq = f.cfg.Period, f.cfg.Freq
	}
	if _, ok := f.given(graphFlags...); ok {
		cfg.CallGraph = f.cfg.CallGraph
	}
	if _, ok := f.given(branchFlags...); ok {
		cfg.BranchFilter = f.cfg.BranchFilter
	}
	cfg.NoInherit, cfg.Limits = f.cfg.NoInherit, f.cfg.Limits
	return func(_ []string, _ []int, target perf.Target) ([]perf.Event, error) {
		cfg.Target = target
		evs, err := perf.BuildAttrs(cfg)
		if err == nil && cfg.CallGraph == setup.Config.CallGraph {
			source.AddLeafCopy(evs) // the source's own frame-pointer stacks: repair leaf frames
		}
		return evs, err
	}, setup.Event, nil
}
