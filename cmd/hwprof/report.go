package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/hwprof/hwprof/internal/profile"
	"github.com/hwprof/hwprof/internal/report"
)

// cmdReport reads a recording into a profile (internal/profile.Load) and
// prints it: text by default, or JSON (REPORT-JSON.md). A file that ends
// early or holds a corrupt record is reported up to there, with a warning
// and exit status 1.
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", "[-i FILE] [--format text|json] [--top N] [--contexts N] [--srcline] [--symfs DIR] [--debug-dir DIR] [-j N] [--dedup-ratio RR]", stderr)
	input := fs.String("i", defaultInput, inputUsage)
	format := fs.String("format", "text", "output `format`: text or json")
	top := fs.Int("top", 20, "show the `N` hottest functions and edges (0: all)")
	contexts := fs.Int("contexts", 10, "show the `N` hottest calling contexts (0: all)")
	srcline := fs.Bool("srcline", false, "give every call site its source file and line from DWARF (slower with large debug packages)")
	symfs := fs.String("symfs", "", "look for every object under `DIR`, as perf's --symfs")
	debugDir := fs.String("debug-dir", "", "a `DIR` of binaries and debug files named by build-id")
	workers := fs.Int("j", 0, "fold with `N` workers (0: one per CPU)")
	dedup := fs.Float64("dedup-ratio", 0, "fold only this share `RR` in (0,1] of stacks already seen, weighted 1/RR (0: all)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hwprof report: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "hwprof report: unknown --format %q (text or json)\n", *format)
		return exitUsage
	}
	if *top < 0 || *contexts < 0 || *workers < 0 {
		fmt.Fprintln(stderr, "hwprof report: --top, --contexts and -j must not be negative")
		return exitUsage
	}
	if *dedup < 0 || *dedup > 1 {
		fmt.Fprintf(stderr, "hwprof report: --dedup-ratio %v is not in (0, 1]\n", *dedup)
		return exitUsage
	}
	o := profile.LoadOptions{SymFS: *symfs, SiteLines: *srcline, Workers: *workers, DedupRatio: *dedup}
	if *debugDir != "" {
		o.DebugDirs = []string{*debugDir}
	}
	p, err := loadProfile(*input, o)
	if p == nil {
		return fail(stderr, err)
	}
	status := 0
	if err != nil {
		fmt.Fprintf(stderr, "hwprof: warning: %v (reporting the %d samples read before it)\n", err, p.Recording.Samples)
		status = exitError
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(stderr, "hwprof: warning: %s\n", w)
	}
	w := bufio.NewWriterSize(stdout, 1<<16)
	ro := report.Options{Top: allIfZero(*top), Contexts: allIfZero(*contexts)}
	if *format == "json" {
		err = report.JSON(w, p, ro)
	} else {
		err = report.Text(w, p, ro)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fail(stderr, err)
	}
	return status
}

// allIfZero turns the flags' 0 (all) into internal/report's -1.
func allIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
