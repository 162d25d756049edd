package main

import (
	"fmt"
	"io"

	"github.com/hwprof/hwprof/internal/diag"
	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report"
	"github.com/hwprof/hwprof/report/pprof"
)

// isPProf says whether a --format writes pprof (and so needs source
// positions: start lines, inlined frames).
func isPProf(format string) bool { return format == "pprof" || format == "pgo" }

// pprofOptions are the options of a pprof (pgo: for go build -pgo) of p
// with --pgo-weight w: without w, calls when p counts them, else time. A
// nil p only checks w.
func pprofOptions(p *profile.Profile, pgo bool, w string) (pprof.Options, error) {
	o := pprof.Options{PGO: pgo}
	if w != "" {
		weight, err := pprof.ParseWeight(w)
		if err != nil {
			return o, fmt.Errorf("--pgo-weight: %w", err)
		}
		o.Weight = weight
		return o, nil
	}
	if p != nil && p.HasCalls && p.Map.Totals().Calls > 0 {
		o.Weight = pprof.Calls
	}
	return o, nil
}

// writePProf writes p as pprof (or for go build -pgo), with a warning on
// stderr for each kind of item it had to repair (a function without a
// name): one odd item never costs the profile.
func writePProf(w io.Writer, p *profile.Profile, pgo bool, weight string, defType string, stderr io.Writer) error {
	o, err := pprofOptions(p, pgo, weight)
	if err != nil {
		return err
	}
	o.DefaultType = defType
	o.Warn = func(msg string) { fmt.Fprintf(stderr, "hwprof: warning: %s\n", msg) }
	return report.WritePProf(w, p, o)
}

// cmdMerge merges recordings into one pprof profile, for a
// continuous-profiling server or go build -pgo.
func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("merge", "-o FILE.pb.gz [--pgo] [--pgo-weight calls|time] [--symfs DIR] [--debug-dir DIR] RECORDING...", stderr)
	out := fs.String("o", "", "write the merged pprof profile to `FILE` (an existing regular file becomes FILE.old)")
	pgo := fs.Bool("pgo", false, "write a profile for go build -pgo")
	weight := fs.String("pgo-weight", "", "what call edges weigh, `calls` or time (default: calls when the source counts them)")
	symfs := fs.String("symfs", "", "look for every object under `DIR`, as perf's --symfs")
	debugDir := fs.String("debug-dir", "", "a `DIR` of binaries and debug files named by build-id")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "hwprof merge: %s\n", msg)
		return exitUsage
	}
	switch {
	case *out == "":
		return usage("-o FILE is required (the merged pprof profile)")
	case fs.NArg() == 0:
		return usage("no recordings to merge")
	}
	if _, err := pprofOptions(nil, *pgo, *weight); err != nil {
		return usage(err.Error())
	}
	if _, err := output.Check(*out); *out != output.Stdout && err != nil {
		return fail(stderr, err)
	}
	o := engine.LoadOptions{SymFS: *symfs, SiteLines: true}
	if *debugDir != "" {
		o.DebugDirs = []string{*debugDir}
	}
	p, err := engine.LoadAll(fs.Args(), o)
	if p == nil {
		return fail(stderr, err)
	}
	// err, if any, stopped reading: it is among the warnings, and the
	// profile is incomplete
	status := diag.Print(stderr, p.Warnings, err != nil || p.Recording.Incomplete)
	if err := writeReport(*out, stdout, func(w io.Writer) error { return writePProf(w, p, *pgo, *weight, "", stderr) }); err != nil {
		return fail(stderr, err)
	}
	return status
}
