package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/tuning"
)

// Flags: record_flags.go; the source policy: internal/source.Decide; the
// recorder: internal/record; its summary: internal/record/summary.

func cmdRecord(args []string, stdout, stderr io.Writer) int {
	code, _ := recordCmd(args, stdout, stderr)
	return code
}

// recordCmd is cmdRecord, returning also the recording's statistics (how
// it ended: Stats.Stop; zero when it did not start).
func recordCmd(args []string, stdout, stderr io.Writer) (int, record.Stats) {
	// Catch SIGINT/SIGTERM from the start, so that one arriving while the
	// events are being set up still ends the recording cleanly.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	var f recordFlags
	fs := newFlagSet("record", "[options] [--] CMD [ARGS] | -p PID[,PID...] [-- CMD [ARGS]] | -a [-- CMD [ARGS]]", stderr)
	f.register(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code, record.Stats{}
	}
	f.set = setFlags(fs)
	if err := f.adaptive.check(args, fs.Args()); err != nil {
		fmt.Fprintf(stderr, "hwprof record: %v\n", err)
		return exitUsage, record.Stats{}
	}
	if f.output == "-" && !f.printAttr && isTerminal(os.Stdout) {
		fmt.Fprintln(stderr, "hwprof record: -o -: standard output is a terminal: pipe the recording on (hwprof record -o - -- CMD | perf report -i -) or give a file")
		return exitUsage, record.Stats{}
	}
	if err := f.otlp.check(f.set, f.output); err != nil { // before the line that names the source
		fmt.Fprintf(stderr, "hwprof record: %v\n", err)
		return exitUsage, record.Stats{}
	}
	o, note, err := f.sourceOptions(fs.Args(), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hwprof record: %v\n", err)
		return exitUsage, record.Stats{}
	}
	if note != "" && !f.quiet {
		fmt.Fprintln(stderr, "hwprof: "+note)
	}
	if f.printAttr {
		defer uprobe.DropOwn() // --source exact defined them
		for _, ev := range o.Events {
			if err := perf.FprintAttr(stdout, &ev.Attr); err != nil {
				return fail(stderr, err), record.Stats{}
			}
		}
		return 0, record.Stats{}
	}
	send, err := f.otlp.start(&o, stderr) // record_otlp.go
	if err != nil {
		fmt.Fprintf(stderr, "hwprof record: %v\n", err)
		return exitUsage, record.Stats{}
	}
	o.Interrupt = sig
	o.BuildIDCache = f.buildIDCache()
	sl := newStatusLine(stderr) // status.go
	if !f.quiet {
		o.Notice = func(msg string) { fmt.Fprintln(sl, "hwprof: "+msg) }
		if sl.live() {
			o.Status = sl.show(o)
		}
	}
	code, st := recordRun(o, f.quiet, sl)
	send.finish(f.quiet, sl)
	return code, st
}

// eventBuilder makes the events to record for the target (command mode:
// argv; attach mode: pids).
type eventBuilder func(argv []string, pids []int, target event.Target) ([]perf.Event, error)

