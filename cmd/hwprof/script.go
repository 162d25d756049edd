package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/hwprof/hwprof/internal/diag"
	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/report/script"
	"github.com/hwprof/hwprof/symbolize/debuginfod"
)

// cmdScript prints every sample of a recording as `perf script` does
// (report/script: the default layout, --srcline, -F's branch stack or
// perf's fields). It reads the file in one pass (the engine's Visit:
// process model, unwinding) and prints as it reads, a window of samples at
// a time: each object is read once and each unique address of it
// symbolized once, objects in parallel, so memory grows with the
// addresses, not with the samples. Warnings and the
// exit status follow package diag's rule, as in every reading command:
// every sample that could be read is printed, and the status is 1 when
// records were lost.
func cmdScript(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("script", "[-i FILE] [--srcline] [-F FIELDS] [--symfs DIR] [--debug-dir DIR] [--offline]", stderr)
	input := fs.String("i", defaultInput, inputUsage)
	srcline := fs.Bool("srcline", false, "print the source file and line of every frame, inlined frames included")
	fields := fs.String("F", "", "`FIELDS`: brstack and/or brstacksym add the branch stack to the default output; "+
		"any of "+strings.Join(script.FieldNames(), ",")+" print only those, in perf script's layout")
	symfs := fs.String("symfs", "", "look for every object under `DIR`, as perf's --symfs")
	debugDir := fs.String("debug-dir", "", "a `DIR` of binaries and debug files named by build-id")
	offline := fs.Bool("offline", false, offlineUsage)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if !noArgs(fs, stderr) {
		return exitUsage
	}
	o, err := script.ParseFields(*fields)
	if err != nil {
		fmt.Fprintf(stderr, "hwprof script: %v\n", err)
		return exitUsage
	}
	o.Srcline = o.Srcline || *srcline
	// Function names alone come from the symbol tables; DWARF is read
	// only for source lines.
	eo := engine.Options{SymFS: *symfs, Debuginfod: debuginfod.FromEnv(*offline)}
	if *debugDir != "" {
		eo.DebugDirs = []string{*debugDir}
	}
	eo.DebugDirs = withBuildIDCache(eo.DebugDirs)
	r, err := openRecording(*input)
	if err != nil {
		return fail(stderr, err)
	}
	defer r.Close()
	eng := engine.New(r, eo)
	defer eng.Close() // removes the files the engine wrote
	p := script.New(r, eng.ScriptView(), o, stdout)
	var log diag.Log
	eng.Visit(p.Add) // an error that stops reading is in the log: the samples before it are printed
	eng.Diagnose(&log)
	notes, err := p.Finish()
	for _, n := range notes {
		log.Note(n)
	}
	if err != nil {
		log.Print(stderr)
		return fail(stderr, err)
	}
	return log.Print(stderr)
}
