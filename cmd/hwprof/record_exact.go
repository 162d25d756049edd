package main

import (
	"errors"
	"flag"
	"io"

	"github.com/hwprof/hwprof/perf"
)

// exactFlags are the options of the exact source (`--source exact`):
// uprobes at the entry of every function.
type exactFlags struct {
	objects string // --probe-objects: shared libraries probed besides the executable
	filter  string // --probe-filter: a regexp the function names must match
}

func (e *exactFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.objects, "probe-objects", "", "--source exact: also probe the functions of these shared libraries `LIST` (comma-separated paths or sonames)")
	fs.StringVar(&e.filter, "probe-filter", "", "--source exact: probe only the functions whose name matches `REGEX`")
}

// events builds the probe events for the program argv (command mode;
// argv[0] is resolved through PATH) or the processes pids (-p: their
// /proc/PID/exe and mapped libraries).
func (e *exactFlags) events(argv []string, pids []int, stderr io.Writer) ([]perf.Event, error) {
	return nil, errors.New("--source exact: not built yet")
}
