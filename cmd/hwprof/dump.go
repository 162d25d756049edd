package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/hwprof/hwprof/internal/diag"
	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata/dump"
)

// cmdDump prints a perf.data file record by record (like perf report -D,
// one line per record, samples' branch stacks and callchains indented
// under them), or with --stats the header facts and a count per record
// type. Warnings and the exit status follow package diag's rule, as in
// every reading command.
func cmdDump(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("dump", "[-i FILE] [--stats] [--file-order]", stderr)
	input := fs.String("i", defaultInput, inputUsage)
	stats := fs.Bool("stats", false, "print the header facts and the number of records of each type instead of the records")
	fileOrder := fs.Bool("file-order", false, "print records in file order instead of time order")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hwprof dump: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	r, err := openRecording(*input)
	if err != nil {
		return fail(stderr, err)
	}
	defer r.Close()
	w := bufio.NewWriterSize(stdout, 1<<16)
	var skips diag.Skips
	if *stats {
		r.SetFileOrder(true) // counting needs no order
		err = dump.Stats(w, r, *input)
	} else {
		r.SetFileOrder(*fileOrder)
		var bad dump.Undecodable
		bad, err = dump.Records(w, r)
		for t, n := range bad {
			switch {
			case t == perf.RecordSample:
				skips.Samples += n
			case engine.Analyzed(t):
				skips.Records += n
			}
		}
	}
	if ferr := w.Flush(); err == nil && ferr != nil && !errors.Is(ferr, io.ErrClosedPipe) {
		err = ferr
	}
	// What went wrong while reading, as every reading command says it.
	var log diag.Log
	log.Reader(r)
	log.Skipped(skips)
	status := log.Print(stderr)
	if err != nil {
		return fail(stderr, err)
	}
	return status
}
