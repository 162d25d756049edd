package main

import (
	"errors"
	"os"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
	"golang.org/x/sys/unix"
)

// defaultInput is the recording every reading subcommand reads without
// -i, the file hwprof record writes without -o.
const defaultInput = "hwprof.data"

// inputUsage is the -i flag's help, the same in every reading subcommand.
const inputUsage = "read the recording from `FILE` (- for standard input: a pipe-mode stream, as hwprof record -o - writes, or a file)"

// openRecording opens the recording of -i: a path, or "-" for standard
// input.
func openRecording(path string) (*perfdata.Reader, error) {
	if path != "-" {
		return perfdata.Open(path)
	}
	if isTerminal(os.Stdin) {
		return nil, errStdinTerminal
	}
	return perfdata.OpenFile(os.Stdin)
}

// loadProfile is engine.Load of -i, "-" included.
func loadProfile(path string, o engine.LoadOptions) (*profile.Profile, error) {
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
