package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/record/summary"
)

// runRecord records, prints what was recorded, and returns the exit code:
// the program's status in command mode (or the timer command's), 0 when
// the user ended the recording (--duration, SIGINT, SIGTERM).
func runRecord(o record.Options, quiet bool, stderr io.Writer) int {
	code, _ := recordRun(o, quiet, stderr)
	return code
}

// recordRun is runRecord, returning also the recording's statistics (how
// it ended: Stats.Stop).
func recordRun(o record.Options, quiet bool, stderr io.Writer) (int, record.Stats) {
	if o.Interrupt == nil {
		sig := make(chan os.Signal, 2)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(sig)
		o.Interrupt = sig
	}
	// A pipe whose reader left makes writes fail with EPIPE, which stops
	// the recording cleanly (record.WriteError), instead of killing
	// hwprof with SIGPIPE while it writes to standard output. The program
	// recorded gets the default action back when it is executed.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	// A failed write is said once, when it happens, while the program is
	// being ended.
	var told error
	o.Stopped = func(err error) {
		told = err
		fmt.Fprintf(stderr, "hwprof: %v\n", err)
	}
	st, err := record.Record(o)
	if st.Events != nil {
		o.Events = st.Events // as opened (user only, where the kernel refused the kernel)
	}
	if err != nil {
		printErrors(stderr, err, told)
		var ee *launch.ExecError
		if errors.As(err, &ee) {
			return ee.Code, st
		}
		if st.Records == 0 {
			return exitError, st
		}
	}
	if note := summary.StopNote(o, st); note != "" && !quiet {
		fmt.Fprintf(stderr, "hwprof: %s\n", note)
	}
	if !quiet || st.Lost+st.LostSamples > 0 {
		summary.Write(stderr, o, st)
	}
	switch {
	case err != nil:
		return exitError, st
	case st.Stop.OnPurpose():
		return 0, st // ended by --duration or an interrupt, as asked: the data is what was wanted
	case len(o.Argv) > 0 || len(o.Timer) > 0:
		return st.ExitCode, st
	}
	return 0, st
}

// printErrors prints the errors err holds (one line each when joined) but
// told, already printed.
func printErrors(w io.Writer, err, told error) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if e != told {
			fmt.Fprintf(w, "hwprof: %v\n", e)
		}
	}
}
