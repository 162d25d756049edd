package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/objcache"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
	"golang.org/x/sys/unix"
)

// defaultInput is the recording every reading subcommand reads without
// -i, the file hwprof record writes without -o.
const defaultInput = "hwprof.data"

// inputUsage is the -i flag's help, the same in every reading subcommand.
const inputUsage = "read the recording from `FILE` (- for standard input: a pipe-mode stream, as hwprof record -o - writes, or a file)"

// errNoRecording is the error of a reading command run without -i where
// no recording was made yet.
var errNoRecording = errors.New("no " + defaultInput + " here: record one with hwprof record -- CMD, or give -i FILE")

// haveInput returns errNoRecording when path is the default input and
// does not exist.
func haveInput(path string) error {
	if path != defaultInput {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return errNoRecording
	}
	return nil
}

// openRecording opens the recording of -i: a path, or "-" for standard
// input.
func openRecording(path string) (*perfdata.Reader, error) {
	if path != "-" {
		if err := haveInput(path); err != nil {
			return nil, err
		}
		return perfdata.Open(path)
	}
	if isTerminal(os.Stdin) {
		return nil, errStdinTerminal
	}
	return perfdata.OpenFile(os.Stdin)
}

// inputsUsage is the help of a repeatable -i.
const inputsUsage = "read the recording from `FILE` (- for standard input: a pipe-mode stream, as hwprof record -o - writes, or a file); repeat -i to merge several recordings into one profile"

// inputs is a repeatable -i flag; without any, defaultInput.
type inputs []string

func (in *inputs) String() string { return strings.Join(*in, " ") }

func (in *inputs) Set(s string) error {
	*in = append(*in, s)
	return nil
}

// paths returns the recordings given, defaultInput when none; "-" only
// alone.
func (in inputs) paths() ([]string, error) {
	if len(in) == 0 {
		return []string{defaultInput}, nil
	}
	if len(in) > 1 && slices.Contains(in, "-") {
		return nil, errors.New("-i -: standard input cannot be merged with other recordings")
	}
	return in, nil
}

// loadGCPercent is the garbage collector's target while a profile is
// loaded: its heap is a few tens of MB and lives until the report is
// written, so collecting at 5x the live heap rather than 2x saves most
// collections of a load (a tenth of report's time on an exact recording)
// for a few MB (the mapped file's pages are most of the peak).
const loadGCPercent = 400

// loadProfile is engine.Load of -i, "-" included, or engine.LoadAll of
// several.
func loadProfile(paths []string, o engine.LoadOptions) (*profile.Profile, error) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(loadGCPercent)
	}
	for _, path := range paths {
		if err := haveInput(path); err != nil {
			return nil, err
		}
	}
	if len(paths) > 1 {
		return engine.LoadAll(paths, o)
	}
	path := paths[0]
	if path != "-" {
		return engine.Load(path, o)
	}
	r, err := openRecording(path)
	if err != nil {
		return nil, err
	}
	return engine.LoadFrom(r, path, o)
}

var errStdinTerminal = errors.New("-i -: standard input is a terminal: pipe a recording in (hwprof record -o - -- CMD | hwprof report -i -)")

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// parseIDList reads a comma-separated list of pids or tids ("" is none).
func parseIDList(flag, s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var ids []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad id %q in %s %s", f, flag, s)
		}
		ids = append(ids, n)
	}
	return ids, nil
}

// offlineUsage is the usage of --offline, which the reading commands share.
const offlineUsage = "fetch no debug file from the debuginfod servers of DEBUGINFOD_URLS (their cache is still read)"

// withBuildIDCache adds the build-id cache record fills by default
// (objcache.DefaultDir, when it exists) to the debug directories dirs.
func withBuildIDCache(dirs []string) []string {
	d := objcache.DefaultDir()
	if fi, err := os.Stat(d); d == "" || err != nil || !fi.IsDir() {
		return dirs
	}
	return append(dirs, d)
}
