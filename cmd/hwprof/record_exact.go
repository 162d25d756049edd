package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
)

// exactFlags are the options of the exact source (`--source exact`):
// uprobes at the entry of every function.
type exactFlags struct {
	objects     string  // --probe-objects: shared libraries probed besides the executable
	filter      string  // --probe-filter: a regexp the function names must match
	maxSlowdown float64 // --max-slowdown: stop beyond this slowdown (0: never)
}

func (e *exactFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.objects, "probe-objects", "", "--source exact: also probe the functions of the shared libraries `LIST` "+
		"(comma-separated paths, or names such as libc.so.6 looked up in the processes' mappings (-p) or the library directories)")
	fs.StringVar(&e.filter, "probe-filter", "", "--source exact: probe only the functions whose name, mangled or demangled, matches `REGEX` (unanchored)")
	fs.Float64Var(&e.maxSlowdown, "max-slowdown", uprobe.DefaultMaxSlowdown, "--source exact: stop the recording, keeping what it holds, when the probes make the program's CPU time more than `N` times "+
		"what it would be (measured over its first 0.5 s of CPU; 0: no limit)")
}

// check refuses a --max-slowdown that cannot be a slowdown.
func (e *exactFlags) check() error {
	if e.maxSlowdown != 0 && !(e.maxSlowdown > 1) {
		return fmt.Errorf("--max-slowdown %g: give a factor above 1, or 0 for no limit", e.maxSlowdown)
	}
	return nil
}

// watch is the recorder's Watch of an exact recording: the expected
// slowdown after a short measurement, and the stop beyond --max-slowdown
// (uprobe.Meter).
func (e *exactFlags) watch() func(record.Usage) (string, bool) {
	m := &uprobe.Meter{Limit: e.maxSlowdown}
	return func(u record.Usage) (string, bool) {
		return m.Observe(uprobe.Measure(u.Samples, u.User, u.System))
	}
}

// events builds the probe events for the program argv (command mode;
// argv[0] is resolved through PATH) or the processes pids (-p: their
// /proc/PID/exe and mapped libraries), and returns them with the objects
// probed.
func (e *exactFlags) events(argv []string, pids []int, stderr io.Writer) (_ []perf.Event, _ []*uprobe.Object, err error) {
	defer func() {
		if err != nil {
			dropProbes() // a failed Define removed its own; the tracefs hwprof mounted, if any
		}
	}()
	var filter *regexp.Regexp
	if e.filter != "" {
		var err error
		if filter, err = regexp.Compile(e.filter); err != nil {
			return nil, nil, fmt.Errorf("--probe-filter: bad regular expression: %w", err)
		}
	}
	dir, err := uprobe.Tracefs()
	if err != nil {
		return nil, nil, fmt.Errorf("--source exact: %w", err)
	}
	uprobe.RemoveStale(dir)
	target := perf.TargetCommand
	if len(pids) > 0 {
		target = perf.TargetPIDs
	}
	exes, err := uprobe.Executables(argv, pids)
	if err != nil {
		return nil, nil, fmt.Errorf("--source exact: %w", err)
	}
	libs, err := e.libraries(exes[0], pids)
	if err != nil {
		return nil, nil, err
	}
	// The flags perf gives a sampled event for this target (disabled,
	// inherit, enable_on_exec, side-band tracking on the first event).
	built, err := perf.BuildAttrs(perf.RecordConfig{Events: []string{"cpu-clock"}, Period: 1, CallGraph: "fp", Target: target})
	if err != nil {
		return nil, nil, err
	}
	base := built[0].Attr
	var objs []*uprobe.Object
	tracefsEvents := 0
	for _, path := range append(exes, libs...) {
		obj, err := uprobe.Functions(path, filter)
		if err != nil {
			return nil, nil, err
		}
		if len(obj.Probes) == 0 {
			if filter != nil {
				return nil, nil, fmt.Errorf("--source exact: no function of %s matches --probe-filter %q", path, e.filter)
			}
			return nil, nil, fmt.Errorf("--source exact: %s has no function symbols to probe (stripped?)", path)
		}
		objs = append(objs, obj)
		tracefsEvents += uprobe.EventCount(obj)
	}
	cpus, err := perf.OnlineCPUs()
	if err != nil {
		return nil, nil, err
	}
	tasks := max(1, len(pids))
	if err := uprobe.EnsureFileLimit(tracefsEvents * len(cpus) * tasks); err != nil {
		return nil, nil, fmt.Errorf("--source exact: %w", err)
	}
	// The probes are defined in tracefs (group hwprof_PID_N, new for each
	// recording) from here on; internal/record removes them once their
	// events are closed.
	uprobe.NewGroup()
	var events []perf.Event
	var summary []string
	probes := 0
	used := map[string]bool{}
	for i, obj := range objs {
		names, ids, err := uprobe.DefineOwn(dir, obj, used)
		if err != nil {
			return nil, nil, fmt.Errorf("--source exact: %w", err)
		}
		events = append(events, uprobe.Events(obj, uprobe.Group(), names, ids, base, i == 0)...)
		summary = append(summary, fmt.Sprintf("%d in %s", len(obj.Probes), obj.Path))
		probes += len(obj.Probes)
	}
	fmt.Fprintf(stderr, "hwprof: exact: probing %d functions (%s) with %d events on %d CPUs; "+
		"each call of one traps (1-20 µs): the expected slowdown follows after %v of the program's CPU time\n",
		probes, strings.Join(summary, ", "), len(events), len(cpus), uprobe.MeasureCPU)
	return events, objs, nil
}

// probedNames are the names of every function of objs, mangled and
// demangled.
func probedNames(objs []*uprobe.Object) (map[string]bool, int) {
	names, n := map[string]bool{}, 0
	for _, o := range objs {
		for _, p := range o.Probes {
			names[p.Name], names[p.Demangled] = true, true
		}
		n += len(o.Probes)
	}
	return names, n
}

// dropProbes removes this process's probes and unmounts the tracefs it
// mounted, for when no recording takes them over (internal/record does
// both once the events are closed).
func dropProbes() {
	uprobe.UndefineOwn()
	uprobe.UnmountOwn()
}

// libraries resolves --probe-objects: paths as given; bare names among the
// processes' mapped files (-p), else in the executable's RUNPATH/RPATH,
// LD_LIBRARY_PATH and the usual library directories (uprobe.FindLibrary).
func (e *exactFlags) libraries(exe string, pids []int) ([]string, error) {
	if e.objects == "" {
		return nil, nil
	}
	var out []string
	for name := range strings.SplitSeq(e.objects, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		path, err := uprobe.FindLibrary(name, exe, pids)
		if err != nil {
			return nil, fmt.Errorf("--probe-objects: %w", err)
		}
		out = append(out, path)
	}
	return out, nil
}
