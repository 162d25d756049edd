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

// events defines the probes of the program argv (command mode; argv[0]
// is resolved through PATH) or the processes pids (-p: their
// /proc/PID/exe and mapped libraries) and returns their events with the
// objects probed (uprobe.Setup), saying what they cost on stderr.
func (e *exactFlags) events(argv []string, pids []int, stderr io.Writer) ([]perf.Event, []*uprobe.Object, error) {
	r := uprobe.Request{Argv: argv, PIDs: pids}
	if e.filter != "" {
		var err error
		if r.Filter, err = regexp.Compile(e.filter); err != nil {
			uprobe.DropOwn() // as a failed Setup does
			return nil, nil, fmt.Errorf("--probe-filter: bad regular expression: %w", err)
		}
	}
	for name := range strings.SplitSeq(e.objects, ",") {
		if name = strings.TrimSpace(name); name != "" {
			r.Libraries = append(r.Libraries, name)
		}
	}
	p, err := uprobe.Setup(r)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintln(stderr, "hwprof: exact: "+p.Note())
	return p.Events, p.Objects, nil
}