// sourceOptions decides what to record (internal/source.Decide: the events
// of -e as perf would, or a sample source with -c/-F/-g/-j as overrides)
// and returns the recorder's options and a line saying which source was
// chosen and why ("" for -e). Every frame-pointer call graph, -e's
// included, takes the leaf copy of --leaf-copy (withLeafCopy).
func (f *recordFlags) sourceOptions(argv []string, stderr io.Writer) (record.Options, string, error) {
	if f.cpu != "" && !f.printAttr {
		return record.Options{}, "", errors.New("--cpu plans for another machine: it goes with --print-attr only")
	}
	if f.leafCopy%8 != 0 || f.leafCopy > source.MaxLeafStackBytes {
		return record.Options{}, "", fmt.Errorf("--leaf-copy %d: the stack copy is a multiple of 8 bytes, at most %d", f.leafCopy, source.MaxLeafStackBytes)
	}
	req := f.request()
	d, err := source.Decide(req, f.facts)
	if err == nil && f.set["leaf-copy"] && !d.PerfEvents && d.Source == source.Exact {
		err = errors.New("--leaf-copy sets the stack copy of frame-pointer call graphs: --source exact copies the return address only")
	}
	if err != nil {
		return record.Options{}, "", err
	}
	if d.PerfEvents {
		o, err := f.options(argv, f.withLeafCopy(func(target event.Target) ([]perf.Event, error) {
			cfg := f.cfg
			cfg.Target = target
			return event.BuildAttrs(cfg)
		}), false)
		return o, "", err
	}
	build := f.withLeafCopy(func(target event.Target) ([]perf.Event, error) {
		cfg := d.Config(req, f.cfg)
		cfg.Target = target
		return event.BuildAttrs(cfg)
	})
	if d.Source == source.Exact {
		// before the probes are defined: a refused flag leaves none behind
		if err := f.exact.check(); err != nil {
			return record.Options{}, "", err
		}
		build = func(argv []string, pids []int, _ event.Target) ([]perf.Event, error) {
			w := stderr
			if f.quiet {
				w = io.Discard // -q: errors only
			}
			evs, _, err := f.exact.events(argv, pids, w)
			return evs, err
		}
	}
	if f.offCPU && d.Source == source.Exact {
		return record.Options{}, "", errors.New("--off-cpu goes with the timer, calls and lbr sources and -e, not --source exact")
	}
	o, err := f.options(argv, build, d.Planned())
	if d.Source == source.Exact {
		o.ShareRing = true
		o.Watch = f.exact.watch() // the expected slowdown; --max-slowdown
	}
	return o, d.Note, err
}

// withLeafCopy returns an eventBuilder of the events build makes, their
// frame-pointer call graphs given the leaf copy of --leaf-copy
// (source.AddLeafCopy: the stack copy and user registers that restore the
// caller of a frameless leaf), and checks the flag against them.
func (f *recordFlags) withLeafCopy(build func(event.Target) ([]perf.Event, error)) eventBuilder {
	return func(_ []string, _ []int, target event.Target) ([]perf.Event, error) {
		evs, err := build(target)
		if err != nil {
			return nil, err
		}
		takes := slices.ContainsFunc(evs, func(ev perf.Event) bool { return source.TakesLeafCopy(&ev.Attr) })
		source.AddLeafCopy(evs, int(f.leafCopy))
		if !f.set["leaf-copy"] {
			return evs, nil
		}
		_, period := f.given(periodFlags...)
		switch {
		case !takes && f.leafCopy > 0:
			return nil, fmt.Errorf("--leaf-copy %d copies the stack into samples of frame-pointer call graphs, and no event records one: add -g", f.leafCopy)
		case takes && f.leafCopy == 0 && !f.adaptive.off && !period:
			// the key would fall back to the return address, which
			// reads every call of a hot function as one activation
			return nil, errors.New("--leaf-copy 0 leaves the adaptive period without the registers and stack word of its activation key: " +
				"give a period (-c or -F) or --no-adaptive with it")
		}
		return evs, nil
	}
}

// options turns the flags into recorder options; errors are usage errors.
// build makes the events; planned says they run at a hardware source's
// planned period.
func (f *recordFlags) options(argv []string, build eventBuilder, planned bool) (record.Options, error) {
	o, err := f.target(argv)
	if err != nil {
		return o, err
	}
	if o.Events, err = build(o.Argv, o.PIDs, f.cfg.Target); err != nil {
		return o, err
	}
	if err := record.SetMaxStack(o.Events, f.maxStack, f.cfg.Limits); err != nil {
		return o, err
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
		if err := o.Adapt(p, planned); err != nil {
			return o, err
		}
	}
	if f.offCPU {
		facts, err := f.facts()
		if err != nil {
			return o, err
		}
		return o, o.OffCPU(!facts.UserOnly())
	}
	return o, nil
}
