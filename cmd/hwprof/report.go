package main

import (
	"bufio"
	"fmt"
	"github.com/hwprof/hwprof/internal/engine"
	"io"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/report"
)

// cmdReport reads a recording into a profile (engine.Load) and
// prints it: text by default, or JSON (docs/REPORT-JSON.md). A file that ends
// early or holds a corrupt record is reported up to there, with a warning
// and exit status 1.
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", "[-i FILE] [--format text|json] [--top N] [--contexts N] [--pid P[,P]] [--tid T[,T]] [--comm NAME[,NAME]] [--srcline] [--symfs DIR] [--debug-dir DIR] [-j N] [--dedup-ratio RR]", stderr)
	input := fs.String("i", defaultInput, inputUsage)
	format := fs.String("format", "text", "output `format`: text or json")
	top := fs.Int("top", 20, "show the `N` hottest functions and edges (0: all; json: all unless given)")
	contexts := fs.Int("contexts", 10, "show the `N` hottest calling contexts (0: all; json: all unless given)")
	pids := fs.String("pid", "", "keep only the samples of processes `P[,P...]`")
	tids := fs.String("tid", "", "keep only the samples of threads `T[,T...]`")
	comms := fs.String("comm", "", "keep only the samples of processes named `NAME[,NAME...]` (their command name, as perf report --comms)")
	srcline := fs.Bool("srcline", false, "give every call site its source file and line from DWARF (slower with large debug packages)")
	symfs := fs.String("symfs", "", "look for every object under `DIR`, as perf's --symfs")
	debugDir := fs.String("debug-dir", "", "a `DIR` of binaries and debug files named by build-id")
	workers := fs.Int("j", 0, "fold with `N` workers (0: one per CPU)")
	dedup := fs.Float64("dedup-ratio", 0, "fold only this share `RR` in (0,1] of stacks already seen, weighted 1/RR (0: all)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
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
	o := engine.LoadOptions{SymFS: *symfs, SiteLines: *srcline, Workers: *workers, DedupRatio: *dedup}
	var err error
	if o.PIDs, err = parseIDList("--pid", *pids); err == nil {
		o.TIDs, err = parseIDList("--tid", *tids)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hwprof report: %v\n", err)
		return exitUsage
	}
	if *comms != "" {
		o.Comms = strings.Split(*comms, ",")
	}
	// The JSON report is whole unless bounded on purpose: scripts read it.
	if given := setFlags(fs); *format == "json" {
		if !given["top"] {
			*top = 0
		}
		if !given["contexts"] {
			*contexts = 0
		}
	}
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

// allIfZero turns the flags' 0 (all) into package report's -1.
func allIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
