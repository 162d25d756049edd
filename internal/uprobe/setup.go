package uprobe

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
)

// Request is what the exact source of one recording probes.
type Request struct {
	Argv      []string       // the program (command mode; argv[0] is resolved through PATH), or
	PIDs      []int          // the processes attached to (-p): their /proc/PID/exe
	Libraries []string       // --probe-objects: shared libraries besides the executable, paths or names (FindLibrary)
	Filter    *regexp.Regexp // --probe-filter: probe only the functions whose name matches; nil: every function
}

// Probes are the probes Setup defined and the events to open on them.
type Probes struct {
	Events  []perf.Event
	Objects []*Object // the objects probed, the executable first
	CPUs    int       // the online CPUs, each event's fds are per CPU
}

// Setup defines the probes of r in tracefs, in a new Group of this
// process, and builds their events: the flags perf gives a sampled event
// for the target (disabled, inherit, enable_on_exec, side-band tracking
// on the first event), after raising RLIMIT_NOFILE for them. It mounts
// tracefs when none is mounted, and removes the stale probes of hwprof
// processes that are gone. On error it leaves no probe of this process
// and unmounts what it mounted; otherwise the caller removes them once
// their events are closed (DropOwn; internal/record does).
func Setup(r Request) (_ *Probes, err error) {
	defer func() {
		if err != nil {
			DropOwn() // a failed Define removed its own; the tracefs hwprof mounted, if any
		}
	}()
	dir, err := Tracefs()
	if err != nil {
		return nil, fmt.Errorf("--source exact: %w", err)
	}
	RemoveStale(dir)
	objs, err := r.objects()
	if err != nil {
		return nil, err
	}
	return define(dir, objs, r.PIDs)
}

// objects lists the functions of the executables and libraries of r.
func (r Request) objects() ([]*Object, error) {
	exes, err := Executables(r.Argv, r.PIDs)
	if err != nil {
		return nil, fmt.Errorf("--source exact: %w", err)
	}
	paths := exes
	for _, name := range r.Libraries {
		path, err := FindLibrary(name, exes[0], r.PIDs)
		if err != nil {
			return nil, fmt.Errorf("--probe-objects: %w", err)
		}
		paths = append(paths, path)
	}
	var objs []*Object
	for _, path := range paths {
		obj, err := Functions(path, r.Filter)
		if err != nil {
			return nil, err
		}
		if len(obj.Probes) == 0 {
			if r.Filter != nil {
				return nil, fmt.Errorf("--source exact: no function of %s matches --probe-filter %q", path, r.Filter)
			}
			return nil, fmt.Errorf("--source exact: %s has no function symbols to probe (stripped?)", path)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// define defines the probes of objs in dir under a new group and builds
// their events, for pids (none: a command).
func define(dir string, objs []*Object, pids []int) (*Probes, error) {
	target := event.TargetCommand
	if len(pids) > 0 {
		target = event.TargetPIDs
	}
	built, err := event.BuildAttrs(event.RecordConfig{Events: []string{"cpu-clock"}, Period: 1, CallGraph: "fp", Target: target})
	if err != nil {
		return nil, err
	}
	base := built[0].Attr
	cpus, err := perf.OnlineCPUs()
	if err != nil {
		return nil, err
	}
	tracefsEvents := 0
	for _, obj := range objs {
		tracefsEvents += EventCount(obj)
	}
	if err := EnsureFileLimit(tracefsEvents * len(cpus) * max(1, len(pids))); err != nil {
		return nil, fmt.Errorf("--source exact: %w", err)
	}
	// The probes are defined in tracefs (group hwprof_PID_N, new for each
	// recording) from here on.
	NewGroup()
	p := &Probes{Objects: objs, CPUs: len(cpus)}
	used := map[string]bool{}
	for i, obj := range objs {
		names, ids, err := DefineOwn(dir, obj, used)
		if err != nil {
			return nil, fmt.Errorf("--source exact: %w", err)
		}
		p.Events = append(p.Events, Events(obj, Group(), names, ids, base, i == 0)...)
	}
	return p, nil
}

// Note says what p probes and what it will cost, for the user.
func (p *Probes) Note() string {
	var summary []string
	probes := 0
	for _, obj := range p.Objects {
		summary = append(summary, fmt.Sprintf("%d in %s", len(obj.Probes), obj.Path))
		probes += len(obj.Probes)
	}
	events := "events"
	if len(p.Events) == 1 {
		events = "event"
	}
	return fmt.Sprintf("probing %d functions (%s) with %d %s on %d CPUs; "+
		"each call of one traps (1-20 µs): the expected slowdown follows after %v of the program's CPU time",
		probes, strings.Join(summary, ", "), len(p.Events), events, p.CPUs, MeasureCPU)
}

// DropOwn removes this process's probes (UndefineOwn), then unmounts the
// tracefs it mounted (UnmountOwn), and returns the first error: for
// after their events are closed, or when no recording takes them over.
func DropOwn() error {
	err := UndefineOwn()
	if uerr := UnmountOwn(); err == nil {
		err = uerr
	}
	return err
}
